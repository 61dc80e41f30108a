"""Fault tolerance, proven with real processes and real signals.

- SIGKILL a server in the middle of a scheduling storm and of a Deployment scale-up: after a restart
  on the same database the store is consistent (checked in SQLite directly and through the state
  API) and the controllers finish the work.
- Hang (SIGSTOP) then restart redis-server under load, with two server processes sharing it and
  clients on both: writes never wait for it, every client ends with exactly the changes it missed
  (it even gets them during the outage, from the watch log), and the control loop hears the other
  process again.
- A browser that stops reading slows nobody down and cannot grow the server: it is closed for a
  resync (code 4429) and gets exactly what it missed when it resumes.

The first tests check the stream's own guarantees in-process (in-memory channel layer); the others
run servers (daphne, uvicorn), redis-server and SQLite files, and stop every process at teardown.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import sqlite3
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from .conftest import ORIGIN, node_yaml, pod_yaml
from .servers import (
    _NO_PROXY,
    Process,
    Processes,
    Stream,
    _gone,
    http_json,
    prepare_cluster,
    server_env,
    start_redis,
    start_server,
    start_servers,
    wait_for,
)

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ the stream's guarantees, in-process


def _watch_rvs(messages: list[dict[str, Any]]) -> list[int]:
    return [int(m["resourceVersion"]) for m in messages if m.get("type") == "watch"]


@pytest.fixture
def lossy_layer(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """The channel layer loses the watch messages of the resourceVersions put in the returned set."""
    from clusterviz import publish, store

    lost: set[int] = set()

    def publish_change(cluster_id: int, change: dict[str, Any]) -> None:
        if int(change["resourceVersion"]) not in lost:
            publish.publish_change(cluster_id, change)

    monkeypatch.setattr(store, "publish_change", publish_change)
    return lost


@pytest.mark.django_db(transaction=True)
async def test_a_gap_in_the_stream_is_filled_from_the_watch_log(
    make_cluster: Any, ws_connect: Any, lossy_layer: set[int]
) -> None:
    from clusterviz import services

    cluster = await sync_to_async(make_cluster)("gap", node_yaml("n1"))
    client = await ws_connect("gap")
    base = int((await client.recv())["resourceVersion"])
    lossy_layer.update({base + 2, base + 3})  # Redis restarting, a full channel...
    for value in "abcd":
        await sync_to_async(services.set_label)(cluster, "n1", "k", value, "kubectl")
    seen = await client.until(lambda m: m.get("resourceVersion") == str(base + 4))
    assert _watch_rvs(seen) == [base + 1, base + 2, base + 3, base + 4]
    assert [m["object"]["metadata"]["labels"]["k"] for m in seen] == list("abcd")
    assert {m["component"] for m in seen} == {"kubectl"}
    assert await client.nothing()


@pytest.mark.django_db(transaction=True)
async def test_out_of_order_publishes_reach_the_client_in_order(make_cluster: Any, ws_connect: Any) -> None:
    """Two writers commit N+1 and N+2 and publish them in the opposite order: the client still gets both."""
    from clusterviz import publish, services, store

    cluster = await sync_to_async(make_cluster)("order", node_yaml("n1"))
    client = await ws_connect("order")
    base = int((await client.recv())["resourceVersion"])
    held: list[dict[str, Any]] = []
    original = store.publish_change
    store.publish_change = lambda cluster_id, change: held.append(change)  # type: ignore[assignment]
    try:
        for value in "ab":
            await sync_to_async(services.set_label)(cluster, "n1", "k", value, "kubectl")
    finally:
        store.publish_change = original  # type: ignore[assignment]
    for change in reversed(held):
        await sync_to_async(publish.publish_change)(cluster.pk, change)
    seen = await client.until(lambda m: m.get("resourceVersion") == str(base + 2))
    assert _watch_rvs(seen) == [base + 1, base + 2]
    assert await client.nothing()  # the late N+1 is not sent twice


@pytest.mark.django_db(transaction=True)
async def test_an_idle_stream_catches_up_on_its_heartbeat(
    make_cluster: Any, ws_connect: Any, lossy_layer: set[int], settings: Any
) -> None:
    """The last changes are lost and nothing follows them: the heartbeat finds them in the log."""
    from clusterviz import services

    settings.CLUSTERVIZ_STREAM_HEARTBEAT_SECONDS = 0.2
    cluster = await sync_to_async(make_cluster)("idle", node_yaml("n1"))
    client = await ws_connect("idle")
    base = int((await client.recv())["resourceVersion"])
    lossy_layer.update({base + 1, base + 2})
    started = time.monotonic()
    for value in "ab":
        await sync_to_async(services.set_label)(cluster, "n1", "k", value, "kubectl")
    seen = await client.until(lambda m: m.get("resourceVersion") == str(base + 2), timeout=3)
    assert _watch_rvs(seen) == [base + 1, base + 2]
    assert time.monotonic() - started < 1.5


@pytest.mark.django_db(transaction=True)
async def test_a_stuck_client_is_closed_for_a_resync_and_nobody_waits_for_it(
    make_cluster: Any, ws_connect: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that takes nothing (its `send` blocks, as uvicorn's does when the socket is full):
    its outbox overflows, it is closed with 4429 once it reads again, the others get everything,
    and the client's resume gives it exactly what it missed."""
    from clusterviz import consumers, services
    from clusterviz.asgi import application

    settings.CLUSTERVIZ_STREAM_BACKLOG_BYTES = 5_000
    monkeypatch.setattr(consumers, "CLOSE_WAIT_SECONDS", 3.0)
    cluster = await sync_to_async(make_cluster)("stuck", node_yaml("n1"))
    reading = asyncio.Event()
    reading.set()
    blocked: list[str] = []

    async def stuck_app(scope: Any, receive: Any, send: Any) -> None:
        async def gated_send(message: dict[str, Any]) -> None:
            if not reading.is_set():
                blocked.append(message["type"])
                await reading.wait()
            await send(message)

        await application(scope, receive, gated_send)

    stuck = WebsocketCommunicator(stuck_app, "/ws/clusters/stuck/", headers=ORIGIN)
    try:
        assert (await stuck.connect(timeout=5))[0]
        base = int((await stuck.receive_json_from(timeout=3))["resourceVersion"])
        normal = await ws_connect("stuck")
        await normal.recv()
        reading.clear()  # the browser stops reading
        for i in range(30):  # ~0.6 kB per change: 30 of them overflow 5 kB
            await sync_to_async(services.set_label)(cluster, "n1", "k", f"v{i}", "kubectl")
        seen = await normal.until(lambda m: m.get("resourceVersion") == str(base + 30), timeout=5)
        assert _watch_rvs(seen) == list(range(base + 1, base + 31)), "the others get everything, at once"
        for _ in range(100):  # the consumer gives up on the client: it waits to send the close frame only
            if blocked[-1:] == ["websocket.close"]:
                break
            await asyncio.sleep(0.02)
        assert blocked == ["websocket.send", "websocket.close"], blocked
        reading.set()  # it reads again
        output = [await stuck.receive_output(timeout=3)]
        while output[-1]["type"] == "websocket.send":
            output.append(await stuck.receive_output(timeout=3))
        assert output[-1] == {"type": "websocket.close", "code": 4429, "reason": "resync"}
        got = [json.loads(m["text"]) for m in output[:-1]]
        last = max([base, *_watch_rvs(got)])
        assert _watch_rvs(got) == list(range(base + 1, last + 1)), "what it got is a prefix, without a gap"
        resumed = await ws_connect("stuck", f"resourceVersion={last}")
        header = await resumed.recv()
        assert header == {"type": "resumed", "from": str(last), "count": base + 30 - last}
        backlog = [await resumed.recv() for _ in range(base + 30 - last)]
        assert _watch_rvs(backlog) == list(range(last + 1, base + 31))
    finally:
        reading.set()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await stuck.disconnect(timeout=2)


