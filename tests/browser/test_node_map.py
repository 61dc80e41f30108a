"""The node map in a real browser: a 1,000-node cluster of realistic nodes is drawn on one canvas,
grouped by zone in natural order; search highlights; hover shows a node's card; a click (or the
keyboard) pins the node in the detail panel beside the board; a what-if's scoreboard shows the top
nodes and the reason tally first."""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.big_cluster import ZONES, node_body, web_pod_yaml

from .conftest import ClusterApi, LiveServer, make_big_cluster, open_cluster, set_editor_text

NODES = 1000
ZONE = "topology.kubernetes.io/zone"
POD = web_pod_yaml("6", "20Gi")


def natural_key(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


@pytest.fixture(scope="module")
def big(cv_server: LiveServer) -> ClusterApi:
    return make_big_cluster(cv_server, f"map-{os.getpid()}", NODES)


def layout(page: Page) -> dict[str, Any]:
    return dict(
        page.evaluate(
            """() => { const m = document.querySelector('#board .node-map')._nodeMap; const l = m.layout;
            return { names: l.names, xs: l.xs, ys: l.ys, cell: l.cell, columns: l.columns,
                     headers: l.headers.map((h) => h.title) }; }"""
        )
    )


def cell_point(page: Page, name: str) -> tuple[float, float]:
    """The page coordinates of a node's cell, scrolled into view."""
    grid = layout(page)
    i = grid["names"].index(name)
    top = page.evaluate(
        "(y) => { const s = document.querySelector('.map-scroll'); s.scrollTop = Math.max(0, y - 100);"
        " return s.scrollTop; }",
        grid["ys"][i],
    )
    box = page.locator(".map-canvas").bounding_box()
    assert box
    return box["x"] + grid["xs"][i] + grid["cell"] / 2, box["y"] + grid["ys"][i] - top + grid["cell"] / 2


def test_the_map_groups_by_zone_in_natural_order_without_an_element_per_node(page: Page, big: ClusterApi) -> None:
    open_cluster(page, big.url)
    canvas = page.locator("#board .map-canvas")
    expect(canvas).to_have_attribute("data-cells", str(NODES))
    expect(canvas).to_have_attribute("data-group-key", ZONE)
    expect(page.locator("#board .node-count")).to_have_text(f"{NODES}/{NODES} nodes")
    assert page.locator("#board [data-node]").count() == 0
    assert page.evaluate("document.querySelectorAll('#board *').length") < 200
    grid = layout(page)
    by_zone: dict[str, list[str]] = {zone: [] for zone in ZONES}
    for i in range(NODES):
        body = node_body(i)
        by_zone[body["metadata"]["labels"][ZONE]].append(body["metadata"]["name"])
    expected = [name for zone in ZONES for name in sorted(by_zone[zone], key=natural_key)]
    assert grid["names"] == expected
    assert grid["names"][:3] == ["ip-10-0-0-0.ec2.internal", "ip-10-0-0-3.ec2.internal", "ip-10-0-0-6.ec2.internal"]
    assert grid["headers"] == [f"{ZONE}={zone} · {len(by_zone[zone])}" for zone in ZONES]
    # The legend names every colour in words.
    expect(page.locator(".map-legend")).to_contain_text("✗ rejected")
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]


