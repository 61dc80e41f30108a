"""A bounded exit for every server (runserver/daphne, daphne, uvicorn).

Why a server could ignore SIGTERM for 35 s and more: the server stops its event loop, then the
interpreter joins the worker threads of `sync_to_async` before exiting. A thread still inside a
request (a sync middleware such as WhiteNoise around an async view, or a sync view that publishes
with `async_to_sync`) waits for a coroutine on the event loop that no longer runs: the join never
returns. This module runs first when the interpreter shuts down: it hands this process's control
loops over (releases its leases), then gives busy threads `CLUSTERVIZ_EXIT_GRACE_SECONDS` to finish
and ends the process if they do not, since nothing will ever answer them.
"""

from __future__ import annotations

import concurrent.futures.thread  # noqa: F401  (its join-at-exit must be registered before ours)
import contextlib
import logging
import os
import sys
import threading
import time

log = logging.getLogger(__name__)
DEFAULT_GRACE_SECONDS = 3.0
_installed = False


def grace_seconds() -> float:
    """How long busy threads may still run once the server has stopped serving."""
    try:
        return max(0.0, float(os.environ.get("CLUSTERVIZ_EXIT_GRACE_SECONDS", DEFAULT_GRACE_SECONDS)))
    except ValueError:
        return DEFAULT_GRACE_SECONDS


def _busy_threads() -> list[threading.Thread]:
    main, me = threading.main_thread(), threading.current_thread()
    return [t for t in threading.enumerate() if t not in (main, me) and not t.daemon and t.is_alive()]


_shutting_down = threading.Event()


def _watchdog() -> None:
    """Started with the server (no thread can start during interpreter shutdown); waits for the exit."""
    _shutting_down.wait()
    deadline = time.monotonic() + grace_seconds()
    while time.monotonic() < deadline:
        if not _busy_threads():
            return
        time.sleep(0.05)
    names = ", ".join(t.name for t in _busy_threads())
    with contextlib.suppress(Exception):
        sys.stderr.write(f"clusterviz: threads still busy {grace_seconds():.1f}s after shutdown ({names}); exiting\n")
        sys.stderr.flush()
    os._exit(0)


def _on_interpreter_shutdown() -> None:
    """Runs before the interpreter joins the worker threads (threading's exit hooks run in reverse order)."""
    _shutting_down.set()
    from .controllers.runner import release_all_leases

    with contextlib.suppress(Exception):
        release_all_leases()


def install() -> None:
    """Bound this process's exit (idempotent). Called when the ASGI application is built."""
    global _installed
    if _installed:
        return
    _installed = True
    threading.Thread(target=_watchdog, name="clusterviz-exit-deadline", daemon=True).start()
    threading._register_atexit(_on_interpreter_shutdown)  # type: ignore[attr-defined]
