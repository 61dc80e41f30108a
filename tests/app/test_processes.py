"""End to end with real processes: servers sharing a database and a Redis channel layer, restarts, and
the production path (PostgreSQL + Redis + uvicorn with workers). Every process is stopped at teardown."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import node_yaml, pod_yaml
from .servers import (
    Process,
    Processes,
    Stream,
    django_script,
    http_json,
    prepare_cluster,
    server_env,
    start_postgres,
    start_redis,
    start_server,
    start_servers,
    streams,
    wait_for,
)

pytestmark = pytest.mark.slow


def is_watch(message: dict[str, Any], event: str, kind: str, name: str) -> bool:
    return (
        message.get("type") == "watch"
        and (message["event"], message["kind"]) == (event, kind)
        and message["object"]["metadata"]["name"] == name
    )


def is_running(name: str) -> Any:
    def check(message: dict[str, Any]) -> bool:
        return is_watch(message, "MODIFIED", "Pod", name) and message["object"]["status"].get("phase") == "Running"

    return check


def watch_rvs(messages: list[dict[str, Any]]) -> list[int]:
    return [int(m["resourceVersion"]) for m in messages if m["type"] == "watch"]


def assert_sees_pod_created_and_scheduled(messages: list[dict[str, Any]], name: str, first_rv: int) -> dict[str, Any]:
    """ADDED (by the browser's HTTP action), the scheduler's cycle, the binding; contiguous versions."""
    watches = [m for m in messages if m["type"] == "watch"]
    assert is_watch(watches[0], "ADDED", "Pod", name)
    assert watches[0]["component"] == "browser"
    cycle = next(m for m in messages if m["type"] == "scheduler.cycle")
    assert cycle["pod"] == f"default/{name}"
    assert cycle["scheduled"] is True
    assert cycle["events"][0]["type"] == "cycle.started"
    assert cycle["events"][-1]["type"] == "cycle.finished"
    bind = next(m for m in watches if is_watch(m, "MODIFIED", "Pod", name) and m["component"] == "default-scheduler")
    assert bind["object"]["spec"]["nodeName"] == cycle["node"]
    assert messages.index(cycle) < messages.index(bind)
    rvs = watch_rvs(messages)
    assert rvs == list(range(first_rv, first_rv + len(rvs))), "no gap, no duplicate"
    return cycle


def group_size(leader: Process) -> int:
    """How many live processes are in the leader's process group (uvicorn: the manager + its workers)."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == leader.pid and fields[0] != "Z":
            count += 1
    return count


def test_two_servers_share_sqlite_and_redis(processes: Processes) -> None:
    """A WebSocket client of server A (daphne) sees what server B (uvicorn) does, scheduler included."""
    redis_url = start_redis(processes)
    env = server_env(str(processes.tmp / "db.sqlite3"), redis_url)
    prepare_cluster(env, "fan", node_yaml("n1") + "\n---\n" + node_yaml("n2", cpu="1"))
    server_a, server_b = start_servers(processes, ("daphne", env, 1), ("uvicorn", env, 1))

    # Before any WebSocket client: an HTTP action alone starts A's control loop, which must work
    # outside the request that started it.
    action = {"action": "create", "yaml": pod_yaml("p0", node_selector={"kubernetes.io/hostname": "n2"})}
    http_json(f"{server_a.base_url}/api/clusters/fan/actions", action)

    def p0_running() -> bool:
        pods = http_json(f"{server_a.base_url}/api/clusters/fan/state")[1]["objects"]["Pod"]
        return pods[0]["status"]["phase"] == "Running"

    wait_for(p0_running, 5, "p0 to run (a control loop started by an HTTP request)")
    base = int(http_json(f"{server_a.base_url}/api/clusters/fan/state")[1]["resourceVersion"])

    with streams(Stream(server_a, "fan"), Stream(server_b, "fan")) as (on_a, on_b):
        for client in (on_a, on_b):
            snapshot = client.recv()
            assert (snapshot["type"], snapshot["resourceVersion"]) == ("snapshot", str(base))
            assert [n["metadata"]["name"] for n in snapshot["objects"]["Node"]] == ["n1", "n2"]
        status, body = http_json(
            f"{server_b.base_url}/api/clusters/fan/actions", {"action": "create", "yaml": pod_yaml("p1"), "id": 1}
        )
        assert (status, body) == (200, {"ok": True, "created": ["Pod/p1"]})
        seen_a = on_a.until(is_running("p1"))
        seen_b = on_b.until(is_running("p1"))
        cycle = assert_sees_pod_created_and_scheduled(seen_a, "p1", base + 1)
        assert cycle["node"] == "n1"  # the roomier node
        assert watch_rvs(seen_a) == watch_rvs(seen_b)
        assert [m["type"] for m in seen_a] == [m["type"] for m in seen_b]

        # And the other way round: an action through A's socket reaches B's client.
        on_a.connection.send('{"action": "label", "node": "n2", "key": "zone", "value": "b", "id": "l"}')
        labelled = on_b.until(lambda m: is_watch(m, "MODIFIED", "Node", "n2"))[-1]
        assert labelled["object"]["metadata"]["labels"]["zone"] == "b"
    state = http_json(f"{server_a.base_url}/api/clusters/fan/state")[1]
    assert {p["metadata"]["name"]: p["spec"]["nodeName"] for p in state["objects"]["Pod"]} == {"p0": "n2", "p1": "n1"}


def _lease_owner(db: Path, slug: str) -> str:
    with sqlite3.connect(db) as connection:
        row = connection.execute("select lease_owner from clusterviz_cluster where slug = ?", (slug,)).fetchone()
    return str(row[0])


@pytest.mark.parametrize(
    ("kind", "sig"),
    [("daphne", signal.SIGTERM), ("uvicorn", signal.SIGTERM), ("uvicorn", signal.SIGKILL)],
    ids=["daphne-sigterm", "uvicorn-sigterm", "uvicorn-sigkill"],
)
def test_restart_keeps_everything_and_resumes_pending_work(processes: Processes, kind: str, sig: int) -> None:
    db = processes.tmp / "db.sqlite3"
    # A clean stop hands the lease over at once; after SIGKILL the lease must expire first.
    lease = "15" if sig == signal.SIGTERM else "2"
    env = server_env(str(db), CLUSTERVIZ_LEASE_SECONDS=lease)
    prepare_cluster(env, "rs", node_yaml("n1"))
    first = start_server(processes, kind, env)
    with Stream(first, "rs") as client:
        assert client.recv()["resourceVersion"] == "1"
        assert http_json(f"{first.base_url}/api/clusters/rs/actions", {"action": "create", "yaml": pod_yaml("p1")})[0]
        seen = client.until(lambda m: m.get("type") == "watch" and m["object"].get("reason") == "Started")
        assert_sees_pod_created_and_scheduled(seen, "p1", 2)
        pace = {"action": "pace", "pace": "slow", "delayMs": 50}
        assert http_json(f"{first.base_url}/api/clusters/rs/actions", pace) == (
            200,
            {"ok": True, "pace": "slow", "delayMs": 50},
        )
    last_rv = watch_rvs(seen)[-1]
    assert http_json(f"{first.base_url}/api/clusters/rs/state")[1]["resourceVersion"] == str(last_rv)
    owner_before = _lease_owner(db, "rs")
    assert owner_before != ""

    first.send_signal(sig)
    code = first.wait(timeout=15)
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
        assert _lease_owner(db, "rs") != "", "a killed server cannot release its lease"
    else:
        assert code in (0, -signal.SIGTERM), first.log_tail()
        assert _lease_owner(db, "rs") == "", f"a stopped server releases its lease\n{first.log_tail()}"

    # While no server runs, another client of the database (kubectl, say) creates a pod.
    django_script(
        env,
        "from clusterviz import services\nfrom clusterviz.models import Cluster\n"
        f"services.create_from_yaml(Cluster.objects.get(slug='rs'), {pod_yaml('p2')!r}, 'kubectl')\n",
    )

    second = start_server(processes, kind, env)
    state = http_json(f"{second.base_url}/api/clusters/rs/state")[1]
    assert state["resourceVersion"] == str(last_rv + 1)
    assert (state["cluster"]["pace"], state["cluster"]["paceDelayMs"]) == ("slow", 50)
    pods = {p["metadata"]["name"]: p for p in state["objects"]["Pod"]}
    assert pods["p1"]["spec"]["nodeName"] == "n1"
    assert pods["p1"]["status"]["phase"] == "Running"
    assert "nodeName" not in pods["p2"]["spec"]

    started = time.monotonic()
    with Stream(second, "rs", f"resourceVersion={last_rv}") as client:
        assert client.recv() == {"type": "resumed", "from": str(last_rv), "count": 1}
        added = client.recv()
        assert is_watch(added, "ADDED", "Pod", "p2")
        assert (added["resourceVersion"], added["component"]) == (str(last_rv + 1), "kubectl")
        # The client's connection starts this server's control loop: the pending pod is scheduled.
        seen = client.until(
            lambda m: is_watch(m, "MODIFIED", "Pod", "p2") and bool(m["object"]["spec"].get("nodeName"))
        )
        took = time.monotonic() - started
        assert seen[-1]["component"] == "default-scheduler"
        rvs = watch_rvs([added, *seen])
        assert rvs == list(range(last_rv + 1, last_rv + 1 + len(rvs))), "monotonic, without a gap"
        # Slow pace survived the restart: every controller action is announced (after its writes).
        stepped = client.until(lambda m: m.get("type") == "control.stepped")[-1]
        assert stepped == {"type": "control.stepped", "controller": "scheduler", "idle": False}
    if sig == signal.SIGTERM:
        assert took < 3, f"the released lease is taken at once, not after it expires ({took:.1f}s)"
    else:
        assert took < 8
    assert _lease_owner(db, "rs") not in ("", owner_before), "the new server holds the lease"


def test_production_path_postgres_redis_uvicorn_workers(processes: Processes) -> None:
    database_url = start_postgres(processes)
    redis_url = start_redis(processes)
    env = server_env(database_url, redis_url)
    prepare_cluster(env, "prod", node_yaml("n1") + "\n---\n" + node_yaml("n2"))
    workers, other = start_servers(processes, ("uvicorn", env, 2), ("daphne", env, 1))
    assert group_size(workers) >= 3, "uvicorn runs a manager and two workers"
    clients = [Stream(workers, "prod") for _ in range(4)] + [Stream(other, "prod")]
    with streams(*clients):
        for client in clients:
            assert client.recv()["resourceVersion"] == "2"
        for attempt in range(3):  # each POST lands on some worker
            name = f"p{attempt}"
            action = {"action": "create", "yaml": pod_yaml(name)}
            status, body = http_json(f"{workers.base_url}/api/clusters/prod/actions", action)
            assert (status, body) == (200, {"ok": True, "created": [f"Pod/{name}"]})
        per_client = [client.until(is_running("p2"), timeout=15) for client in clients]
        for seen in per_client:
            assert watch_rvs(seen)[0] == 3
            assert sorted(m["pod"] for m in seen if m["type"] == "scheduler.cycle") == [
                "default/p0",
                "default/p1",
                "default/p2",
            ]
            assert watch_rvs(seen) == watch_rvs(per_client[0])
        rvs = watch_rvs(per_client[0])
        assert rvs == list(range(3, 3 + len(rvs)))

        # PostgreSQL cannot store a NUL character in JSON: refused at admission, with its field.
        nul_pod = 'kind: Pod\nmetadata: {name: nul}\nspec: {containers: [{name: a, image: "a\\0"}]}'
        nul = {"action": "create", "yaml": nul_pod, "id": "nul"}
        status, body = http_json(f"{workers.base_url}/api/clusters/prod/actions", nul)
        assert (status, body["reason"]) == (400, "Invalid"), body
        assert (
            body["message"]
            == 'yaml:3: spec.containers[0].image: Invalid value: "a\\u0000": must not contain NUL characters'
        )

        clients[-1].connection.send(json.dumps(nul))
        error = clients[-1].until(lambda m: m.get("type") in ("error", "result"))[-1]
        assert (error["type"], error["id"], error["reason"]) == ("error", "nul", "Invalid")
        assert error["message"] == body["message"]
    state = http_json(f"{other.base_url}/api/clusters/prod/state")[1]
    assert sorted(p["metadata"]["name"] for p in state["objects"]["Pod"]) == ["p0", "p1", "p2"]
    assert all(p["spec"].get("nodeName") for p in state["objects"]["Pod"])


@pytest.mark.parametrize("kind", ["daphne", "uvicorn"])
def test_a_dropped_postgres_connection_costs_no_action(processes: Processes, kind: str) -> None:
    """The shared sync thread keeps its connection between stream messages and controller steps
    (clusterviz/shared_db.py). When PostgreSQL drops it, the next action and the control loops carry on
    over a new one: no error, nothing lost."""
    env = server_env(start_postgres(processes))
    prepare_cluster(env, "pg", node_yaml("n1"))
    server = start_server(processes, kind, env)
    with Stream(server, "pg") as client:
        assert client.recv()["type"] == "snapshot"
        client.connection.send(json.dumps({"action": "create", "yaml": pod_yaml("p0"), "id": "p0"}))
        client.until(is_running("p0"))
        terminated = django_script(
            env,
            "from django.db import connection\n"
            "with connection.cursor() as cursor:\n"
            "    cursor.execute('SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()')\n"
            "    print(cursor.fetchone()[0])\n",
        )
        assert int(terminated.split()[-1]) >= 1, "the server kept a connection open"

        client.connection.send(json.dumps({"action": "create", "yaml": pod_yaml("p1"), "id": "p1"}))
        seen = client.until(is_running("p1"))
        assert next(m for m in seen if m.get("id") == "p1") == {"type": "result", "id": "p1", "created": ["Pod/p1"]}
        status, body = http_json(
            f"{server.base_url}/api/clusters/pg/actions", {"action": "create", "yaml": pod_yaml("p2")}
        )
        assert (status, body) == (200, {"ok": True, "created": ["Pod/p2"]})
        client.until(is_running("p2"))
    assert "Traceback" not in server.log_tail(200), server.log_tail(200)
