"""NodeUnschedulable (plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from typing import Any

from ..api.objects import Taint
from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.runtime import Framework
from ..framework.status import Code, NodeVerdicts
from .helper import COMPARISON_OPERATORS_GATE, tolerates
from .names import NODE_UNSCHEDULABLE

NAME = NODE_UNSCHEDULABLE
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


class NodeUnschedulable:
    name = NAME

    def __init__(self, comparison_operators: bool = False) -> None:
        self.comparison_operators = comparison_operators  # TaintTolerationComparisonOperators

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        if tolerates(pod.tolerations, UNSCHEDULABLE_TAINT, self.comparison_operators):
            return NodeVerdicts.all_pass(table.n)
        return NodeVerdicts.reject_where(
            table.unschedulable, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE
        )


def new(args: dict[str, Any], handle: Framework) -> NodeUnschedulable:
    return NodeUnschedulable(handle.version.gates.enabled(COMPARISON_OPERATORS_GATE))
