"""Python's cyclic garbage collector, paused around big reads that make no reference cycles.

Reading a snapshot or a large YAML document makes tens of thousands of objects and no cycles; each
collection on the way walks every object made so far again (about 40% of reading a pod with thousands
of affinity terms). The pause is process-wide, so concurrent pausers (any thread) share it: the
collector resumes when the last one is done, and only if it ran before the first began.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_state = {"pausers": 0, "resume": False}


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector paused for the block (nested and concurrent pauses share one pause)."""
    with _lock:
        if _state["pausers"] == 0:
            _state["resume"] = gc.isenabled()
            gc.disable()
        _state["pausers"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["pausers"] -= 1
            if _state["pausers"] == 0 and _state["resume"]:
                gc.enable()
