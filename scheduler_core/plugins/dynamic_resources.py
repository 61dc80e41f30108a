"""DynamicResources (plugins/dynamicresources/dynamicresources.go), v1.34 with DRA GA and on.

clusterviz pods carry no ResourceClaims: PreFilter writes its (empty) state and returns Skip;
PostFilter answers "no new claims to deallocate". When an earlier PreFilter rejected the pod as
unresolvable, PreFilter never ran, the state read fails and PostFilter returns Error "not found" —
which is what v1.34 clusters print after such a message.
"""

from __future__ import annotations

from typing import Any

from ..framework.cycle_state import CycleState
from ..framework.diagnosis import Diagnosis
from ..framework.interface import PostFilterResult
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import SKIP, Code, NodeVerdicts, PreFilterResult, Status
from .names import DYNAMIC_RESOURCES

NAME = DYNAMIC_RESOURCES
STATE_KEY = "PreFilter" + NAME
ERR_NO_CLAIMS = "no new claims to deallocate"
ERR_STATE_NOT_FOUND = "not found"  # framework.ErrNotFound from CycleState.Read


class DynamicResources:
    name = NAME

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        state[STATE_KEY] = ()
        return None, SKIP

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        return NodeVerdicts.all_pass(table.n)

    def post_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        if STATE_KEY not in state:
            return None, Status(Code.ERROR, (ERR_STATE_NOT_FOUND,))
        return None, Status(Code.UNSCHEDULABLE, (ERR_NO_CLAIMS,))


def new(args: dict[str, Any], handle: object) -> DynamicResources:
    return DynamicResources()
