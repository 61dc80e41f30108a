"""SchedulingGates (PreEnqueue), PrioritySort (QueueSort) and DefaultBinder (Bind)."""

from __future__ import annotations

from typing import Any

from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import SUCCESS, Code, Status
from .names import DEFAULT_BINDER, PRIORITY_SORT, SCHEDULING_GATES


class SchedulingGates:
    """plugins/schedulinggates: a gated pod never enters the active queue."""

    name = SCHEDULING_GATES

    def pre_enqueue(self, pod: PodInfo, table: NodeTable) -> Status:
        gates = [g.name for g in pod.pod.spec.scheduling_gates]
        if not gates:
            return SUCCESS
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"waiting for scheduling gates: [{' '.join(gates)}]",))


class PrioritySort:
    """plugins/queuesort: higher priority first, then the earlier queue timestamp."""

    name = PRIORITY_SORT

    def less(self, a: tuple[int, float], b: tuple[int, float]) -> bool:
        """Each argument is (priority, queue timestamp)."""
        return a[0] > b[0] or (a[0] == b[0] and a[1] < b[1])


class DefaultBinder:
    """plugins/defaultbinder: binds the pod to the node (here: accounts it in the table)."""

    name = DEFAULT_BINDER

    def bind(self, state: CycleState, pod: PodInfo, table: NodeTable, i: int) -> Status:
        table.add_pod(pod, i)
        return SUCCESS


def new_scheduling_gates(args: dict[str, Any], handle: object) -> SchedulingGates:
    return SchedulingGates()


def new_priority_sort(args: dict[str, Any], handle: object) -> PrioritySort:
    return PrioritySort()


def new_default_binder(args: dict[str, Any], handle: object) -> DefaultBinder:
    return DefaultBinder()
