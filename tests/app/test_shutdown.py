"""SIGTERM stops every server the README names within seconds, whatever its clients are doing.

Each server gets open WebSocket streams that read nothing, clients that never finish their request
body, and actions in flight when the signal comes (daphne once took over 35 s: a request's worker
thread waited for the stopped event loop and the interpreter joined it forever; clusterviz/shutdown.py).
"""

from __future__ import annotations

import signal
import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from .conftest import node_yaml, pod_yaml
from .servers import Processes, Stream, http_json, prepare_cluster, server_env, start_server, wait_for

pytestmark = pytest.mark.slow

EXIT_BOUND = 8.0  # seconds from SIGTERM to exit (measured: 0.5-3.3 s; the exit grace is 3 s)


def _slow_client(port: int) -> socket.socket:
    """A request whose body never comes."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        b"POST /api/clusters/st/actions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
    )
    return sock


@pytest.mark.parametrize("kind", ["daphne", "daphne-cli", "uvicorn"])
def test_sigterm_stops_the_server_within_seconds(processes: Processes, tmp_path: Path, kind: str) -> None:
    db = tmp_path / "db.sqlite3"
    env = server_env(str(db))
    prepare_cluster(env, "st", "---\n".join(node_yaml(f"n{i}") for i in range(5)))
    server = start_server(processes, kind, env)
    streams = [Stream(server, "st") for _ in range(10)]  # they read only the snapshot, then nothing
    for stream in streams:
        assert stream.recv()["type"] == "snapshot"
    slow = [_slow_client(server.port) for _ in range(3)]
    done: list[int] = []
    stop = threading.Event()

    def act(worker: int) -> None:
        url = f"{server.base_url}/api/clusters/st/actions"
        for i in range(10_000):
            if stop.is_set():
                return
            try:
                http_json(url, {"action": "create", "yaml": pod_yaml(f"p{worker}-{i}")}, timeout=5)
                http_json(url, {"action": "explain", "yaml": pod_yaml(f"q{worker}-{i}")}, timeout=5)
            except OSError:
                return
            done.append(i)

    workers = [threading.Thread(target=act, args=(w,), daemon=True) for w in range(4)]
    for worker in workers:
        worker.start()
    try:
        wait_for(lambda: len(done) >= 8, 30, "actions to be under way")
        started = time.monotonic()
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)
        took = time.monotonic() - started
    finally:
        stop.set()
        for sock in slow:
            sock.close()
        for stream in streams:
            stream.close()
    assert took < EXIT_BOUND, f"{kind} took {took:.1f}s to exit:\n{server.log_tail()}"
    assert code in (0, -signal.SIGTERM), server.log_tail()
    # The control loops were handed over on the way out: another process may drive the cluster at once.
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        owners = conn.execute("SELECT lease_owner FROM clusterviz_cluster WHERE slug = 'st'").fetchall()
    assert owners == [("",)], f"{kind} kept its lease: {owners}"