@pytest.mark.django_db(transaction=True)
async def test_the_daphne_buffer_probe_sees_through_the_asgi_stack(
    make_cluster: Any, ws_connect: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """daphne gives no backpressure; the stream reads its Twisted transport's buffer instead, found
    behind `partial(Server.handle_reply, protocol)` and whatever middleware wraps `send` (sessions)."""
    import functools
    from types import SimpleNamespace

    from clusterviz import consumers
    from clusterviz.asgi import application

    await sync_to_async(make_cluster)("probe", node_yaml("n1"))
    transport = SimpleNamespace(dataBuffer=b"x" * 1000, offset=100, _tempDataLen=20)
    found: list[Any] = []
    original = consumers._transport_of
    monkeypatch.setattr(consumers, "_transport_of", lambda send: found.append(original(send)) or found[-1])

    async def daphne_like(scope: Any, receive: Any, send: Any) -> None:
        async def handle_reply(protocol: Any, message: dict[str, Any]) -> None:
            await send(message)

        await application(scope, receive, functools.partial(handle_reply, SimpleNamespace(transport=transport)))

    communicator = WebsocketCommunicator(daphne_like, "/ws/clusters/probe/", headers=ORIGIN)
    try:
        assert (await communicator.connect(timeout=5))[0]
        assert (await communicator.receive_json_from(timeout=3))["type"] == "snapshot"
        assert found == [transport]
        assert consumers._server_backlog(transport) == 920
    finally:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await communicator.disconnect(timeout=2)


# ------------------------------------------------------------------ real processes: helpers


@dataclass
class StoreCheck:
    """What `check_store` found (after asserting the invariants)."""

    rv: int
    pods: dict[str, dict[str, Any]]
    nodes: set[str]
    replica_sets: dict[str, dict[str, Any]]
    deployments: dict[str, dict[str, Any]]
    changes: list[tuple[int, str, str, str]] = field(default_factory=list)  # (rv, event, kind, name)

    @property
    def bound(self) -> int:
        return sum(1 for pod in self.pods.values() if pod["spec"].get("nodeName"))

    @property
    def running(self) -> int:
        return sum(1 for pod in self.pods.values() if pod.get("status", {}).get("phase") == "Running")


def check_store(db: Path, slug: str) -> StoreCheck:
    """Assert the store's invariants straight from the SQLite file, in one read transaction:
    the watch log holds every resourceVersion 1..cluster's exactly once; replaying it gives the
    objects table (bodies and versions); no object is ahead of the cluster; uids are unique; every
    bound pod is on an existing node, was bound once and never moved, and has exactly one Scheduled
    event and one successful scheduling cycle, on that node."""
    connection = sqlite3.connect(db, timeout=20, isolation_level=None)
    try:
        connection.execute("begin")
        cluster_id, rv = connection.execute(
            "select id, resource_version from clusterviz_cluster where slug = ?", (slug,)
        ).fetchone()
        rows = connection.execute(
            "select kind, namespace, name, uid, resource_version, body, node_name"
            " from clusterviz_kubeobject where cluster_id = ?",
            (cluster_id,),
        ).fetchall()
        changes = connection.execute(
            "select resource_version, type, kind, namespace, name, body, component from clusterviz_change"
            " where cluster_id = ? order by resource_version, id",
            (cluster_id,),
        ).fetchall()
        cycles = connection.execute(
            "select number, pod, scheduled, node from clusterviz_schedulingcycle where cluster_id = ?",
            (cluster_id,),
        ).fetchall()
        connection.execute("commit")
    finally:
        connection.close()

    assert [change[0] for change in changes] == list(range(1, rv + 1)), "the watch log: every version once"
    replay: dict[tuple[str, str, str], tuple[int, dict[str, Any]]] = {}
    node_history: dict[str, list[str]] = defaultdict(list)  # pod uid → nodeName after each change
    for change_rv, event, kind, namespace, name, body_text, _component in changes:
        key, body = (kind, namespace, name), json.loads(body_text)
        assert body["metadata"]["resourceVersion"] == str(change_rv)
        if event == "ADDED":
            assert key not in replay, f"{key} added twice"
        else:
            assert key in replay, f"{event} of {key}, which does not exist"
            assert replay[key][1]["metadata"]["uid"] == body["metadata"]["uid"]
        if event == "DELETED":
            del replay[key]
        else:
            replay[key] = (change_rv, body)
        if kind == "Pod":
            node_history[body["metadata"]["uid"]].append(body["spec"].get("nodeName") or "")
    table = {(kind, namespace, name): (row_rv, json.loads(body)) for kind, namespace, name, _, row_rv, body, _ in rows}
    assert set(table) == set(replay), "the objects are what the watch log says"
    for key, (row_rv, body) in table.items():
        assert (row_rv, body) == replay[key], f"{key} differs from its last change"
        assert row_rv <= rv and int(body["metadata"]["resourceVersion"]) == row_rv
    uids = [row[3] for row in rows]
    assert len(uids) == len(set(uids)), "unique uids"

    by_kind: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for (kind, _namespace, name), (_, body) in table.items():
        by_kind[kind][name] = body
    nodes = set(by_kind["Node"])
    node_columns = {(row[1], row[2]): row[6] for row in rows if row[0] == "Pod"}
    scheduled_events: dict[str, list[int]] = defaultdict(list)  # pod uid → the counts of its Scheduled events
    for event in by_kind["Event"].values():
        if event["reason"] == "Scheduled":
            scheduled_events[event["involvedObject"]["uid"]].append(int(event["count"]))
    good_cycles = Counter((pod, node) for _number, pod, scheduled, node in cycles if scheduled)
    assert len({cycle[0] for cycle in cycles}) == len(cycles), "cycle numbers are unique"
    for name, pod in by_kind["Pod"].items():
        node, uid = pod["spec"].get("nodeName") or "", pod["metadata"]["uid"]
        assert node_columns[(pod["metadata"]["namespace"], name)] == node
        history = node_history[uid]
        first = next((i for i, value in enumerate(history) if value), len(history))
        assert all(value == node for value in history[first:]), f"{name} moved: {history}"
        key = f"{pod['metadata']['namespace']}/{name}"
        if node:
            assert node in nodes, f"{name} is bound to {node}, which does not exist"
            assert scheduled_events[uid] == [1], f"{name}: one Scheduled event, once"
            assert good_cycles[(key, node)] == 1, f"{name}: one successful cycle, on {node}"
        else:
            assert not scheduled_events[uid], f"{name} is unbound yet Scheduled"
            assert not any(pod_key == key for pod_key, _ in good_cycles)
    return StoreCheck(
        rv=rv,
        pods=by_kind["Pod"],
        nodes=nodes,
        replica_sets=by_kind["ReplicaSet"],
        deployments=by_kind["Deployment"],
        changes=[(c[0], c[1], c[2], c[4]) for c in changes],
    )


def check_state_api(server: Process, slug: str, db_check: StoreCheck | None = None) -> dict[str, Any]:
    """The same cluster through GET /state: names unique, nobody ahead of the cluster, pods on real
    nodes; equal to the database when the cluster is quiet."""
    status, state = http_json(f"{server.base_url}/api/clusters/{slug}/state")
    assert status == 200
    rv = int(state["resourceVersion"])
    for kind, objects in state["objects"].items():
        keys = [(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects]
        assert len(keys) == len(set(keys)), f"duplicate {kind} names"
        assert all(int(o["metadata"]["resourceVersion"]) <= rv for o in objects)
    nodes = {n["metadata"]["name"] for n in state["objects"].get("Node", [])}
    assert all(p["spec"]["nodeName"] in nodes for p in state["objects"]["Pod"] if p["spec"].get("nodeName"))
    if db_check is not None:
        assert rv == db_check.rv
        assert {p["metadata"]["name"]: p for p in state["objects"]["Pod"]} == db_check.pods
    return dict(state)


def act(server: Process, db: Path, slug: str, action: dict[str, Any]) -> tuple[int, Any]:
    """POST an action as the cluster's owner (its edit token, read from the database)."""
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as connection:
        row = connection.execute("select * from clusterviz_cluster where slug = ?", (slug,))
        columns = [column[0] for column in row.description]
        token = dict(zip(columns, row.fetchone(), strict=True)).get("owner_token", "")
    request = urllib.request.Request(
        f"{server.base_url}/api/clusters/{slug}/actions",
        data=json.dumps(action).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        method="POST",
    )
    try:
        with _NO_PROXY.open(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def count_pods(db: Path, slug: str, bound: bool = False) -> int:
    query = (
        "select count(*) from clusterviz_kubeobject o join clusterviz_cluster c on c.id = o.cluster_id"
        " where c.slug = ? and o.kind = 'Pod'" + (" and o.node_name != ''" if bound else "")
    )
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as connection:
        return int(connection.execute(query, (slug,)).fetchone()[0])


def running_pods(db: Path, slug: str) -> tuple[int, int, int]:
    """(pods, running pods, cluster resourceVersion), read from the database (cheap enough to poll)."""
    query = (
        "select count(*), coalesce(sum(json_extract(o.body, '$.status.phase') = 'Running'), 0), c.resource_version"
        " from clusterviz_cluster c left join clusterviz_kubeobject o on o.cluster_id = c.id and o.kind = 'Pod'"
        " where c.slug = ?"
    )
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as connection:
        pods, running, rv = connection.execute(query, (slug,)).fetchone()
    return int(pods), int(running), int(rv)


def wait_all_running(db: Path, slug: str, expected: int, timeout: float) -> float:
    """Until `expected` pods exist, all running, and the resourceVersion has stopped moving; returns
    how long it took."""
    started = time.monotonic()
    previous = None
    while time.monotonic() - started < timeout:
        pods, running, rv = running_pods(db, slug)
        if pods == running == expected:
            if previous == rv:
                return time.monotonic() - started
            previous = rv
        time.sleep(0.25)
    raise AssertionError(f"not all {expected} pods ran within {timeout}s: {running_pods(db, slug)}")


def nodes_yaml(count: int, cpu: str = "8") -> str:
    return "\n---\n".join(node_yaml(f"n{i}", cpu=cpu, memory="64Gi") for i in range(1, count + 1))


def kill_when(server: Process, ready: Callable[[], bool], timeout: float, what: str) -> float:
    """SIGKILL the server as soon as `ready()`; returns when (monotonic)."""
    wait_for(ready, timeout, what, interval=0.005)
    server.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    assert server.wait(timeout=10) == -signal.SIGKILL
    return killed


# ------------------------------------------------------------------ SIGKILL mid-work


def test_sigkill_in_a_scheduling_storm_then_restart(processes: Processes) -> None:
    """Killed twice while the scheduler works through 120 pending pods (instant pace: the loop is
    always inside some write). Each time the store is consistent and a resuming client gets exactly
    the watch log; a browser's connection restarts the loop, and every pod ends bound once, running."""
    db = processes.tmp / "db.sqlite3"
    # Batches of 4 pods a step (one transaction each): killed between and inside batches.
    env = server_env(str(db), CLUSTERVIZ_LEASE_SECONDS="1", CLUSTERVIZ_BATCH_PODS="4")
    pods = 120  # at 40, a quiet machine could bind them all before the second kill landed
    objects = nodes_yaml(4) + "".join(f"\n---\n{pod_yaml(f'p{i:03}')}" for i in range(pods))
    prepare_cluster(env, "storm", objects)
    seen_rv = pods + 4
    kills = []
    for bound_at_least in (6, 16):
        server = start_server(processes, "uvicorn", env)
        before = check_store(db, "storm")
        check_state_api(server, "storm", before)
        with Stream(server, "storm", f"resourceVersion={seen_rv}") as client:
            # The connection starts this server's loop (the killed server's lease expires first).
            header = client.recv()
            assert header == {"type": "resumed", "from": str(seen_rv), "count": before.rv - seen_rv}
            backlog = [client.recv() for _ in range(before.rv - seen_rv)]
            assert [_change_key(m) for m in backlog] == [c for c in before.changes if c[0] > seen_rv]
            kill_when(server, lambda n=bound_at_least: count_pods(db, "storm", bound=True) >= n, 30, "pods bound")
        at_kill = check_store(db, "storm")
        assert bound_at_least <= at_kill.bound < pods, f"killed mid-storm ({at_kill.bound} bound)"
        assert len(at_kill.pods) == pods
        kills.append(at_kill.bound)
        seen_rv = before.rv

    last = start_server(processes, "uvicorn", env)
    at_restart = check_store(db, "storm")
    check_state_api(last, "storm", at_restart)
    started = time.monotonic()
    with Stream(last, "storm") as client:  # a browser comes and goes: the loop it started carries on
        assert client.recv()["resourceVersion"] == str(at_restart.rv)
    wait_all_running(db, "storm", pods, timeout=30)
    took = time.monotonic() - started
    final = check_store(db, "storm")
    check_state_api(last, "storm", final)
    assert final.bound == final.running == pods
    print(f"\nstorm: killed at {kills} of {pods} bound; all running {took:.1f}s after the restart (rv {final.rv})")


def _change_key(message: dict[str, Any]) -> tuple[int, str, str, str]:
    return (int(message["resourceVersion"]), message["event"], message["kind"], message["object"]["metadata"]["name"])


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


def check_replicas(check: StoreCheck, replicas: int) -> None:
    """Every ReplicaSet has exactly spec.replicas live pods; the Deployment's one has `replicas`."""
    (deployment,) = check.deployments.values()
    assert deployment["spec"]["replicas"] == replicas
    owned: Counter[str] = Counter()
    for pod in check.pods.values():
        if not pod["metadata"].get("deletionTimestamp"):
            for ref in pod["metadata"].get("ownerReferences", []):
                owned[ref["uid"]] += 1
    for rs in check.replica_sets.values():
        assert owned[rs["metadata"]["uid"]] == rs["spec"]["replicas"], rs["metadata"]["name"]
    assert sum(rs["spec"]["replicas"] for rs in check.replica_sets.values()) == replicas
    assert len(check.pods) == replicas


def test_sigkill_during_a_deployment_scale_up_then_restart(processes: Processes) -> None:
    """Killed twice: at instant pace once the first slow-start batches exist, then at slow pace. Each
    time the store is consistent; an HTTP action (no browser) restarts the loop, and the ReplicaSet
    ends with exactly 240 pods, all running. (With 120 pods and the kill at 10, the last three bulk
    batches could all land while a loaded machine's poller waited; at 240 and 3, six are to come.)"""
    db = processes.tmp / "db.sqlite3"
    env = server_env(str(db), CLUSTERVIZ_LEASE_SECONDS="1")
    prepare_cluster(env, "scale", nodes_yaml(4) + "\n---\n" + DEPLOYMENT)
    replicas = 240
    first = start_server(processes, "uvicorn", env)
    scale = {"action": "scale", "name": "web", "replicas": replicas}
    assert act(first, db, "scale", scale)[0] == 200
    kill_when(first, lambda: count_pods(db, "scale") >= 3, 30, "3 pods created")
    at_kill = check_store(db, "scale")
    assert 3 <= len(at_kill.pods) < replicas, f"killed mid scale-up ({len(at_kill.pods)} pods)"
    (rs,) = at_kill.replica_sets.values()
    assert rs["spec"]["replicas"] == replicas

    # Restart at slow pace (a pace change is an action: it starts the loop), kill after a few actions.
    second = start_server(processes, "uvicorn", env)
    check_state_api(second, "scale", at_kill)
    slow = {"action": "pace", "pace": "slow", "delayMs": 50}
    assert act(second, db, "scale", slow)[0] == 200
    kill_when(second, lambda: count_pods(db, "scale") >= len(at_kill.pods) + 3, 30, "3 more pods at slow pace")
    again = check_store(db, "scale")
    assert len(again.pods) < replicas

    third = start_server(processes, "uvicorn", env)
    check_state_api(third, "scale", again)
    instant = {"action": "pace", "pace": "instant"}
    assert act(third, db, "scale", instant)[0] == 200
    took = wait_all_running(db, "scale", replicas, timeout=40)
    final = check_store(db, "scale")
    check_state_api(third, "scale", final)
    check_replicas(final, replicas)
    assert final.running == replicas
    (deployment,) = final.deployments.values()
    assert deployment["status"]["replicas"] == deployment["status"]["availableReplicas"] == replicas
    print(
        f"\nscale-up: killed at {len(at_kill.pods)} then {len(again.pods)} of {replicas} pods;"
        f" converged {took:.1f}s after the last restart, rv {final.rv}"
    )


# ------------------------------------------------------------------ Redis restart under load


class Follower:
    """A browser's stream as static/js/lib/socket.js keeps it: read all the time (a thread); after a
    drop, reconnect with ?resourceVersion=<the last one seen>. Records every watch version it got."""

    def __init__(self, server: Process, slug: str) -> None:
        self.server, self.slug = server, slug
        self.stream = Stream(server, slug)
        self.first = self.last = int(self.stream.recv()["resourceVersion"])
        self.rvs: list[int] = []
        self.arrived: dict[int, float] = {}
        self.drops = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                message = self.stream.recv(timeout=0.2)
            except TimeoutError:
                continue
            except Exception:  # the server closed it (or the connection broke)
                self.drops += 1
                self._reconnect()
                continue
            if message["type"] == "watch":
                rv = int(message["resourceVersion"])
                self.rvs.append(rv)
                self.arrived[rv] = time.monotonic()
                self.last = rv
            elif message["type"] == "resumed" and int(message["from"]) != self.last:
                self.errors.append(f"resumed from {message['from']}, asked for {self.last}")
            elif message["type"] == "snapshot":
                self.errors.append("a snapshot instead of a resume")

    def _reconnect(self) -> None:
        self.stream.close()
        delay = 0.1
        while not self._stop.is_set():
            try:
                self.stream = Stream(self.server, self.slug, f"resourceVersion={self.last}")
                return
            except Exception:
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def wait_for(self, rv: int, timeout: float) -> None:
        wait_for(lambda: self.last >= rv, timeout, f"a client of {self.server.name} to reach {rv} (at {self.last})")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.stream.close()


def _lease_pid(db: Path, slug: str) -> int:
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as connection:
        owner = connection.execute("select lease_owner from clusterviz_cluster where slug = ?", (slug,)).fetchone()[0]
    return int(owner.split("-")[0]) if owner else 0


def _redis_up(port: int | None) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port or 0), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def test_redis_restart_under_load(processes: Processes) -> None:
    """daphne (A) and uvicorn (B) share SQLite and Redis, two browsers on each, labels and pods being
    created through both. Redis hangs for 2 s (SIGSTOP): writes do not wait for it. Then it is
    killed for 2.5 s and restarted empty. Nothing is lost: every
    client ends with exactly versions first+1..last, in order; the clients got the outage's changes
    before Redis came back (from the watch log); afterwards changes travel live again to both
    processes, and the control loop (lease held by A) hears B's changes at once again."""
    redis_url = start_redis(processes)
    redis = processes.started[-1]
    db = processes.tmp / "db.sqlite3"
    # A long lease: the loop's own poll (a third of it) cannot pass for hearing B's changes.
    env = server_env(str(db), redis_url, CLUSTERVIZ_LEASE_SECONDS="30", CLUSTERVIZ_STREAM_HEARTBEAT_SECONDS="1")
    prepare_cluster(env, "redis", nodes_yaml(2))
    a, b = start_servers(processes, ("daphne", env, 1), ("uvicorn", env, 1))
    with Stream(a, "redis") as early:  # a client that leaves before the outage, to resume after it
        since = int(early.recv()["resourceVersion"])
    followers = [Follower(a, "redis"), Follower(a, "redis")]
    wait_for(lambda: _lease_pid(db, "redis") == a.pid, 5, "A to drive the cluster")
    followers += [Follower(b, "redis"), Follower(b, "redis")]
    statuses: list[int] = []
    writes: list[tuple[float, float]] = []  # (start, duration) of each write
    pods: list[str] = []
    stop_load = threading.Event()

    def load() -> None:
        i = 0
        while not stop_load.is_set():
            server = (a, b)[i % 2]
            if i % 8 == 0:
                pods.append(f"p{i}")
                action = {"action": "create", "yaml": pod_yaml(f"p{i}", cpu="10m")}
            else:
                action = {"action": "label", "node": "n1", "key": "load", "value": str(i)}
            started = time.monotonic()
            statuses.append(act(server, db, "redis", action)[0])
            writes.append((started, time.monotonic() - started))
            i += 1
            time.sleep(0.05)

    loader = threading.Thread(target=load, daemon=True)
    try:
        loader.start()
        time.sleep(1.0)
        # First Redis hangs (SIGSTOP): a publish would wait for redis-py's 5 s socket timeout, on every write.
        redis.send_signal(signal.SIGSTOP)
        hung_at = time.monotonic()
        time.sleep(2.0)
        redis.send_signal(signal.SIGCONT)
        time.sleep(1.0)
        # Then it dies, and comes back empty.
        down_at = time.monotonic()
        redis.stop(signal.SIGKILL)
        rv_down = running_pods(db, "redis")[2]
        time.sleep(2.5)
        rv_before_up = running_pods(db, "redis")[2]
        up_at = time.monotonic()
        redis = processes.spawn("redis", list(redis.popen.args), port=redis.port)  # type: ignore[arg-type]
        wait_for(lambda: _redis_up(redis.port), 10, "redis-server to restart")
        time.sleep(2.0)
    finally:
        stop_load.set()
        loader.join(timeout=10)
    hung = [duration for started, duration in writes if hung_at <= started < hung_at + 2.0]
    try:
        assert set(statuses) == {200}, f"writes go on without Redis: {Counter(statuses)}"
        assert len(hung) >= 4 and max(hung) < 0.9, f"no write waits for a hung Redis: {sorted(hung)}"
        # During the outage every client got changes made during it, from the watch log.
        for follower in followers:
            during = [rv for rv in follower.rvs if rv_down < rv <= rv_before_up and follower.arrived[rv] < up_at]
            assert during, f"a client of {follower.server.name} saw nothing during the outage"

        # Live again: B's changes reach both processes' clients at once (not at a heartbeat).
        latencies = []
        for i in range(5):
            sent = time.monotonic()
            status, _ = act(b, db, "redis", {"action": "label", "node": "n2", "key": "k", "value": str(i)})
            assert status == 200
            rv = running_pods(db, "redis")[2]
            for follower in followers:
                follower.wait_for(rv, 5)
                latencies.append(follower.arrived[rv] - sent)
            time.sleep(0.15)
        assert max(latencies) < 0.5, f"live delivery after the restart: {sorted(latencies)}"

        # The loop (A) hears B's writes through the channel layer again: a pod created on B binds at once.
        sent = time.monotonic()
        assert act(b, db, "redis", {"action": "create", "yaml": pod_yaml("after", cpu="10m")})[0] == 200
        wait_for(lambda: count_pods(db, "redis", bound=True) == len(pods) + 1, 8, "pod 'after' to be bound")
        bound_after = time.monotonic() - sent
        assert bound_after < 2.0, f"bound {bound_after:.1f}s after its creation on B"
        wait_all_running(db, "redis", len(pods) + 1, timeout=30)
        final = check_store(db, "redis")
        for follower in followers:
            follower.wait_for(final.rv, 10)
    finally:
        for follower in followers:
            follower.stop()
    for follower in followers:
        assert not follower.errors, follower.errors
        expected = list(range(follower.first + 1, final.rv + 1))
        missing = sorted(set(expected) - set(follower.rvs))[:10]
        twice = [rv for rv, n in Counter(follower.rvs).items() if n > 1][:10]
        assert follower.rvs == expected, f"{follower.server.name}: missing {missing}, twice {twice}"
    with Stream(b, "redis", f"resourceVersion={since}") as late:
        assert late.recv() == {"type": "resumed", "from": str(since), "count": final.rv - since}
        backlog = [late.recv() for _ in range(final.rv - since)]
        assert [_change_key(m) for m in backlog] == [c for c in final.changes if c[0] > since]
    for server in (a, b):
        log = server.log.read_text(errors="replace")
        assert "Exception inside application" not in log and "Exception in ASGI application" not in log, (
            server.log_tail()
        )
    print(
        f"\nredis: hung 2s: {len(hung)} writes, slowest {max(hung):.2f}s;"
        f" down {up_at - down_at:.1f}s at rv {rv_down}..{rv_before_up}; {len(statuses)} writes, all 200;"
        f" drops per client {[f.drops for f in followers]};"
        f" live latency after the restart max {max(latencies) * 1000:.0f} ms;"
        f" a pod created on B bound in {bound_after * 1000:.0f} ms; final rv {final.rv}"
    )


# ------------------------------------------------------------------ a stuck browser


class StuckBrowser:
    """A WebSocket client on a raw socket with a tiny receive buffer: reads its snapshot, then stops
    reading (a frozen tab), so that the TCP buffers fill up; `drain()` reads what is left, later."""

    def __init__(self, server: Process, slug: str) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect(("127.0.0.1", server.port or 0))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /ws/clusters/{slug}/ HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: {server.base_url}\r\n\r\n"
            ).encode()
        )
        self.buffer = b""
        self.sock.settimeout(10)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(4096)
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        assert head.split(b"\r\n")[0].split()[1] == b"101", head
        self.messages: list[dict[str, Any]] = []
        self.close_code: int | None = None
        while not self.messages:
            self.buffer += self.sock.recv(65536)
            self._parse()
        assert self.messages[0]["type"] == "snapshot"

    def _parse(self) -> None:
        text = b""
        while len(self.buffer) >= 2:
            length, start = self.buffer[1] & 0x7F, 2
            if length >= 126:
                size = 2 if length == 126 else 8
                if len(self.buffer) < 2 + size:
                    return
                length, start = int.from_bytes(self.buffer[2 : 2 + size], "big"), 2 + size
            if len(self.buffer) < start + length:
                return
            fin, opcode, payload = self.buffer[0] & 0x80, self.buffer[0] & 0x0F, self.buffer[start : start + length]
            self.buffer = self.buffer[start + length :]
            if opcode == 8:
                self.close_code = int.from_bytes(payload[:2], "big") if payload else 1005
            elif opcode in (0, 1):
                text += payload
                if fin:
                    self.messages.append(json.loads(text))
                    text = b""

    def drain(self, timeout: float) -> str:
        """Read until the server ends the connection; returns how: "close" (a close frame), "eof" or "reset"."""
        self.sock.settimeout(timeout)
        try:
            while self.close_code is None:
                data = self.sock.recv(1 << 20)
                if not data:
                    return "eof"
                self.buffer += data
                self._parse()
            return "close"
        except ConnectionResetError:
            return "reset"
        except TimeoutError:
            return "still open"
        finally:
            self.sock.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize(
    ("kind", "layer"), [("daphne", "memory"), ("uvicorn", "redis")], ids=["daphne-inmemory", "uvicorn-redis"]
)
def test_a_stuck_browser_slows_nobody_and_cannot_grow_the_server(processes: Processes, kind: str, layer: str) -> None:
    """A presenter makes 120 changes of a ~200 kB node (24 MB of stream) while one browser reads
    nothing. The other browser gets every change within a small bound; the server's memory stays
    flat (before the fix: daphne kept it all, +1 MB per 1 MB sent; uvicorn's channel layer kept up
    to 1000 messages, then dropped some silently); the stuck browser is disconnected, what it got
    is a gap-free prefix, and resuming from there gives it exactly the rest."""
    redis_url = start_redis(processes) if layer == "redis" else None
    db = processes.tmp / "db.sqlite3"
    # 120 actions over HTTP in a few seconds: above the per-client rate limit (clusterviz/actions.py).
    env = server_env(str(db), redis_url, CLUSTERVIZ_STREAM_BACKLOG_BYTES=str(1 << 20), CLUSTERVIZ_RATE_ACTIONS="1000")
    big = node_yaml("n1").replace(
        "metadata: {name: n1,", "metadata: {name: n1, annotations: {notes: " + "x" * 200_000 + "},"
    )
    prepare_cluster(env, "slow", node_yaml("n2"))
    server = start_server(processes, kind, env)
    assert act(server, db, "slow", {"action": "create", "yaml": big})[0] == 200  # too long for a command line
    changes = 120
    with Stream(server, "slow") as normal:
        base = int(normal.recv()["resourceVersion"])
        stuck = StuckBrowser(server, "slow")
        time.sleep(0.3)
        rss_before = rss_mb(server.pid)
        latencies = []
        for i in range(changes):
            sent = time.monotonic()
            status, _ = act(server, db, "slow", {"action": "label", "node": "n1", "key": "k", "value": f"v{i}"})
            assert status == 200
            message = normal.until(lambda m: m.get("type") == "watch")[-1]
            latencies.append(time.monotonic() - sent)
            assert int(message["resourceVersion"]) == base + i + 1, "every change, in order"
            assert message["object"]["metadata"]["labels"]["k"] == f"v{i}"
            if i == changes // 2:
                rss_middle = rss_mb(server.pid)
        rss_after = rss_mb(server.pid)
        ended = stuck.drain(timeout=10)
    final = base + changes
    pushed_mb = changes * 200_000 / 1e6
    assert ended in ("close", "eof", "reset"), (
        f"the stuck browser is disconnected; it got {len(stuck.messages)} messages,"
        f" RSS {rss_before:.0f} -> {rss_after:.0f} MB\n{server.log_tail()}"
    )
    if stuck.close_code is not None:
        assert stuck.close_code == 4429
    got = _watch_rvs(stuck.messages)
    assert got == list(range(base + 1, base + 1 + len(got))), "what it got is a prefix, without a gap"
    assert len(got) < changes, "it was cut off, not buffered without bound"
    last = base + len(got)
    with Stream(server, "slow", f"resourceVersion={last}") as resumed:
        assert resumed.recv() == {"type": "resumed", "from": str(last), "count": final - last}
        rest = [resumed.recv() for _ in range(final - last)]
        assert _watch_rvs(rest) == list(range(last + 1, final + 1))
        assert rest[-1]["object"]["metadata"]["labels"]["k"] == f"v{changes - 1}"
    median, worst = statistics.median(latencies), max(latencies)
    assert median < 0.15 and worst < 1.0, f"the normal browser waited: median {median:.3f}s, worst {worst:.3f}s"
    grown = f"{rss_before:.0f} -> {rss_middle:.0f} -> {rss_after:.0f} MB for {pushed_mb:.0f} MB sent"
    assert rss_after - rss_before < 12 and rss_after - rss_middle < 5, f"the server grew: {grown}"
    assert "Traceback" not in server.log.read_text(errors="replace"), server.log_tail()
    print(
        f"\nstuck browser ({kind}, {layer} layer): {pushed_mb:.0f} MB pushed; normal browser latency median"
        f" {median * 1000:.0f} ms, max {worst * 1000:.0f} ms; server RSS {grown};"
        f" stuck browser got {len(got)} changes then {ended} (close code {stuck.close_code}), resumed the other"
        f" {final - last}"
    )


