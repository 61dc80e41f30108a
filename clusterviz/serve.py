"""The one HTTP/WebSocket server: what `./dev run` starts and production runs, uvicorn.

Chosen by measurement (docs/operations.md): daphne, Django's runserver, spent 1.8x uvicorn's CPU
serving the same class here and missed the latency targets. The flags: a graceful-shutdown bound (one
slow client that never finishes its request body would keep uvicorn from exiting on SIGTERM) and no
per-message deflate (compressing each small watch event once per follower was a third of a class's
server CPU).

    python -m clusterviz.serve --port 8000            # ./dev run
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["ASGI_APP", "HOST", "uvicorn_argv"]

HOST = "127.0.0.1"
ASGI_APP = "clusterviz.asgi:application"


def uvicorn_argv(port: int, *, host: str = HOST, workers: int = 1, access_log: bool = False) -> list[str]:
    """The uvicorn command line serving clusterviz on `host`:`port`."""
    argv = [sys.executable, "-m", "uvicorn", ASGI_APP, "--host", host, "--port", str(port)]
    argv += ["--timeout-graceful-shutdown", "3", "--ws-per-message-deflate", "false"]
    if not access_log:
        argv.append("--no-access-log")
    return argv + (["--workers", str(workers)] if workers > 1 else [])


def main(args: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m clusterviz.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default=HOST)
    parser.add_argument("--workers", type=int, default=1)
    options = parser.parse_args(args)
    argv = uvicorn_argv(options.port, host=options.host, workers=options.workers, access_log=True)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
