"""Only the owner writes: the edit link (session), the owner token, and everyone else read-only —
on every path (pages, HTTP API, WebSocket); plus the per-connection rate limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from clusterviz.models import Cluster
from tests.app.conftest import node_yaml, pod_yaml


def _action(client: Client, slug: str, action: dict[str, Any], **headers: str) -> Any:
    return client.post(f"/api/clusters/{slug}/actions", json.dumps(action), content_type="application/json", **headers)


@pytest.mark.django_db
def test_http_actions_need_the_owner_token(make_cluster: Any) -> None:
    cluster = make_cluster("c1", node_yaml("n1"))
    anonymous = Client()
    refused = _action(anonymous, "c1", {"action": "cordon", "node": "n1"})
    assert refused.status_code == 403
    assert refused.json()["reason"] == "Forbidden" and "read-only" in refused.json()["message"]
    wrong = _action(anonymous, "c1", {"action": "cordon", "node": "n1"}, HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 403
    cluster.refresh_from_db()
    assert cluster.resource_version == 1
    ok = _action(
        anonymous, "c1", {"action": "cordon", "node": "n1"}, HTTP_AUTHORIZATION=f"Bearer {cluster.owner_token}"
    )
    assert ok.status_code == 200


@pytest.mark.django_db
def test_explain_and_reads_are_open_to_everyone(make_cluster: Any) -> None:
    make_cluster("c1", node_yaml("n1"))
    anonymous = Client()
    explained = _action(anonymous, "c1", {"action": "explain", "yaml": pod_yaml("p")})
    assert explained.status_code == 200 and explained.json()["explanation"]["scheduled"] is True
    for path in ("state", "export", "snapshot", "cycles"):
        assert anonymous.get(f"/api/clusters/c1/{path}").status_code == 200
    assert anonymous.post("/api/clusters/c1/import", b"x", content_type="application/yaml").status_code == 403


@pytest.mark.django_db
def test_the_edit_link_grants_this_browser_and_a_wrong_key_is_refused(make_cluster: Any) -> None:
    cluster = make_cluster("c1", node_yaml("n1"))
    browser = Client()
    page = browser.get("/clusters/c1/")
    assert b'data-can-write="false"' in page.content
    assert browser.get("/clusters/c1/?key=wrong").status_code == 403
    granted = browser.get(f"/clusters/c1/?key={cluster.owner_token}&tab=why")
    assert granted.status_code == 302 and granted["Location"] == "/clusters/c1/?tab=why"  # the key leaves the URL
    page = browser.get("/clusters/c1/")
    assert b'data-can-write="true"' in page.content
    assert _action(browser, "c1", {"action": "cordon", "node": "n1"}).status_code == 200
    assert _action(Client(), "c1", {"action": "uncordon", "node": "n1"}).status_code == 403


@pytest.mark.django_db
def test_creating_or_forking_a_cluster_makes_you_its_owner(make_cluster: Any) -> None:
    make_cluster("c1", node_yaml("n1"))
    student = Client()
    response = student.post("/clusters/c1/fork")
    assert response.status_code == 302
    fork_slug = response["Location"].strip("/").rsplit("/", 1)[1]
    assert fork_slug != "c1" and Cluster.objects.filter(slug=fork_slug).exists()
    assert _action(student, fork_slug, {"action": "cordon", "node": "n1"}).status_code == 200
    assert _action(student, "c1", {"action": "cordon", "node": "n1"}).status_code == 403
    teacher = Client()
    assert teacher.post("/clusters/new", {"slug": "class1"}).status_code == 302
    assert _action(teacher, "class1", {"action": "pace", "pace": "paused"}).status_code == 200


@pytest.mark.django_db(transaction=True)
async def test_websocket_actions_need_the_edit_link(make_cluster: Any, ws_connect: Any) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    follower = await ws_connect("c1", owner=False)
    assert (await follower.recv())["type"] == "snapshot"
    await follower.send({"action": "cordon", "node": "n1", "id": "a"})
    error = (await follower.until(lambda m: m.get("id") == "a"))[-1]
    assert (error["type"], error["reason"]) == ("error", "Forbidden")
    await follower.send({"action": "explain", "yaml": pod_yaml("p"), "id": "b"})
    assert (await follower.until(lambda m: m.get("id") == "b"))[-1]["type"] == "result"
    owner = await ws_connect("c1")
    assert (await owner.recv())["type"] == "snapshot"
    await owner.send({"action": "cordon", "node": "n1", "id": "c"})
    assert (await owner.until(lambda m: m.get("id") == "c"))[-1]["type"] == "result"


@pytest.mark.django_db(transaction=True)
async def test_websocket_rate_limits_explain(make_cluster: Any, ws_connect: Any, settings: Any) -> None:
    settings.CLUSTERVIZ_RATE_EXPLAINS = 3
    await sync_to_async(make_cluster)("c1", node_yaml("n1"))
    client = await ws_connect("c1", owner=False)
    assert (await client.recv())["type"] == "snapshot"
    replies = []
    for k in range(5):
        await client.send({"action": "explain", "yaml": pod_yaml("p"), "id": f"e{k}"})
        replies.append((await client.until(lambda m, k=k: m.get("id") == f"e{k}"))[-1])
    assert [r["type"] for r in replies] == ["result", "result", "result", "error", "error"]
    assert replies[-1]["reason"] == "TooManyRequests"
