"""An import's worker process: `python -m clusterviz.import_worker`, started by the server
(clusterviz/import_process.py), never by hand.

Its stdin brings a header (the job, the server's database settings and import limits, the descriptor
of the dump's file), then stays open: when it closes, the server is gone and the worker exits at once
(what it staged is dropped by the next server that looks at the job: `imports.recover_interrupted`).
The import itself is `imports.work`; progress and outcome are written to the job's row.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from typing import Any, BinaryIO

EXIT_ORPHANED = 70  # the server went away


def _read_header(stream: BinaryIO) -> dict[str, Any]:
    size = int.from_bytes(_read_exactly(stream, 8), "big")
    header: dict[str, Any] = pickle.loads(_read_exactly(stream, size))  # from our own parent only
    return header


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        os._exit(EXIT_ORPHANED)  # the server died before it could say what to do
    return data


def _exit_with_parent(lifeline: BinaryIO) -> None:
    """Exit as soon as the server's end of stdin closes (it never writes more)."""

    def watch() -> None:
        while lifeline.read(4096):
            pass
        os._exit(EXIT_ORPHANED)

    threading.Thread(target=watch, name="import-worker-lifeline", daemon=True).start()


def _setup(header: dict[str, Any]) -> None:
    """Django with the server's settings module, database and import limits."""
    os.environ["DJANGO_SETTINGS_MODULE"] = header["settings_module"]
    import django

    django.setup()
    from django.conf import settings
    from django.db import connections

    connections["default"].close()
    connections["default"].settings_dict.update(header["database"])
    for name, value in header["settings"].items():
        setattr(settings, name, value)


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C at the terminal is for the server, which stops us
    stdin = sys.stdin.buffer
    header = _read_header(stdin)
    _exit_with_parent(stdin)
    _setup(header)
    with os.fdopen(header["fd"], "rb") as dump:
        dump.seek(0)  # the offset is shared with the server, which wrote it
        data = [dump.read()]
    from clusterviz import imports

    return imports.work(header["job"], data.pop())


if __name__ == "__main__":
    sys.exit(main())
