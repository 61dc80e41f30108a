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
from typing import Any

EXIT_ORPHANED = 70  # the server went away
STDIN = 0
#: The worker's scheduling niceness ($CLUSTERVIZ_IMPORT_NICENESS, 0-19): when the CPUs are busy, the
#: server (a live class's stream) goes first and the import takes what is left (on a quiet machine it
#: gets a core all the same).
DEFAULT_NICENESS = 10


def niceness() -> int:
    try:
        return min(19, max(0, int(os.environ.get("CLUSTERVIZ_IMPORT_NICENESS", DEFAULT_NICENESS))))
    except ValueError:
        return DEFAULT_NICENESS


def _read_header() -> dict[str, Any]:
    size = int.from_bytes(_read_exactly(8), "big")
    header: dict[str, Any] = pickle.loads(_read_exactly(size))  # from our own parent only
    return header


def _read_exactly(size: int) -> bytes:
    """Bytes of stdin, read from its descriptor (sys.stdin's buffer would be locked by the lifeline's
    read when the interpreter exits)."""
    data = b""
    while len(data) < size:
        part = os.read(STDIN, size - len(data))
        if not part:
            os._exit(EXIT_ORPHANED)  # the server died before it could say what to do
        data += part
    return data


def _exit_with_parent() -> None:
    """Exit as soon as the server's end of stdin closes (it never writes more)."""

    def watch() -> None:
        while os.read(STDIN, 4096):
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
    os.nice(niceness())
    header = _read_header()
    _exit_with_parent()
    _setup(header)
    with os.fdopen(header["fd"], "rb") as dump:
        dump.seek(0)  # the offset is shared with the server, which wrote it
        data = [dump.read()]
    from django.db import connections

    from clusterviz import imports

    code = imports.work(header["job"], data.pop())
    connections.close_all()
    return code


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # at once: the server settles the job when this process is gone (no teardown of its heap)
