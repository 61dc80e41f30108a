"""The transport in a real browser: a cluster whose state is well over 1 MiB opens on the server
`./dev run` starts (uvicorn); a YAML between 1 and 2 MiB goes through and one over
2 MiB is refused with its size; a change the stream cannot deliver shows a banner and the page
resyncs; the compact cycle form decodes to the full one."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.big_cluster import one_cycle, web_pod_yaml

from .conftest import LiveServer, load_lesson, make_big_cluster, open_cluster, running_server, set_editor_text

NODES = 400  # a state over 1 MiB (2.8 KB a node as the browser gets it)
POD = web_pod_yaml("100m")


def test_a_cluster_over_1_mib_opens_on_the_dev_server(page: Page, cv_server: LiveServer) -> None:
    api = make_big_cluster(cv_server, f"big-{os.getpid()}", NODES)
    state = api.state()
    assert len(json.dumps(state)) > 1024 * 1024
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    open_cluster(page, api.url)
    expect(page.locator("#board .node-count")).to_have_text(f"{NODES}/{NODES} nodes")
    expect(page.locator("#stream-banner")).to_be_hidden()
    assert sockets and all(f"resourceVersion={state['resourceVersion']}" in url for url in sockets)

    # A pasted YAML between 1 and 2 MiB (a pod and 1.5 MB of comments) is explained; one over is refused.
    padding = "".join(f"# {'x' * 97}\n" for _ in range(15_000))
    set_editor_text(page, POD + padding)
    page.locator("[data-editor=explain]").click(timeout=60_000)  # the editor numbers 15,000 lines first
    expect(page.locator("#toasts")).to_contain_text("what-if: Successfully assigned default/web", timeout=30_000)
    set_editor_text(page, POD + padding * 2)
    page.locator("[data-editor=explain]").click(timeout=60_000)
    # the editor refuses it as it arrives, keeps the last text, and stays refused until edited
    expect(page.locator("#editor .editor-error")).to_contain_text("too large (3.0 MB > 2 MiB)", timeout=30_000)
    expect(page.locator("#ws-state")).to_have_attribute("data-state", "open")
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]


@pytest.fixture
def small_frames_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose stream sends nothing over 32 KiB: an ordinary node change is then undeliverable."""
    with running_server(
        tmp_path_factory.mktemp("small-frames"), CLUSTERVIZ_STREAM_MESSAGE_BYTES=str(32 * 1024)
    ) as server:
        yield server


def test_an_undeliverable_change_shows_a_banner_and_the_page_resyncs(
    page: Page, small_frames_server: LiveServer
) -> None:
    api = load_lesson(small_frames_server, "demo", "small")
    open_cluster(page, api.url)
    expect(page.locator("#board .node-count")).to_have_text("3/3 nodes")
    note = "x" * 40_000
    api.act(
        {
            "action": "create",
            "yaml": json.dumps(
                {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big", "annotations": {"note": note}}}
            ),
        }
    )
    banner = page.locator("#stream-banner")
    expect(banner).to_be_visible()
    # the 40 kB note plus the labels and conditions the kubelet registers the node with
    expect(banner).to_contain_text(re.compile(r"is too large for the stream \(4\d kB > 32 KiB\)"))
    # The page fetched the state again over HTTP (the node is there) and the stream is live again.
    expect(page.locator("#board .node-count")).to_have_text("4/4 nodes")
    expect(page.locator("#ws-state")).to_have_attribute("data-state", "open")
    expect(banner).to_contain_text("resynced at rv")
    api.act({"action": "label", "node": "node01", "key": "after", "value": "resync"})
    expect(page.locator('#board article[data-node="node01"]')).to_contain_text("after=resync")
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]


def test_the_compact_cycle_decodes_to_the_full_form(page: Page, cv_server: LiveServer) -> None:
    events, names = one_cycle(120)
    from scheduler_core.framework.events import encode_cycle

    full = [event.to_dict(names) for event in events]
    compact = encode_cycle(events, names)
    page.goto(cv_server.url + "/")
    decoded: Any = page.evaluate(
        "async (compact) => (await import('/static/js/model/cycle_wire.js')).decodeEvents(compact)", compact
    )
    assert decoded == full
    assert any(len(v["reasons"]) == 2 for e in full if e.get("verdicts") for v in e["verdicts"].values())
