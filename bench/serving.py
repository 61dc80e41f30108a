"""The server commands README names, built in one place for the tests and benchmarks that start them.

`daphne` is what `./dev run` starts (Django's runserver, served by daphne); `daphne-cli` and `uvicorn`
are README's production commands, with the flags README gives them.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable

HOST = "127.0.0.1"
ASGI_APP = "clusterviz.asgi:application"
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
        # README's production command: a graceful-shutdown bound (one slow client that never finishes
        # its request body would keep uvicorn from exiting on SIGTERM) and no per-message deflate
        # (compressing each small watch event once per follower was a third of a class's server CPU).
        argv = [python, "-m", "uvicorn", app, "--host", HOST, "--port", str(port)]
        argv += ["--timeout-graceful-shutdown", "3", "--ws-per-message-deflate", "false", "--no-access-log"]
        return argv + (["--workers", str(workers)] if workers > 1 else [])
    raise ValueError(f"server kind: one of {SERVER_KINDS}, not {kind!r}")
