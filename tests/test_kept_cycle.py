"""What a kept cycle holds: its integer columns in the smallest dtype (`columns.compact`), and totals
and tied nodes summed from its own scores when read, so later cycles on the same table change none
of it."""

from __future__ import annotations

import itertools

import numpy as np

from scheduler_core.framework.columns import compact, constant
from scheduler_core.framework.events import Event, encode_cycle
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.schedule_one import Scheduler

from .helpers import node, pod

BOUNDS = [-(2**63), -(2**31) - 1, -(2**31), -129, -128, -1, 0, 1, 100, 255, 256, 2**16, 2**32 - 1, 2**32, 2**63 - 1]


def test_compact_keeps_every_value_in_the_smallest_dtype() -> None:
    for low, high in itertools.combinations_with_replacement(BOUNDS, 2):
        column = np.array([low, (low + high) // 2, high], dtype=np.int64)
        kept = compact(column)
        assert kept.tolist() == column.tolist()
        narrower = [
            t for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32) if t(0).itemsize < kept.itemsize
        ]
        assert not any(np.iinfo(t).min <= low and high <= np.iinfo(t).max for t in narrower), (low, high, kept.dtype)


def test_compact_copies_only_when_asked_and_keeps_constants_shared() -> None:
    small = np.array([1, 2, 3], dtype=np.uint8)
    assert compact(small) is small
    assert compact(small, copy=True) is not small
    wide = np.array([0, 100], dtype=np.int64)
    assert compact(wide, copy=True).dtype == np.uint8
    zeros = constant(0, 4)
    assert compact(zeros) is zeros


def _cluster() -> NodeTable:
    nodes = [node(f"n{i}", allocatable={"cpu": str(2 + i % 3), "memory": "8Gi", "pods": "110"}) for i in range(12)]
    return NodeTable.build(nodes)


def test_a_kept_cycle_reads_the_same_after_later_cycles() -> None:
    table = _cluster()
    scheduler = Scheduler(seed=3)
    events: list[Event] = []
    scheduler.subscribe(events.append)
    first = PodInfo.of(pod("first", requests={"cpu": "500m", "memory": "1Gi"}))
    result = scheduler.schedule_pod(table, first)
    kept_events = list(events)
    wire = encode_cycle(kept_events, table.names)
    selected = next(e for e in wire if e["type"] == "host.selected")
    totals, tied = result.totals.tolist(), [int(i) for i in result.tied_top]  # type: ignore[union-attr]
    summed = sum(np.asarray(s.weighted, dtype=np.int64) for s in result.scores)
    assert totals == summed.tolist()
    assert tied == [int(i) for i in result.candidates[summed == summed.max()]]
    assert result.best_total == max(totals) == selected["total"]
    assert selected["tiedTop"] == {"$nodes": tied}
    fit = next(s for s in result.scores if s.plugin == "NodeResourcesFit")
    assert fit.raw.dtype == np.uint8  # 0..100: one byte per node is what a kept cycle holds
    scheduler.bind(table, first, result.selected)  # type: ignore[arg-type]
    for k in range(20):  # later cycles change the table and NodeResourcesFit's memo in place
        info = PodInfo.of(pod(f"p{k}", requests={"cpu": "500m", "memory": "1Gi"}))
        later = scheduler.schedule_pod(table, info)
        scheduler.bind(table, info, later.selected)  # type: ignore[arg-type]
    result._totals = None  # read again from the kept scores
    assert result.totals.tolist() == totals  # type: ignore[union-attr]
    assert [int(i) for i in result.tied_top] == tied
    again = next(e for e in encode_cycle(kept_events, table.names) if e["type"] == "host.selected")
    assert again == selected
    assert kept_events[-1].to_dict(table.names)["node"] == table.names[result.selected]  # type: ignore[index]
