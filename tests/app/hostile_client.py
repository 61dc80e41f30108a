"""Raw clients and checks for the hostile-input suite against real servers (tests/app/test_hostile_servers.py).

- `raw_request`: one HTTP/1.1 request written byte for byte (any path, header or body bytes: the
  encodings `urllib`/`http.client` refuse to send), its response parsed by `http.client`.
- `ClusterRows`: the cluster's rows read straight from the server's SQLite file, to compare them
  byte for byte before and after a refused request.
- `LogWatch`: what a server wrote to its log since a mark (a traceback there is a failure).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .servers import Process

TRACEBACK_MARKERS = ("Traceback (most recent call last)", 'File "/')


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def raw_request(
    port: int,
    method: str,
    path: bytes | str,
    body: bytes = b"",
    headers: dict[str, str | bytes] | None = None,
    timeout: float = 30.0,
) -> Reply:
    """Send one request exactly as given; a server that closes without answering gives status 0."""
    target = path.encode("latin-1") if isinstance(path, str) else path
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1", b"Connection: close"]
    for name, value in (headers or {}).items():
        lines.append(name.encode() + b": " + (value if isinstance(value, bytes) else value.encode("latin-1")))
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(b"Content-Length: " + str(len(body)).encode())
    data = b"\r\n".join(lines) + b"\r\n\r\n" + body
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            sock.sendall(data)  # a server may refuse before reading everything: its answer still counts
        response = http.client.HTTPResponse(sock, method=method)
        try:
            response.begin()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            return Reply(0, {}, b"")
        try:
            content = response.read()
        except (http.client.IncompleteRead, ConnectionResetError) as exc:
            content = getattr(exc, "partial", b"")
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, content)


class ClusterRows:
    """Every row of one cluster (the cluster, its objects, its watch log, its cycles), as stored."""

    def __init__(self, db: Path, slug: str) -> None:
        self.db = db
        self.slug = slug

    def read(self) -> tuple[Any, ...]:
        with contextlib.closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=20)) as conn:
            cluster = conn.execute(
                "SELECT id, slug, title, resource_version, cycle, pace, pace_delay_ms, lesson, lesson_step, "
                "owner_token FROM clusterviz_cluster WHERE slug = ?",
                (self.slug,),
            ).fetchone()
            pk = cluster[0]
            tables = []
            for table in ("clusterviz_kubeobject", "clusterviz_change", "clusterviz_schedulingcycle"):
                tables.append(tuple(conn.execute(f"SELECT * FROM {table} WHERE cluster_id = ? ORDER BY id", (pk,))))
        return (cluster, *tables)


class LogWatch:
    """A server's log from a mark on."""

    def __init__(self, server: Process) -> None:
        self.server = server
        self.mark = 0

    def start(self) -> None:
        self.mark = self.server.log.stat().st_size

    def new(self) -> str:
        with self.server.log.open("rb") as log:
            log.seek(self.mark)
            return log.read().decode("utf-8", "replace")


def assert_no_traceback(text: str, where: str) -> None:
    for marker in TRACEBACK_MARKERS:
        assert marker not in text, f"a traceback in {where}:\n{text[-3000:]}"
