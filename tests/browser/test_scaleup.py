"""A scale-up at the instant pace in a real browser: the controllers act in bulk, the stream carries
`watch.batch` messages, and the node map of a 200-node cluster counts every new replica, as the store
has them."""

from __future__ import annotations

import os

from playwright.sync_api import Page

from tests.big_cluster import SCALE_DEPLOYMENT

from .conftest import LiveServer, make_big_cluster, open_cluster

REPLICAS = 120


def pods_counted(page: Page) -> int | None:
    """The pods the node map counts (coloured by pod count), as the page's model has them."""
    return page.evaluate("() => (window.__nodeMap ? window.__nodeMap.podsCounted : null) ?? null")


def test_a_scale_up_streams_in_batches_and_the_map_counts_every_replica(page: Page, cv_server: LiveServer) -> None:
    api = make_big_cluster(cv_server, f"scale-{os.getpid()}", 200)
    received: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.append(str(payload)[:60])))
    open_cluster(page, api.url)
    page.select_option(".map-colour", "pods")
    before = api.wait_for("the map's pod count", lambda: pods_counted(page) is not None and [pods_counted(page)])[0]
    api.act({"action": "create", "yaml": SCALE_DEPLOYMENT})
    api.act({"action": "scale", "name": "scale-web", "replicas": REPLICAS})
    api.wait_for("the map to count every replica", lambda: pods_counted(page) >= before + REPLICAS, timeout=120)

    def replicas_running() -> list[dict]:
        pods = [
            body
            for body in api.objects("Pod").values()
            if body["metadata"].get("labels", {}).get("app") == "scale-web"
            and body["spec"].get("nodeName")
            and body.get("status", {}).get("phase") == "Running"
        ]
        return pods if len(pods) == REPLICAS else []

    api.wait_for(f"{REPLICAS} replicas running", replicas_running, timeout=60)
    assert api.wait_for("the map's count to settle", lambda: pods_counted(page) == before + REPLICAS)
    assert any('"watch.batch"' in frame for frame in received), "the scale-up came as single changes only"
    assert page._clusterviz_errors == []  # type: ignore[attr-defined]
