"""NodeName (plugins/nodename/node_name.go)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import Code, NodeVerdicts
from .names import NODE_NAME

NAME = NODE_NAME
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        wanted = pod.pod.spec.node_name
        if not wanted:
            return NodeVerdicts.all_pass(table.n)
        mismatch = np.ones(table.n, dtype=bool)
        if wanted in table.index:
            mismatch[table.index[wanted]] = False
        return NodeVerdicts.reject_where(mismatch, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


def new(args: dict[str, Any], handle: object) -> NodeName:
    return NodeName()
