"""A real clusterviz server process for the end-to-end tests (browser, kubectl).

The server `./dev run` starts (uvicorn, `clusterviz.serve`), or daphne for comparison, on a free
127.0.0.1 port, with its own SQLite file database and no Redis or PostgreSQL from the environment.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.serving import free_port, server_argv
from clusterviz.serve import uvicorn_argv

ROOT = Path(__file__).resolve().parents[1]


SERVERS = ("dev", "runserver", "uvicorn")


class LiveServer:
    def __init__(self, workdir: Path, kind: str = "dev") -> None:
        if kind not in SERVERS:
            raise ValueError(f"kind: one of {SERVERS}")
        self.kind = kind
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = workdir / "db.sqlite3"
        self.env = {
            **os.environ,
            "SQLITE_PATH": str(self.db),
            "DJANGO_SETTINGS_MODULE": "clusterviz.settings",
            "PYTHONUNBUFFERED": "1",
        }
        for key in ("REDIS_URL", "DATABASE_URL", "KUBECONFIG"):
            self.env.pop(key, None)
        self.log = workdir / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`manage.py ARGS` against the server's database."""
        out = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True
        )
        if check and out.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {out.stderr.strip()[-2000:]}")
        return out

    def argv(self) -> list[str]:
        if self.kind == "dev":  # what `./dev run` starts: uvicorn with its access log
            return uvicorn_argv(self.port, access_log=True)
        return server_argv("daphne" if self.kind == "runserver" else self.kind, self.port)

    def start(self) -> None:
        """Migrate, start the server, and wait until it accepts connections."""
        self.run("migrate", "-v0")
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                self.argv(),
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
