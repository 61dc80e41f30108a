"""Capacity what-ifs on the board in a real browser: the presenter drains a node, the answer names
where each evicted pod goes and why the rest stay Pending, the board marks the drained node and the
node that took its pod, a follower sees the same answer, the export downloads it, a bad query is
named in a toast, and nothing in the cluster changes."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from .conftest import ClusterApi, open_cluster

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations: [{key: qqq, operator: Exists}]  # node01's taint: web may go anywhere
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
"""


def web_nodes(api: ClusterApi) -> list[str]:
    return sorted(
        body["spec"]["nodeName"]
        for key, body in api.objects("Pod").items()
        if body["metadata"].get("labels", {}).get("app") == "web" and body["spec"].get("nodeName")
    )


def placement(api: ClusterApi) -> tuple[Any, ...]:
    """Where every pod runs and which nodes are cordoned: what a drain would change."""
    pods = sorted((key, body["spec"].get("nodeName")) for key, body in api.objects("Pod").items())
    nodes = sorted((name, bool(body["spec"].get("unschedulable"))) for name, body in api.objects("Node").items())
    return tuple(pods), tuple(nodes)


def run_drain(page: Page, nodes: str, *, force: bool = True) -> None:
    panel = page.locator("#capacity")
    if not panel.evaluate("(el) => el.open"):
        panel.locator("summary").click()
    panel.locator(".capacity-query").select_option("drain")
    panel.locator("[data-field=nodes]").fill(nodes)
    panel.locator("[data-field=ignoreDaemonsets]").check()
    if force:
        panel.locator("[data-field=force]").check()
    panel.locator(".capacity-form button[type=submit]").click()


def test_a_drain_what_if_is_drawn_on_the_board_for_presenter_and_follower(
    page: Page, browser: Browser, new_cluster: Any
) -> None:
    api = new_cluster("demo")
    api.act({"action": "create", "yaml": WEB})
    (drained,) = api.wait_for("the web pod to run", lambda: web_nodes(api))
    before = placement(api)
    open_cluster(page, api.url)
    follower = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    open_cluster(follower, api.url + "?role=follower")

    run_drain(page, drained)
    result = page.locator("#capacity .capacity-result")
    expect(result.locator(".capacity-headline")).to_contain_text("1 nodes drained:")
    expect(result.locator(".capacity-headline")).to_contain_text("1 rescheduled")
    moved = result.locator(".capacity-moves tr.moved")
    expect(moved).to_have_count(1)
    expect(moved.first).to_contain_text("default/web-")
    expect(moved.first).to_contain_text(drained)
    target = moved.first.locator("td").nth(2).inner_text()
    assert target and target != drained
    # the board: the drained node dashed red with its pods before → after, the target ringed green
    for viewer in (page, follower):
        card = viewer.locator(f"#board article[data-node='{drained}']")
        expect(card).to_have_class(re.compile(r"\bcapacity-drained\b"))
        expect(card.locator(".badge-capacity")).to_contain_text("what-if: drained")
        expect(viewer.locator(f"#board article[data-node='{target}'] .badge-capacity")).to_contain_text("what-if: +")
    expect(follower.locator("#capacity .capacity-headline")).to_have_text(
        result.locator(".capacity-headline").inner_text()
    )
    expect(follower.locator("#capacity .capacity-form")).to_have_count(0)  # a follower reads, asks nothing

    # every node drained: the evicted pods stay Pending, and the panel says why
    run_drain(page, "node01 node02 node03")
    expect(result.locator(".capacity-pending")).to_contain_text("Left Pending, and why")
    expect(result.locator(".capacity-pending .message").first).to_contain_text(
        "0/3 nodes are available: 3 node(s) were unschedulable."
    )
    expect(result.locator(".capacity-moves tr.left-pending").first).to_contain_text("Pending")
    expect(follower.locator("#capacity .capacity-pending")).to_contain_text("3 node(s) were unschedulable")

    with page.expect_download() as download:
        result.get_by_role("button", name="Export CSV").click()
    with open(download.value.path()) as exported:
        rows = exported.read().splitlines()
    assert rows[0] == "pod,from,to,scheduled,message" and any(",false," in row for row in rows[1:])

    # a query that names no node: the server's reason in a toast, the answer shown stays
    page.locator("#capacity .capacity-query").select_option("drain")
    page.locator("#capacity [data-field=nodes]").fill("")
    page.locator("#capacity [data-field=zone]").fill("mars")
    page.locator("#capacity .capacity-form button[type=submit]").click()
    expect(page.locator("#toasts")).to_contain_text("no node matches zone mars")
    expect(result.locator(".capacity-pending")).to_be_visible()

    # cleared: the marks go, for the follower too; the cluster never changed
    result.get_by_role("button", name="Clear").click()
    expect(page.locator("#board article .badge-capacity")).to_have_count(0)
    expect(follower.locator("#board article .badge-capacity")).to_have_count(0)
    assert placement(api) == before
    assert not page._clusterviz_errors and not follower._clusterviz_errors  # type: ignore[attr-defined]
