"""The server commands, built in one place for the tests and benchmarks that start them.

`uvicorn` is what `./dev run` starts and production runs (`clusterviz.serve`); `daphne` (Django's
runserver) and `daphne-cli` are kept to measure against it.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python bench/x.py`: the project beside it
    sys.path.insert(0, str(ROOT))

from clusterviz.serve import ASGI_APP, HOST, uvicorn_argv  # noqa: E402

SERVER_KINDS = ("daphne", "daphne-cli", "uvicorn")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def wait_for(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    """Poll `check` until it is true; `RuntimeError` naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout}s waiting for {what}")


def server_argv(kind: str, port: int, *, workers: int = 1, app: str = ASGI_APP) -> list[str]:
    """The command line of a server of `kind` (one of `SERVER_KINDS`) on 127.0.0.1:`port`."""
    python = sys.executable
    if kind == "daphne":
        return [python, "manage.py", "runserver", f"{HOST}:{port}", "--noreload"]
    if kind == "daphne-cli":
        return [python, "-m", "daphne", "-b", HOST, "-p", str(port), app]
    if kind == "uvicorn":
        return uvicorn_argv(port, workers=workers)
    raise ValueError(f"server kind: one of {SERVER_KINDS}, not {kind!r}")
