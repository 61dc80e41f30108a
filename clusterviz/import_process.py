"""The server's side of an import's worker process (`python -m clusterviz.import_worker`).

An import's work — decoding the dump, validating every object, building and writing the rows, the
final swap — is CPU-bound Python. In a thread of the server it took the GIL from the event loop and
the request threads (a 5,000-node import doubled a live class's p99: README, `--import-nodes`).
Here it runs in a child process with its own interpreter and database connection; the server only
starts it, hands it the dump as an open unlinked temporary file, and waits for it in a thread that
sleeps in `waitpid`. Progress and outcome go through the job's row, as with any other process.

Lifetime: the child holds the read end of its stdin, which only this process holds open, and exits
at once when it closes — this process died, however it died (no orphan worker). A cancel or the
server's shutdown kills it (SIGKILL) and settles its job here (`on_end`: nothing it staged stays).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from django.conf import settings
from django.db import connection

__all__ = ["OnEnd", "pid_of", "running", "start", "stop", "stop_all"]

log = logging.getLogger(__name__)

#: Called (in a thread of this process) once a worker has ended: (job id, whether the server stopped it).
OnEnd = Callable[[int, bool], None]
#: Called (in the same thread) every `every` seconds while the worker lives, from its start: (job id).
Beat = Callable[[int], None]
WORKER_MODULE = "clusterviz.import_worker"
#: Settings the worker takes from the server (tests and deployments may set them at run time).
PASSED_SETTINGS = ("CLUSTERVIZ_IMPORT_MAX_BYTES", "CLUSTERVIZ_IMPORT_MAX_OBJECTS")
SETTLE_SECONDS = 30.0  # how long a cancel waits for the killed worker's job to be settled


@dataclass
class _Worker:
    job_id: int
    popen: subprocess.Popen[bytes]
    on_end: OnEnd
    beat: Beat
    every: float
    stopped_by_server: bool = False
    settled: threading.Event = field(default_factory=threading.Event)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGKILL)


_workers: dict[int, _Worker] = {}
_lock = threading.Lock()
_exit_hook = False


def start(job_id: int, dump: BinaryIO, *, on_end: OnEnd, beat: Beat, every: float) -> int:
    """Start the worker of import `job_id` on the dump in `dump` (a real file: its descriptor is passed
    on, and may be closed once this returns); its process id. `beat` proves the import alive while
    the worker lives (it starts slowly on a busy machine), `on_end` settles its job."""
    _install_exit_hook()
    dump.flush()
    header = {
        "job": job_id,
        "fd": dump.fileno(),
        "settings_module": settings.SETTINGS_MODULE,
        "database": dict(connection.settings_dict),  # the server's own (under tests: the test database)
        "settings": {name: getattr(settings, name) for name in PASSED_SETTINGS if hasattr(settings, name)},
    }
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(settings.BASE_DIR), os.environ.get("PYTHONPATH")])),
    }
    popen = subprocess.Popen(
        [sys.executable, "-m", WORKER_MODULE],
        stdin=subprocess.PIPE,
        pass_fds=(dump.fileno(),),
        env=env,
    )
    worker = _Worker(job_id, popen, on_end, beat, every)
    with _lock:
        _workers[job_id] = worker
    assert popen.stdin is not None
    try:
        popen.stdin.write(_frame(header))
        popen.stdin.flush()  # and kept open: the child's lifeline
    except OSError:  # it is already gone; its watcher settles the job
        worker.kill()
    threading.Thread(target=_watch, args=(worker,), name=f"import-{job_id}-worker", daemon=True).start()
    return popen.pid


def _frame(header: dict[str, Any]) -> bytes:
    data = pickle.dumps(header)
    return len(data).to_bytes(8, "big") + data


def _watch(worker: _Worker) -> None:
    """Wait for the worker to end, beating meanwhile, then settle its job (a job it left running is
    failed or cancelled)."""
    with _exit_notice(worker.popen) as ended_within:
        while not ended_within(worker.every):
            try:
                worker.beat(worker.job_id)
            except Exception:
                log.exception("import %s: heartbeat failed", worker.job_id)
    code = worker.popen.wait()
    try:
        if code < 0 and not worker.stopped_by_server:
            log.info("import %s: worker %s ended by signal %s", worker.job_id, worker.popen.pid, -code)
        worker.on_end(worker.job_id, worker.stopped_by_server)
    except Exception:
        log.exception("import %s: settling after its worker ended failed", worker.job_id)
    finally:
        with contextlib.suppress(OSError):
            assert worker.popen.stdin is not None
            worker.popen.stdin.close()
        with _lock:
            _workers.pop(worker.job_id, None)
        connection.close()
        worker.settled.set()


def running() -> list[int]:
    """The imports whose workers this process runs (until each is settled)."""
    with _lock:
        return sorted(_workers)


@contextlib.contextmanager
def _exit_notice(popen: subprocess.Popen[bytes]) -> Iterator[Callable[[float], bool]]:
    """`ended_within(seconds)`: whether the process ends within that time, waited for in the kernel
    (a pidfd: Popen.wait with a timeout would wake this process every 50 ms)."""
    try:
        pidfd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):  # not Linux ≥ 5.3

        def polled(seconds: float) -> bool:
            try:
                popen.wait(seconds)
            except subprocess.TimeoutExpired:
                return False
            return True

        yield polled
        return
    try:
        yield lambda seconds: bool(select.select([pidfd], [], [], seconds)[0])
    finally:
        os.close(pidfd)


def pid_of(job_id: int) -> int | None:
    """The process id of the worker of import `job_id`, while this process runs it."""
    with _lock:
        worker = _workers.get(job_id)
    return worker.popen.pid if worker else None


def stop(job_id: int, timeout: float = SETTLE_SECONDS) -> bool:
    """Kill the worker of import `job_id` if this process runs it, and wait until its job is settled."""
    with _lock:
        worker = _workers.get(job_id)
    if worker is None:
        return False
    worker.kill()
    return worker.settled.wait(timeout)


def stop_all(timeout: float = 2.0) -> None:
    """Kill every worker of this process (the server stops): their jobs are settled as interrupted."""
    with _lock:
        workers = list(_workers.values())
    for worker in workers:
        worker.stopped_by_server = True
        worker.kill()
    for worker in workers:
        worker.settled.wait(timeout)


def _install_exit_hook() -> None:
    """Kill the workers when the interpreter shuts down (before it joins threads: clusterviz/shutdown.py)."""
    global _exit_hook
    with _lock:
        if _exit_hook:
            return
        _exit_hook = True
    threading._register_atexit(stop_all)  # type: ignore[attr-defined]