# ------------------------------------------------------------------ SIGKILL mid-import


def _import_state(db: Path, slug: str) -> tuple[int, int, int, int]:
    """(objects of the cluster, its resourceVersion, staging clusters, staged rows), read from SQLite."""
    connection = sqlite3.connect(db, timeout=20)
    try:
        cluster_id, rv = connection.execute(
            "select id, resource_version from clusterviz_cluster where slug = ?", (slug,)
        ).fetchone()
        objects = connection.execute(
            "select count(*) from clusterviz_kubeobject where cluster_id = ?", (cluster_id,)
        ).fetchone()[0]
        staging = connection.execute("select count(*) from clusterviz_cluster where slug like 'import.%'").fetchone()[0]
        staged = connection.execute(
            "select count(*) from clusterviz_kubeobject o join clusterviz_cluster c on o.cluster_id = c.id"
            " where c.slug like 'import.%'"
        ).fetchone()[0]
        return objects, rv, staging, staged
    finally:
        connection.close()


def _stored(db: Path) -> int:
    connection = sqlite3.connect(db, timeout=20)
    try:
        row = connection.execute("select max(stored) from clusterviz_importjob").fetchone()
        return int(row[0] or 0)
    finally:
        connection.close()


def _worker_pid(db: Path) -> int:
    """The process id of the import's worker (it begins the job's `worker`)."""
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as connection:
        (worker,) = connection.execute("select worker from clusterviz_importjob").fetchone()
    return int(worker.split("-")[0])


