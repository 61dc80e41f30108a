"""One action pipeline (clusterviz/actions.py) behind HTTP and the WebSocket: the same refusals, with
the same messages, and the same rate limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient, Client

from clusterviz.models import Cluster

from .conftest import node_yaml, pod_yaml

SEED = node_yaml("n1")
# Inputs each path must refuse, and the reason; the message must be the same on both paths.
REFUSED = [
    pytest.param("[" * 50_000 + "]" * 50_000, "Invalid", id="deep-nesting"),
    pytest.param('{"action": "scale", "name": "w", "replicas": ' + "9" * 5000 + "}", "Invalid", id="long-integer"),
    pytest.param("{not json", "Invalid", id="not-json"),
    pytest.param("[1]", "Invalid", id="not-an-object"),
    pytest.param('{"action": "nope", "id": "x"}', "Invalid", id="unknown-action"),
    pytest.param('{"action": "cordon", "node": "ghost", "id": "x"}', "NotFound", id="no-such-node"),
    pytest.param('{"action": "create", "yaml": "kind: Pod\\nmetadata: {name: Bad_Name}"}', "Invalid", id="bad-yaml"),
    # an update that changes what may not change: kube-apiserver's 422 (clusterviz/update_validation.py)
    pytest.param(
        '{"action": "replace", "yaml": "apiVersion: v1\\nkind: Node\\nmetadata: {name: n1, uid: x}"}',
        "Invalid",
        id="immutable-uid",
    ),
    pytest.param(
        '{"action": "replace", "yaml": "apiVersion: v1\\nkind: Node\\nmetadata: {name: n9}"}',
        "NotFound",
        id="replace-missing",
    ),
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("frame", "reason"), REFUSED)
async def test_http_and_websocket_refuse_alike(
    make_cluster: Any, ws_connect: Any, async_client: AsyncClient, stop_runners: None, frame: str, reason: str
) -> None:
    await sync_to_async(make_cluster)("c1", SEED)
    rv = (await Cluster.objects.aget(slug="c1")).resource_version
    response = await async_client.post("/api/clusters/c1/actions", frame, content_type="application/json")
    status = response.json()
    assert response.status_code < 500 and (status["kind"], status["reason"]) == ("Status", reason)
    client = await ws_connect("c1")
    assert (await client.recv())["type"] == "snapshot"
    await client.communicator.send_to(text_data=frame)
    reply = (await client.until(lambda m: m.get("type") in ("error", "result"), timeout=3))[-1]
    assert (reply["type"], reply["reason"], reply["message"]) == ("error", reason, status["message"])
    assert (await Cluster.objects.aget(slug="c1")).resource_version == rv
    # The connection survived the refusal.
    await client.send({"action": "cordon", "node": "n1", "id": "after"})
    assert (await client.until(lambda m: m.get("id") == "after"))[-1]["type"] == "result"


@pytest.mark.django_db
def test_http_rate_limits_explain_per_client(make_cluster: Any, settings: Any) -> None:
    """Explain runs the whole scheduler: over HTTP it is limited as on the WebSocket (per client)."""
    settings.CLUSTERVIZ_RATE_EXPLAINS = 3
    make_cluster("c1", SEED)
    body = json.dumps({"action": "explain", "yaml": pod_yaml("p")})
    one, other = Client(REMOTE_ADDR="192.0.2.1"), Client(REMOTE_ADDR="192.0.2.2")
    codes = [one.post("/api/clusters/c1/actions", body, content_type="application/json") for _ in range(5)]
    assert [r.status_code for r in codes] == [200, 200, 200, 429, 429]
    assert codes[-1].json()["reason"] == "TooManyRequests"
    assert codes[-1].json()["message"] == "too many explain actions: slow down"
    assert codes[-1]["Retry-After"] == "10"
    # Another client is not held up by the first one.
    assert other.post("/api/clusters/c1/actions", body, content_type="application/json").status_code == 200


@pytest.mark.django_db
def test_http_rate_limits_writes(make_cluster: Any, settings: Any, client: Client) -> None:
    settings.CLUSTERVIZ_RATE_ACTIONS = 2
    make_cluster("c1", SEED)
    codes = [
        client.post(
            "/api/clusters/c1/actions", {"action": a, "node": "n1"}, content_type="application/json"
        ).status_code
        for a in ("cordon", "uncordon", "cordon")
    ]
    assert codes == [200, 200, 429]
    assert Cluster.objects.get(slug="c1").resource_version == 3  # two writes, the third refused
