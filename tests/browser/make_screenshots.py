"""Screenshots of the main views at 1280x800 into docs/screenshots/ (overwritten).

Not collected by the normal browser session; run it on its own:

    .venv/bin/python -m pytest -m browser tests/browser/make_screenshots.py -q
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page, expect

from tests.live_server import ROOT

from .conftest import open_cluster
from .test_cluster_page import PASTED_POD, POD_KGC, card, create_in_editor, finish_cycle_of, palette_chip

OUT = ROOT / "docs" / "screenshots"

BIG_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: web
    image: nginx:1.27
    resources:
      requests: {cpu: 600m, memory: 1Gi}
"""


def shot(page: Page, name: str, scroll_to: str | None = None) -> Path:
    if scroll_to:
        page.locator(scroll_to).scroll_into_view_if_needed()
    else:
        page.evaluate("window.scrollTo(0, 0)")
    page.evaluate("document.querySelectorAll('#toasts .toast').forEach((t) => t.remove())")
    page.wait_for_timeout(250)  # let the frame batcher and transitions settle
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def many_nodes(count: int) -> str:
    """`count` nodes in three zones; every fifth is tainted, every seventh is small."""
    docs = []
    for i in range(4, count + 4):
        taints = "[{key: dedicated, value: batch, effect: NoSchedule}]" if i % 5 == 0 else "[]"
        cpu, memory = ("1", "2Gi") if i % 7 == 0 else ("4", "8Gi")
        docs.append(
            f"""apiVersion: v1
kind: Node
metadata: {{name: node{i:02d}, labels: {{kubernetes.io/hostname: node{i:02d}, zone: z{i % 3}}}}}
spec: {{unschedulable: {"true" if i % 11 == 0 else "false"}, taints: {taints}}}
status:
  allocatable: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}
  capacity: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}
"""
        )
    return "---\n".join(docs)


def test_screenshots(page: Page, context: BrowserContext, new_cluster: Any) -> None:
    # Board with a cycle: node01 rejected (its taint), a winner, the other node scored.
    api = new_cluster("demo")
    open_cluster(page, api.url)
    create_in_editor(page, BIG_POD, "default/web")
    expect(page.locator("#board .node-card.winner")).to_have_count(1)
    shot(page, "board-cycle")

    # Scores: Explain on a pasted pod (a what-if).
    page.locator("#editor textarea").fill(PASTED_POD)
    page.locator("[data-editor=explain]").click()
    finish_cycle_of(page, "what-if · default/what-if")
    expect(page.locator("[data-panel=scores] table.scores")).to_be_visible()
    shot(page, "scores", "#detail")

    # Why Pending: node02 tainted, a nodeSelector pod that only node02 could take.
    palette_chip(page, "gpu=true:NoSchedule").drag_to(card(page, "node02"))
    expect(card(page, "node02").locator("[data-chip=taint][data-key=gpu]")).to_be_visible()
    create_in_editor(page, POD_KGC, "default/pod-kgc")
    page.locator('.pending-lane [data-why="default/pod-kgc"]').click()
    expect(page.locator("[data-panel=why] .snippet").first).to_be_visible()
    shot(page, "why-pending", "#detail")

    # The follower view of the same cluster, following the presenter's selection.
    follower = open_cluster(context.new_page(), api.url + "?role=follower")
    page.locator('.pending-lane [data-why="default/pod-kgc"]').click()
    expect(follower.locator('#board .pod.selected[data-pod="default/pod-kgc"]')).to_be_visible()
    shot(follower, "follower")
    follower.close()

    # The node map: ~60 nodes, one cycle with rejected, scored and winning cells.
    big = new_cluster("demo")
    big.act({"action": "create", "yaml": many_nodes(57)})
    open_cluster(page, big.url)
    expect(page.locator("#board .map-canvas")).to_have_attribute("data-cells", "60")
    create_in_editor(page, BIG_POD, "default/web")
    expect(page.locator("#board .map-canvas[data-winner]")).not_to_have_attribute("data-winner", "")
    shot(page, "compact-board")