@pytest.mark.parametrize("kind", ["daphne", "uvicorn"])
def test_sigkill_during_an_import_then_restart(processes: Processes, kind: str) -> None:
    """A server killed while its worker process stores a 16,500-object import takes the worker along
    (no orphan goes on storing) and leaves the cluster empty (the staged rows are invisible); after
    the restart the job reads as interrupted, its staging is gone, and the same import then completes."""
    from bench.cluster_dump import dump

    db = processes.tmp / "db.sqlite3"
    env = server_env(str(db), CLUSTERVIZ_LEASE_SECONDS="1")
    prepare_cluster(env, "imp")
    big = dump(1500, 10)
    server = start_server(processes, kind, env)
    status, body = http_json(f"{server.base_url}/api/clusters/imp/imports", big, timeout=60)
    assert status == 202, body
    job_path = body["url"]
    kill_when(server, lambda: _stored(db) >= 3000, 120, "part of the import stored")
    worker = _worker_pid(db)
    assert worker != server.pid
    wait_for(lambda: _gone(worker), 10, "the import's worker to exit with its server")
    objects, rv, staging, staged = _import_state(db, "imp")
    assert (objects, rv, staging) == (0, 0, 1), "no half cluster: the staged rows are not the cluster's"
    assert 3000 <= staged < 16_500

    server = start_server(processes, kind, env)
    seen: dict[str, Any] = {}

    def interrupted() -> bool:
        seen.update(http_json(server.base_url + job_path)[1]["import"])
        return seen["state"] != "running"

    wait_for(interrupted, 30, "the killed import to be found")
    assert (seen["state"], seen["error"]) == (
        "failed",
        "interrupted: the server stopped during the import; nothing was stored",
    )
    assert _import_state(db, "imp") == (0, 0, 0, 0)

    small = dump(200, 10)
    status, body = http_json(f"{server.base_url}/api/clusters/imp/imports", small, timeout=60)
    assert status == 202, body
    wait_for(lambda: http_json(server.base_url + body["url"])[1]["import"]["state"] == "done", 120, "the import")
    assert _import_state(db, "imp") == (2200, 2200, 0, 0)
    state = check_state_api(server, "imp")
    assert len(state["objects"]["Node"]) == 200
