"""The transport that scales: the state over HTTP (gzip, ETag) and the stream resuming from it, bounded
stream messages (a snapshot in parts, compact cycles), and what the stream does with a message it
cannot deliver."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client, override_settings

from clusterviz.consumers import CLOSE_REFETCH
from clusterviz.publish import INLINE_CYCLE_BYTES, cycle_message
from scheduler_core.framework.events import encode_cycle
from tests.big_cluster import import_big_cluster, one_cycle

from .conftest import node_yaml, pod_yaml

MiB = 1024 * 1024


def get_state(client: Client, slug: str, **headers: str) -> Any:
    return client.get(f"/api/clusters/{slug}/state", headers={"accept-encoding": "gzip", **headers})


def state_of(response: Any) -> dict[str, Any]:
    body = response.content
    return json.loads(gzip.decompress(body) if response.get("Content-Encoding") == "gzip" else body)


@pytest.mark.django_db
def test_state_over_http_is_gzipped_and_revalidated_by_etag(client: Client, make_cluster: Any) -> None:
    cluster = make_cluster("big")
    import_big_cluster(cluster, 400)
    response = get_state(client, "big")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    state = state_of(response)
    assert len(state["objects"]["Node"]) == 400
    assert len(json.dumps(state)) > MiB, "a state over 1 MiB"
    node = state["objects"]["Node"][0]
    assert "images" not in node["status"] and node["status"]["allocatable"]["pods"] == "58", "no view reads images"
    assert get_state(client, "big").content == response.content
    plain = client.get("/api/clusters/big/state")
    assert "Content-Encoding" not in plain and json.loads(plain.content) == state
    assert len(response.content) < len(json.dumps(state)) / 5
    etag = response["ETag"]
    unchanged = get_state(client, "big", if_none_match=etag)
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    client.post(
        "/api/clusters/big/actions",
        {"action": "label", "node": "ip-10-0-0-1.ec2.internal", "key": "a", "value": "b"},
        content_type="application/json",
    )
    changed = get_state(client, "big", if_none_match=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert int(state_of(changed)["resourceVersion"]) == int(state["resourceVersion"]) + 1
    client.post("/api/clusters/big/actions", {"action": "pace", "pace": "paused"}, content_type="application/json")
    paced = get_state(client, "big", if_none_match=changed["ETag"])
    assert paced.status_code == 200, "a pace change (no resourceVersion) is a new state"
    assert state_of(paced)["cluster"]["pace"] == "paused"
    assert client.get("/api/clusters/nope/state").status_code == 404


async def test_stream_resumes_from_the_http_state_without_gap_or_duplicate(
    make_cluster: Any, ws_connect: Any, client: Client
) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1"), "paused")
    state = state_of(await sync_to_async(get_state)(client, "c1"))
    rv = int(state["resourceVersion"])
    # Changes between the HTTP state and the stream's connection.
    writer = await ws_connect("c1", query=f"resourceVersion={rv}")
    assert (await writer.recv())["type"] == "resumed"
    for name in ("n2", "n3"):
        await writer.send({"action": "create", "yaml": node_yaml(name)})
        await writer.until(lambda m: m.get("type") == "result")
    reader = await ws_connect("c1", query=f"resourceVersion={rv}")
    resumed = await reader.recv()
    assert resumed == {"type": "resumed", "from": str(rv), "count": 2}
    backlog = [await reader.recv() for _ in range(2)]
    assert [(m["object"]["metadata"]["name"], int(m["resourceVersion"])) for m in backlog] == [
        ("n2", rv + 1),
        ("n3", rv + 2),
    ]
    await writer.send({"action": "create", "yaml": node_yaml("n4")})
    live = await reader.until(lambda m: m.get("type") == "watch")
    assert [(m["object"]["metadata"]["name"], int(m["resourceVersion"])) for m in live] == [("n4", rv + 3)]
    assert await reader.quiet(idle=0.3) == [], "no duplicate after the backlog"


async def test_large_snapshot_comes_in_bounded_parts(make_cluster: Any, ws_connect: Any, client: Client) -> None:
    cluster = await sync_to_async(make_cluster)("big", "", "paused")
    await sync_to_async(import_big_cluster)(cluster, 150)
    expected = state_of(await sync_to_async(get_state)(client, "big"))
    reader = await ws_connect("big")
    first = await reader.communicator.receive_from(timeout=5)
    parts = [first]
    total = json.loads(first)["parts"]
    assert total > 1
    while len(parts) < total:
        parts.append(await reader.communicator.receive_from(timeout=5))
    assert max(len(text) for text in parts) <= 256 * 1024 + 4096
    messages = [json.loads(text) for text in parts]
    assert [m["type"] for m in messages] == ["snapshot"] + ["snapshot.part"] * (total - 1)
    assert [m["part"] for m in messages] == list(range(1, total + 1))
    assert {m["resourceVersion"] for m in messages} == {expected["resourceVersion"]}
    nodes = [node for m in messages for node in m["objects"].get("Node", [])]
    assert nodes == expected["objects"]["Node"]


def test_a_5000_node_cycle_streams_as_a_bounded_summary() -> None:
    events, names = one_cycle(5000)
    full = json.dumps([event.to_dict(names) for event in events])
    compact = encode_cycle(events, names)
    summary = {"cycle": 1, "pod": "default/web", "scheduled": True, "node": names[1], "message": "ok"}
    message = json.dumps(cycle_message(summary, compact))
    assert len(message) < 2048, "the stream carries the summary only"
    assert json.loads(message)["events"] is None
    fetched = json.dumps(compact)  # what GET …/cycles/<n> returns
    assert len(fetched) < len(full) / 4
    assert len(fetched) < MiB
    # Successes are implied: no Filter event names a node that passed.
    taints = next(e for e in compact if e.get("plugin") == "TaintToleration" and e.get("point") == "Filter")
    failed = taints["verdicts"]["$failed"]
    assert sum(len(nodes) for nodes in failed.values()) == 500  # every tenth node is tainted
    small = cycle_message(summary, compact[1:4])
    assert small["events"] == compact[1:4] and len(json.dumps(small)) <= INLINE_CYCLE_BYTES + 1024


@override_settings(CLUSTERVIZ_STREAM_MESSAGE_BYTES=32 * 1024)
async def test_an_answer_too_large_for_the_stream_is_a_too_large_error(make_cluster: Any, ws_connect: Any) -> None:
    nodes = "---\n".join(node_yaml(f"n{i}") for i in range(40))
    await sync_to_async(make_cluster)("c1", nodes, "paused")
    reader = await ws_connect("c1")
    assert (await reader.recv())["type"] == "snapshot"
    await reader.send({"action": "explain", "yaml": pod_yaml("p"), "id": "x"})
    answer = await reader.until(lambda m: m.get("id") == "x")
    assert answer[-1]["type"] == "error" and answer[-1]["reason"] == "TooLarge"
    assert "the answer is too large for the stream (" in answer[-1]["message"]
    assert answer[-1]["message"].endswith(" > 32 KiB)")
    await reader.send({"action": "view", "tab": "why", "id": "v"})
    assert (await reader.until(lambda m: m.get("id") == "v"))[-1]["type"] == "result", "the stream goes on"


@override_settings(CLUSTERVIZ_STREAM_MESSAGE_BYTES=32 * 1024)
async def test_a_change_too_large_for_the_stream_makes_the_client_refetch(make_cluster: Any, ws_connect: Any) -> None:
    await sync_to_async(make_cluster)("c1", node_yaml("n1"), "paused")
    reader = await ws_connect("c1")
    snapshot = await reader.recv()
    writer = await ws_connect("c1", query=f"resourceVersion={snapshot['resourceVersion']}")
    await writer.recv()
    big = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "big", "annotations": {"note": "x" * 40_000}}}
    await writer.send({"action": "create", "yaml": json.dumps(big)})
    messages = await reader.until(lambda m: m.get("type") == "error")
    notice = messages[-1]
    assert notice["reason"] == "TooLarge" and notice["id"] is None
    # The node as stored: the 40 kB note plus the labels and conditions the kubelet registers it with.
    assert re.fullmatch(r"change 2 \(Node\) is too large for the stream \(4\d kB > 32 KiB\)", notice["message"])
    assert (await reader.communicator.receive_output(timeout=3))["code"] == CLOSE_REFETCH
    # Resuming from before the change would meet it again: the same refusal, before anything else.
    again = await ws_connect("c1", query=f"resourceVersion={snapshot['resourceVersion']}")
    assert (await again.recv())["type"] == "resumed"
    assert (await again.recv())["reason"] == "TooLarge"


@pytest.mark.django_db
def test_a_kept_cycle_is_served_compact_gzipped_and_revalidated(client: Client, make_cluster: Any) -> None:
    from clusterviz.controllers.scheduler import schedule_next

    cluster = make_cluster("c1", "---\n".join(node_yaml(f"n{i}") for i in range(3)) + "---\n" + pod_yaml("p"), "paused")
    assert schedule_next(cluster)
    response = client.get("/api/clusters/c1/cycles/1", headers={"accept-encoding": "gzip"})
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    cycle = state_of(response)
    assert (cycle["cycle"], cycle["pod"], cycle["scheduled"]) == (1, "default/p", True)
    assert cycle["events"][0]["nodeNames"] == ["n0", "n1", "n2"]
    again = client.get(
        "/api/clusters/c1/cycles/1", headers={"accept-encoding": "gzip", "if-none-match": response["ETag"]}
    )
    assert again.status_code == 304
    assert client.get("/api/clusters/c1/cycles/2").status_code == 404
