"""Scheduling-cycle traces kept lazily: a batch of cycles stores each cycle's summary at once and its
per-node trace (the compact events the board replays) later.

Encoding a 5,000-node cycle's trace takes about 10 ms and 0.4 MB, so a 1,000-pod scale-up would
spend more time writing traces than scheduling. The scheduler keeps each batched cycle's events in
memory (at most the last `CYCLES_KEPT`, the cycles the store keeps anyway) and its row says
`DEFERRED`; the control loop encodes and stores them when it has nothing else to do (`flush`), and
`GET …/cycles/<n>` encodes one at once when asked first (`resolve`). The encoding is the one every
cycle gets (`encode_cycle`), from the same events, so a replay is the same either way.

Some events point at the table's own per-node columns rather than copies (NodeResourcesFit's
`used` and `allocatable`): the next binds change them in place. `BatchColumns` keeps those columns
compactly, as they were at each cycle of a batch — a copy at the batch's start and, after each bind,
the bound node's new values — and an event's reference is swapped for the column as its cycle saw it
when the trace is encoded.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from scheduler_core.framework.events import Event, PerNode, encode_cycle
from scheduler_core.framework.node_table import NodeTable

from .models import SchedulingCycle

__all__ = ["DEFERRED", "BatchColumns", "defer", "flush", "is_deferred", "pending_count", "resolve"]

DEFERRED: dict[str, Any] = {"deferred": True}  # the `events` of a kept cycle whose trace is not stored yet
MAX_PENDING = 500  # per cluster: the store keeps the last 500 cycles (scheduler.CYCLES_KEPT)

_lock = threading.Lock()
ColumnKey = tuple[str, str]  # ("requested" | "alloc", resource)


class BatchColumns:
    """The table's mutable per-node columns through one batch of cycles (see the module's text)."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.base: dict[ColumnKey, np.ndarray] = {key: column.copy() for key, column in self._columns().items()}
        self.steps: list[tuple[int, dict[ColumnKey, Any]]] = []  # after bind k: (node index, its new values)

    def _columns(self) -> dict[ColumnKey, np.ndarray]:
        columns = {("requested", r): c for r, c in self.table.requested.items()}
        columns.update({("alloc", r): c for r, c in self.table.alloc.items()})
        return columns

    def bound(self, node: int) -> None:
        """A pod was just bound (assumed) on node `node`: its columns' values there changed."""
        self.steps.append((node, {key: column[node] for key, column in self._columns().items()}))

    def references(self, events: list[Event]) -> list[tuple[PerNode, ColumnKey]]:
        """The events' PerNode values that are the table's own columns (found by identity)."""
        by_id = {id(column): key for key, column in self._columns().items()}
        found: list[tuple[PerNode, ColumnKey]] = []

        def walk(value: Any) -> None:
            if isinstance(value, PerNode):
                key = by_id.get(id(value.values))
                if key is not None:
                    found.append((value, key))
            elif isinstance(value, dict):  # a plugin's `detail` (lists hold each cycle's own values)
                for item in value.values():
                    if isinstance(item, dict | PerNode):
                        walk(item)

        for event in events:
            walk(event.data)
        return found

    def at(self, key: ColumnKey, cycle_index: int) -> np.ndarray:
        """Column `key` as the batch's cycle number `cycle_index` (0-based) saw it."""
        column = self.base[key].copy() if key in self.base else np.zeros(len(self.table.names), dtype=np.int64)
        for node, values in self.steps[:cycle_index]:
            if key in values:
                column[node] = values[key]
        return column


class Pending:
    """One cycle's events waiting to be stored, with what encoding them needs."""

    __slots__ = ("columns", "events", "index", "names", "references")

    def __init__(self, events: list[Event], names: Sequence[str], columns: BatchColumns | None, index: int) -> None:
        self.events = events
        self.names = names
        self.columns = columns
        self.index = index  # its place in the batch: the binds before it are the ones it saw
        self.references = columns.references(events) if columns is not None else []

    def encode(self) -> list[dict[str, Any]]:
        for per_node, key in self.references:
            assert self.columns is not None
            object.__setattr__(per_node, "values", self.columns.at(key, self.index))
        return encode_cycle(self.events, list(self.names))


_pending: dict[int, OrderedDict[int, Pending]] = {}


def is_deferred(events: Any) -> bool:
    return isinstance(events, dict) and events.get("deferred") is True


def defer(
    cluster_id: int,
    number: int,
    events: list[Event],
    names: Sequence[str],
    columns: BatchColumns | None = None,
    index: int = 0,
) -> None:
    """Keep cycle `number`'s events until stored: the table's node names they index and, for the
    `index`-th cycle of a batch, the batch's columns (`BatchColumns`)."""
    entry = Pending(events, names, columns, index)
    with _lock:
        pending = _pending.setdefault(cluster_id, OrderedDict())
        pending[number] = entry
        while len(pending) > MAX_PENDING:
            pending.popitem(last=False)


def pending_count(cluster_id: int) -> int:
    with _lock:
        return len(_pending.get(cluster_id, ()))


def _take(cluster_id: int, number: int | None = None) -> tuple[int, Pending] | None:
    with _lock:
        pending = _pending.get(cluster_id)
        if not pending:
            return None
        if number is None:
            number, entry = pending.popitem(last=True)  # the newest first: what the board shows
        elif number in pending:
            entry = pending.pop(number)
        else:
            return None
        if not pending:
            _pending.pop(cluster_id, None)
        return number, entry


def _store(cluster_id: int, number: int, entry: Pending) -> list[dict[str, Any]]:
    wire = entry.encode()
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