def test_screenshots_of_the_truthful_views(page: Page, browser: Any, new_cluster: Any) -> None:
    from .test_truth import PLAIN_POD, SSD_POD, pick_first_cycle_of, preempt_for_the_vip, without_deployment

    # Fixes verified by the scheduler, node by node.
    api = new_cluster("demo")
    api.act({"action": "taint", "node": "node02", "key": "gpu", "value": "true", "effect": "NoSchedule"})
    open_cluster(page, api.url)
    create_in_editor(page, SSD_POD, "default/wants-ssd")
    page.locator('.pending-lane [data-why="default/wants-ssd"]').click()
    expect(page.locator("[data-panel=why] .fix-node.verified").first).to_be_visible()
    shot(page, "fixes-verified", '[data-panel=why] .fix-node[data-fix-node="node02"]')

    # A node changed since the viewed cycle: out of date, re-explain in one click.
    api = new_cluster("demo")
    without_deployment(api)
    open_cluster(page, api.url)
    create_in_editor(page, PLAIN_POD, "default/plain")
    api.act(
        {"action": "taint", "node": "node01", "key": "qqq", "value": "value1", "effect": "NoSchedule", "remove": True}
    )
    expect(card(page, "node01").locator(".verdict-stale")).to_be_visible()
    shot(page, "stale-verdicts")

    # Preemption: the nominated node, the struck-through victim with its priority, the losing candidate.
    pre = new_cluster("preemption")
    preempt_for_the_vip(pre)
    open_cluster(page, pre.url)
    pick_first_cycle_of(page, "default/myapp-vip")
    page.locator("[data-player=end]").click()
    expect(page.locator("#board .node-card.nominated")).to_have_count(1)
    shot(page, "preemption")

    # The eviction countdown of a pod with tolerationSeconds.
    ne = new_cluster("taints-noexecute")
    open_cluster(page, ne.url)
    ne.act({"action": "lesson.next"})
    expect(card(page, "node01").locator(".countdown")).to_be_visible()
    shot(page, "eviction-countdown")

    # A 390 px phone: the board comes first.
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    shot(open_cluster(phone.new_page(), api.url), "phone")
    phone.close()


def test_screenshot_of_the_list_watch_flow(page: Page, new_cluster: Any, tmp_path: Path) -> None:
    from .test_list_watch import kubectl

    # At the classroom pace, `kubectl scale` reaches the deployment controller, which resizes the
    # ReplicaSet, whose controller creates the pods: one pod's creation is caught at its fan-out.
    api = new_cluster("demo")
    api.act({"action": "pace", "pace": "slow"})
    open_cluster(page, api.url)
    page.click("[data-tab=listwatch]")
    kubectl(api.server, api.slug, tmp_path, "scale", "deployment", "myapp", "--replicas=4")
    page.locator("svg.lw-diagram .lw-hop[data-kind=store]").click()
    expect(page.locator(".lw-object")).to_be_visible()
    # A change whose watchers reacted, caught while its event fans out to them.
    expect(page.locator("svg.lw-diagram .lw-controller.reacted").first).to_be_visible(timeout=60_000)
    page.evaluate("document.querySelectorAll('#toasts .toast').forEach((t) => t.remove())")
    page.locator("#detail").scroll_into_view_if_needed()
    page.screenshot(path=str(OUT / "list-watch.png"))


def test_screenshots_of_prediction_mode(browser: Any, new_cluster: Any) -> None:
    """A prediction round revealed: the presenter's tally and score, a follower's marked pick."""
    from .test_prediction import play_round

    presenter, followers = play_round(browser, new_cluster("demo"))
    expect(followers[1].locator("#prediction .predict-mark")).to_have_text("✗ wrong")
    expect(presenter.locator("#prediction .predict-score")).to_contain_text("1 of 3 right")
    shot(presenter, "prediction-presenter", "#prediction")
    shot(followers[1], "prediction-follower", "#prediction")


def test_screenshots_of_joining_a_class(browser: Any, new_cluster: Any) -> None:
    """The presenter's join dialog (code, address, QR code) at 1280x720, and the /join page."""
    api = new_cluster("taints-noschedule")
    presenter = open_cluster(
        browser.new_context(viewport={"width": 1280, "height": 720}).new_page(), api.url + "?present=1"
    )
    presenter.keyboard.press("j")
    expect(presenter.locator("#join-dialog")).to_be_visible()
    presenter.screenshot(path=str(OUT / "join-dialog.png"))
    student = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    student.goto(f"{api.server.url}/join")
    student.locator("input[name=code]").fill("abc")
    student.locator(".join-form button[type=submit]").click()
    expect(student.locator("#join-error")).to_be_visible()
    shot(student, "join-page")


def test_screenshot_of_the_lesson_catalog(page: Page, cv_server: Any) -> None:
    page.goto(cv_server.url + "/")
    page.locator("#catalog").scroll_into_view_if_needed()
    page.screenshot(path=str(OUT / "home-catalog.png"))


def test_screenshot_of_a_class_in_chinese(browser: Any, new_cluster: Any) -> None:
    api = new_cluster("taints-noschedule")
    page = browser.new_context(viewport={"width": 1280, "height": 720}, locale="zh-CN").new_page()
    open_cluster(page, api.url + "?present=1")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#lesson-rail .rail-after-text")).to_be_visible()
    page.screenshot(path=str(OUT / "presenter-zh.png"))