def test_search_highlights_by_name_label_or_taint(page: Page, big: ClusterApi) -> None:
    open_cluster(page, big.url)
    page.fill("#node-filter", "dedicated=gpu:NoSchedule")
    canvas = page.locator("#board .map-canvas")
    expect(canvas).to_have_attribute("data-matches", str(NODES // 10))
    expect(canvas).to_have_attribute("data-cells", str(NODES))  # highlighted, not filtered out
    expect(page.locator("#board .node-count")).to_have_text(
        f"{NODES}/{NODES} nodes · {NODES // 10} match “dedicated=gpu:NoSchedule”"
    )
    page.fill("#node-filter", "ip-10-0-1-7.")
    expect(canvas).to_have_attribute("data-matches", "1")
    page.fill("#node-filter", "m5.xlarge us-east-1a")
    wanted = sum(1 for i in range(NODES) if i % 3 == 0)  # zone and instance type both follow i % 3
    expect(canvas).to_have_attribute("data-matches", str(wanted))


def test_hover_shows_the_card_and_a_click_pins_it_beside_the_board(page: Page, big: ClusterApi) -> None:
    open_cluster(page, big.url)
    name = node_body(510)["metadata"]["name"]
    x, y = cell_point(page, name)
    page.mouse.move(x, y)
    tip = page.locator(".map-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text(name)
    expect(tip).to_contain_text(f"{ZONE}={ZONES[510 % 3]}")
    expect(tip).to_contain_text("dedicated=gpu:NoSchedule")
    page.mouse.click(x, y)
    pinned = page.locator("#pinned-node")
    expect(pinned).to_be_visible()
    expect(pinned.locator(".card-name")).to_contain_text(name)
    expect(pinned).to_contain_text("pods 0 / 58")
    assert f"node={name}" in page.url
    board = page.locator("#board").bounding_box()
    box = pinned.bounding_box()
    assert board and box
    assert box["x"] >= board["x"] + board["width"] - 1, (box, board)  # beside the board, not below it
    assert box["y"] >= 0 and box["y"] + 40 <= 800 and box["x"] + box["width"] <= 1280, box

    # The keyboard path: the map takes focus, arrows move the focus cell, Enter pins.
    page.locator(".map-scroll").focus()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    grid = layout(page)
    focused = grid["names"][1 + grid["columns"]]
    expect(page.locator(".map-canvas")).to_have_attribute("data-focus", focused)
    expect(tip).to_contain_text(focused)
    page.keyboard.press("Enter")
    expect(pinned.locator(".card-name")).to_contain_text(focused)
    pinned.locator(".unpin").click()
    expect(pinned).to_be_hidden()


def test_explain_shows_top_scores_and_the_reason_tally(page: Page, big: ClusterApi) -> None:
    explanation = big.act({"action": "explain", "yaml": POD})["explanation"]
    rejected = {n: v["filter"] for n, v in explanation["nodes"].items() if not v["feasible"]}
    tally = Counter((f["plugin"], ", ".join(f["reasons"])) for f in rejected.values())
    totals = sorted((v["total"] for v in explanation["nodes"].values() if v["total"] is not None), reverse=True)

    open_cluster(page, big.url)
    set_editor_text(page, POD)
    page.locator("[data-editor=explain]").click()
    expect(page.locator("#pipeline .cycle-info")).to_contain_text("what-if", timeout=60_000)
    page.locator("[data-player=end]").click()
    top = page.locator("#detail .top-scores tbody tr")
    expect(top).to_have_count(10)
    assert [int(t) for t in top.evaluate_all("rows => rows.map((r) => r.dataset.total)")] == totals[:10]
    expect(top.first.locator("th")).to_contain_text("★")
    rows = page.locator("#detail .reason-tally tbody tr")
    shown = rows.evaluate_all(
        "rows => rows.map((r) => [r.dataset.plugin, r.children[2].textContent, Number(r.dataset.count)])"
    )
    assert [(p, reason.removeprefix("✗ "), n) for p, reason, n in shown] == [
        (p, reason, n) for (p, reason), n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0][1]))
    ]
    # e.g.: the first three of each reason's nodes in natural order
    by_reason: dict[tuple[str, str], list[str]] = {}
    for name, f in rejected.items():
        by_reason.setdefault((f["plugin"], ", ".join(f["reasons"])), []).append(name)
    examples = rows.evaluate_all("rows => rows.map((r) => r.children[3].textContent)")
    assert examples == [
        ", ".join(sorted(by_reason[(p, reason.removeprefix("✗ "))], key=natural_key)[:3]) + (" …" if n > 3 else "")
        for p, reason, n in shown
    ]
    # Everything else on demand, a page at a time.
    assert page.locator("#detail .all-nodes tbody tr").count() == 0
    page.locator("#detail .scoreboard-all summary").click()
    expect(page.locator("#detail .all-nodes tbody tr")).to_have_count(50)
    expect(page.locator("#detail .page-info")).to_contain_text(f"page 1 of {NODES // 50}")
    page.locator("#detail .page-next").click()
    expect(page.locator("#detail .page-info")).to_contain_text(f"page 2 of {NODES // 50}")

    # On the map: the winner is ringed and can be jumped to; "only rejected" groups by reason.
    canvas = page.locator("#board .map-canvas")
    expect(canvas).to_have_attribute("data-winner", explanation["selectedNode"])
    page.locator(".map-winner").click()
    expect(canvas).to_have_attribute("data-focus", explanation["selectedNode"])
    page.locator(".map-rejected").click()
    expect(canvas).to_have_attribute("data-cells", str(len(rejected)))
    expect(canvas).to_have_attribute("data-group-key", "reason")
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]


def test_a_capacity_what_if_rings_the_nodes_that_took_pods_on_the_map(page: Page, big: ClusterApi) -> None:
    """fit on the 1,000-node map: the panel names the count, and the map rings each node that took a
    copy in green (the pixel beside its cell), the others not."""
    open_cluster(page, big.url)
    set_editor_text(page, POD)
    panel = page.locator("#capacity")
    panel.locator("summary").click()
    panel.locator(".capacity-query").select_option("fit")
    panel.locator("[data-field=source]").select_option("pod")
    panel.locator("[data-field=max]").fill("40")
    panel.locator(".capacity-form button[type=submit]").click()
    expect(panel.locator(".capacity-headline")).to_contain_text("40 more pods fit on")
    expect(panel.locator(".capacity-headline")).to_contain_text("(the limit was reached)")
    took = panel.locator(".capacity-moves tr.moved td:nth-child(3)").all_inner_texts()
    marked = sorted(set(took), key=natural_key)[0]
    unmarked = next(name for name in layout(page)["names"] if name not in set(took))

    def ring_pixel(name: str) -> list[int]:
        cell_point(page, name)  # scrolled into view
        page.wait_for_timeout(200)  # the next frame is drawn
        grid = layout(page)
        i = grid["names"].index(name)
        return list(
            page.evaluate(
                """([x, y]) => {
                  const c = document.querySelector('.map-canvas'), s = document.querySelector('.map-scroll');
                  const d = c._dpr || 1, ctx = c.getContext('2d');
                  const p = ctx.getImageData(Math.round((x - 2) * d), Math.round((y - s.scrollTop) * d), 1, 1).data;
                  return [p[0], p[1], p[2]]; }""",
                [grid["xs"][i], grid["ys"][i] + grid["cell"] / 2],
            )
        )

    assert ring_pixel(marked) == [0x1B, 0x7F, 0x3B]  # the green ring
    assert ring_pixel(unmarked) != [0x1B, 0x7F, 0x3B]
    assert not page._clusterviz_errors  # type: ignore[attr-defined]
