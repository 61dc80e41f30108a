"""Scheduling-cycle traces kept lazily: a batch of cycles stores each cycle's summary at once and its
per-node trace (the compact events the board replays) later.

Encoding a 5,000-node cycle's trace takes about 10 ms and 0.4 MB, so a 1,000-pod scale-up would
spend more time writing traces than scheduling. The scheduler keeps each batched cycle's events in
memory (at most the last `CYCLES_KEPT`, the cycles the store keeps anyway) and its row says
`DEFERRED`; the control loop encodes and stores them when it has nothing else to do (`flush`), and
`GET …/cycles/<n>` encodes one at once when asked first (`resolve`). The encoding is the one every
cycle gets (`encode_cycle`), from the same events, so a replay is the same either way.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from scheduler_core.framework.events import Event, encode_cycle

from .models import SchedulingCycle

__all__ = ["DEFERRED", "defer", "flush", "is_deferred", "pending_count", "resolve"]

DEFERRED: dict[str, Any] = {"deferred": True}  # the `events` of a kept cycle whose trace is not stored yet
MAX_PENDING = 500  # per cluster: the store keeps the last 500 cycles (scheduler.CYCLES_KEPT)

_lock = threading.Lock()
_pending: dict[int, OrderedDict[int, tuple[list[Event], Sequence[str]]]] = {}


def is_deferred(events: Any) -> bool:
    return isinstance(events, dict) and events.get("deferred") is True


def defer(cluster_id: int, number: int, events: list[Event], names: Sequence[str]) -> None:
    """Keep cycle `number`'s events (and the table's node names they index) until stored."""
    with _lock:
        pending = _pending.setdefault(cluster_id, OrderedDict())
        pending[number] = (events, names)
        while len(pending) > MAX_PENDING:
            pending.popitem(last=False)


def pending_count(cluster_id: int) -> int:
    with _lock:
        return len(_pending.get(cluster_id, ()))


def _take(cluster_id: int, number: int | None = None) -> tuple[int, list[Event], Sequence[str]] | None:
    with _lock:
        pending = _pending.get(cluster_id)
        if not pending:
            return None
        if number is None:
            number, (events, names) = pending.popitem(last=True)  # the newest first: what the board shows
        elif number in pending:
            events, names = pending.pop(number)
        else:
            return None
        if not pending:
            _pending.pop(cluster_id, None)
        return number, events, names


def _store(cluster_id: int, number: int, events: list[Event], names: Sequence[str]) -> list[dict[str, Any]]:
    wire = encode_cycle(events, names)
    SchedulingCycle.objects.filter(cluster_id=cluster_id, number=number).update(events=wire)
    return wire


def resolve(cycle: SchedulingCycle) -> bool:
    """Store a deferred cycle's trace now (this process scheduled it); False when the trace is gone
    (the process that ran the cycle stopped before storing it)."""
    if not is_deferred(cycle.events):
        return True
    taken = _take(cycle.cluster_id, cycle.number)
    if taken is None:
        return False
    cycle.events = _store(cycle.cluster_id, *taken)
    return True


def flush(cluster_id: int, seconds: float = 0.2) -> bool:
    """Store deferred traces for about `seconds`, newest first; True when some remain."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        taken = _take(cluster_id)
        if taken is None:
            return False
        _store(cluster_id, *taken)
    return pending_count(cluster_id) > 0


def forget(cluster_id: int) -> None:
    with _lock:
        _pending.pop(cluster_id, None)
