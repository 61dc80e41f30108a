"""An import over HTTP runs in a worker process of the server (clusterviz/import_process.py), on the
server `./dev run` starts (daphne) and on uvicorn: it is another process than the server's, a cancel
kills it and stores nothing, a malformed dump is refused with its place, and a server stopped by
SIGTERM takes its worker with it, its job settled as interrupted with nothing stored."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from bench.cluster_dump import dump

from .servers import (
    TOKENS,
    Process,
    Processes,
    _gone,
    http_json,
    prepare_cluster,
    server_env,
    start_server,
    wait_for,
)

pytestmark = pytest.mark.slow
SERVERS = ["daphne", "uvicorn"]
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def query(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as connection:
        return connection.execute(sql, args).fetchall()


def stored_nothing(db: Path, slug: str) -> bool:
    """The cluster has no objects and its resourceVersion is 0; no staging cluster or staged row is left."""
    ((objects, rv),) = query(
        db,
        "select count(o.id), c.resource_version from clusterviz_cluster c"
        " left join clusterviz_kubeobject o on o.cluster_id = c.id where c.slug = ?",
        slug,
    )
    ((staging,),) = query(db, "select count(*) from clusterviz_cluster where slug like 'import.%'")
    ((rows,),) = query(db, "select count(*) from clusterviz_kubeobject")
    return (objects, rv, staging, rows) == (0, 0, 0, 0)


def worker_pid(db: Path, job: int) -> int:
    """The process the job names as its worker (its id begins `ImportJob.worker`), once it has begun."""
    seen: list[str] = []

    def named() -> bool:
        seen[:] = [query(db, "select worker from clusterviz_importjob where id = ?", job)[0][0]]
        return bool(seen[0])

    wait_for(named, 60, "the worker to start")
    return int(seen[0].split("-")[0])


def parent_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise AssertionError(f"no PPid for {pid}")


def nice_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])  # field 19: nice


def command_of(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ").decode()


def post_dump(server: Process, slug: str, data: bytes) -> tuple[int, Any]:
    request = urllib.request.Request(f"{server.base_url}/api/clusters/{slug}/imports", data=data, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Authorization", f"Bearer {TOKENS[slug]}")
    with NO_PROXY.open(request, timeout=60) as response:
        return response.status, json.loads(response.read())


def start_import(server: Process, db: Path, slug: str, data: bytes) -> tuple[str, int]:
    """(the job's URL, its worker's process id) once the worker has stored its first objects."""
    status, body = post_dump(server, slug, data)
    assert status == 202, body
    url = server.base_url + body["url"]
    wait_for(lambda: http_json(url)[1]["import"]["stored"] > 0, 120, "the first objects stored")
    return url, worker_pid(db, body["import"]["id"])


def serve(processes: Processes, kind: str, slug: str) -> tuple[Process, Path]:
    db = processes.tmp / "db.sqlite3"
    env = server_env(str(db))
    prepare_cluster(env, slug)
    return start_server(processes, kind, env), db


@pytest.mark.parametrize("kind", SERVERS)
def test_the_import_runs_in_a_worker_process_and_cancel_kills_it(processes: Processes, kind: str) -> None:
    server, db = serve(processes, kind, "imp")
    url, pid = start_import(server, db, "imp", json.dumps(dump(1500, 10)).encode())
    assert pid != server.pid and parent_of(pid) == server.pid, "a child process of the server does the work"
    assert command_of(pid).endswith("-m clusterviz.import_worker")
    assert nice_of(pid) == nice_of(server.pid) + 10, "a busy machine serves the class first"
    status, body = http_json(url + "/cancel", {})
    assert status == 200, body
    # the answer comes once the worker is killed and its job settled
    assert (body["import"]["state"], body["import"]["error"]) == ("cancelled", "cancelled")
    wait_for(lambda: _gone(pid), 10, "the worker to be gone")
    assert stored_nothing(db, "imp")
    assert http_json(url)[1]["import"]["state"] == "cancelled"
    # the server goes on: the next import completes
    status, body = post_dump(server, "imp", json.dumps(dump(20, 2)).encode())
    assert status == 202, body
    wait_for(lambda: http_json(server.base_url + body["url"])[1]["import"]["state"] == "done", 120, "the import")
    assert len(http_json(f"{server.base_url}/api/clusters/imp/state")[1]["objects"]["Pod"]) == 40


@pytest.mark.parametrize("kind", SERVERS)
def test_a_malformed_dump_is_refused_with_its_place_and_nothing_stored(processes: Processes, kind: str) -> None:
    server, db = serve(processes, kind, "imp")
    data = dump(300, 10)
    text = json.dumps(data, indent=1)
    name = data["items"][2500]["metadata"]["name"]  # a pod's name deep in the dump, broken by a raw newline
    cut = text.index(f'"name": "{name}"') + len('"name": "') + 3
    bad = text[:cut] + "\n" + text[cut:]
    line = bad[:cut].count("\n") + 1
    status, body = post_dump(server, "imp", bad.encode())
    assert status == 202, body
    url = server.base_url + body["url"]
    wait_for(lambda: http_json(url)[1]["import"]["state"] != "running", 120, "the import to end")
    job = http_json(url)[1]["import"]
    assert job["state"] == "failed"
    assert job["error"].startswith(f"snapshot:{line}:"), job["error"]
    assert "Invalid control character" in job["error"] or "Unterminated string" in job["error"], job["error"]
    assert stored_nothing(db, "imp")


@pytest.mark.parametrize("kind", SERVERS)
def test_sigterm_during_an_import_takes_the_worker_along(processes: Processes, kind: str) -> None:
    server, db = serve(processes, kind, "imp")
    _, pid = start_import(server, db, "imp", json.dumps(dump(1500, 10)).encode())
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=15) in (0, -signal.SIGTERM), server.log_tail()
    wait_for(lambda: _gone(pid), 10, "the worker to be gone")
    ((state, error),) = query(db, "select state, error from clusterviz_importjob")
    assert (state, error) == ("failed", "interrupted: the server stopped during the import; nothing was stored")
    assert stored_nothing(db, "imp")
