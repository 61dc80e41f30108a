"""A complete editor (issue 15): nodes from a template, delete, scale, undo/redo, the legend, the
home page, phone and projector layouts, large pastes. Each test gets a fresh cluster."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from .conftest import open_cluster
from .test_cluster_page import card, no_page_errors, pod_of

NODE_TEMPLATE = "Node (node04, 2 CPU, 4Gi)"


def test_home_page_says_what_this_is_and_the_demo_is_one_click_away(page: Page, cv_server: Any) -> None:
    page.goto(cv_server.url + "/")
    expect(page.locator("h1")).to_have_text("See the Kubernetes scheduler decide")
    expect(page.locator(".intro .lead").first).to_contain_text("kube-scheduler v1.34")
    page.locator("button", has_text="try the demo").click()
    page.wait_for_selector("#ws-state[data-state=open]")
    expect(page.locator("#board .node-grid > [data-node]")).to_have_count(3)
    expect(page.locator("[data-editor=create]")).to_be_visible()  # the visitor holds its edit link


def test_an_empty_cluster_gets_a_node_from_the_template_and_undo_brings_a_deleted_node_back(
    page: Page, cv_server: Any
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(cv_server.url + "/")
    page.locator("form.create input[name=slug]").fill(f"empty-{id(page) % 100000}")
    page.locator("form.create button").click()
    page.wait_for_selector("#ws-state[data-state=open]")
    page.locator("#editor select.templates").select_option(NODE_TEMPLATE)
    page.locator("[data-editor=create]").click()
    node = page.locator('#board .node-grid > [data-node="node04"]')
    expect(node).to_be_visible()
    expect(node.locator(".bar").first.locator(".bar-text")).to_have_text("0/2")

    page.on("dialog", lambda dialog: dialog.accept())
    node.locator("[data-act=delete-node]").click()
    expect(node).to_have_count(0)
    page.locator("#undo").click()
    expect(node).to_be_visible()
    page.locator("#redo").click()
    expect(node).to_have_count(0)
    assert errors == []


def test_scale_a_deployment_delete_a_pod_and_undo_redo(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    api.wait_for("3 replicas", lambda: len(api.objects("Pod")) == 3)
    page.locator("#board .node-grid [data-pod]").first.click()
    selection = page.locator("#board .selection")
    expect(selection.locator(".replicas")).to_have_text(" 3 replicas ")
    selection.locator("[aria-label='scale up']").click()
    expect(selection.locator(".replicas")).to_have_text(" 4 replicas ")
    api.wait_for("4 pods", lambda: len(api.objects("Pod")) == 4)
    expect(page.locator("#undo")).to_have_attribute("title", "undo: scale myapp to 4")
    page.locator("#undo").click()
    expect(selection.locator(".replicas")).to_have_text(" 3 replicas ")
    page.locator("#redo").click()
    expect(selection.locator(".replicas")).to_have_text(" 4 replicas ")
    assert api.objects("Deployment")["default/myapp"]["spec"]["replicas"] == 4

    # A pod of its own: delete it, undo brings it back.
    page.locator("#editor select.templates").select_option("big request (Pending)")
    page.locator("[data-editor=create]").click()
    pending = page.locator('.pending-lane [data-pod="default/pod-big"]')
    pending.click()
    selection.locator("[data-act=delete-pod]").click()
    expect(pending).to_have_count(0)
    api.wait_for("pod-big gone", lambda: pod_of(api, "default/pod-big") is None)
    page.locator("#undo").click()
    expect(pending).to_be_visible()
    no_page_errors(page)


def test_the_legend_explains_every_colour_and_symbol(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    page.locator("#board .legend summary").click()
    legend = page.locator("#board .legend")
    for symbol in ["✓", "✗", "★", "◌", "⟳", "NoSchedule", "PreferNoSchedule", "NoExecute", "◎", "⚔", "Bars"]:
        expect(legend).to_contain_text(symbol)
    # the hourglass and the timer are SVG icons (no font has U+29D7 or U+23F3 here), drawn in the text's colour
    for name in ("hourglass", "timer"):
        drawn = legend.locator(f".icon-{name}")
        expect(drawn).to_be_visible()
        assert f"icons/{name}.svg" in drawn.evaluate("el => getComputedStyle(el).maskImage")
        box = drawn.bounding_box()
        assert box and box["width"] > 8 and box["height"] > 8, box
        assert page.request.get(f"{api.server.url}/static/icons/{name}.svg").ok


def test_on_a_390px_phone_the_board_is_near_the_top_and_the_projector_type_is_large(
    browser: Browser, new_cluster: Any
) -> None:
    api = new_cluster("demo")
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    page = open_cluster(phone.new_page(), api.url)
    top = page.locator("#board").bounding_box()
    assert top is not None and top["y"] < 400, top
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1  # no sideways scrolling
    phone.close()
    projector = browser.new_context(viewport={"width": 1280, "height": 720})
    page = open_cluster(projector.new_page(), api.url + "?projector=1")
    size = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
    assert size >= 18
    expect(card(page, "node01")).to_be_in_viewport()
    projector.close()


def test_a_paste_over_2_mib_is_refused_in_the_browser_and_the_editor_stays_light(page: Page, new_cluster: Any) -> None:
    api = new_cluster("demo")
    open_cluster(page, api.url)
    big = "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\n" + "# padding padding padding padding\n" * 92_000
    assert 3.0e6 < len(big) < 3.2e6
    # A paste: the whole text arrives at once, with one input event.
    page.evaluate(
        """(text) => { const t = document.querySelector('#editor textarea'); t.value = text;
                       t.dispatchEvent(new Event('input', {bubbles: true})); }""",
        big,
    )
    error = page.locator("#editor .editor-error")
    expect(error).to_have_text(re.compile(r"^too large \(3\.1 MB > 2 MiB\).*not pasted$"))
    # The editor keeps its last text (light to type in), nothing was sent, the stream is still open.
    assert (
        page.locator("#editor textarea")
        .input_value()
        .startswith("apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-kgc")
    )
    assert page.locator("#editor .gutter .line").count() < 50
    expect(page.locator("#ws-state")).to_have_attribute("data-state", "open")
    assert pod_of(api, "default/huge") is None
    page.locator("#editor textarea").fill("apiVersion: v1\nkind: Pod\n")
    expect(error).to_be_hidden()
    no_page_errors(page)
