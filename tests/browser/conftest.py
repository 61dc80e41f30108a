"""Browser tests: a real server process and Debian's Chromium driven by Playwright.

Run them in their own pytest session (`-m browser`): pytest-playwright's event loop and
pytest-asyncio cannot share one.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:  # type: ignore[type-arg]
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium to run the browser tests")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """`manage.py runserver` (daphne) on a free port with its own SQLite database."""

    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SQLITE_PATH": str(workdir / "db.sqlite3"),
            "DJANGO_SETTINGS_MODULE": "clusterviz.settings",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("REDIS_URL", None)
        self.env.pop("DATABASE_URL", None)
        self.log = workdir / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> str:
        out = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, check=True
        )
        return out.stdout

    def start(self) -> None:
        self.manage("migrate", "-v0")
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
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


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("live")
    server = LiveServer(workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


_counter = iter(range(1, 10_000))


@pytest.fixture
def lesson_cluster(live_server: LiveServer):  # type: ignore[no-untyped-def]
    """Create a fresh cluster from a lesson: `lesson_cluster("demo")` → its URL."""

    def make(lesson: str) -> str:
        slug = f"{lesson}-{os.getpid()}-{next(_counter)}"
        live_server.manage("load_scenario", lesson, "--cluster", slug)
        return f"{live_server.url}/clusters/{slug}/"

    return make
