"""NodeDeclaredFeatures (plugins/nodedeclaredfeatures/nodedeclaredfeatures.go, KEP-5328; v1.35
alpha, in the default profile from v1.36).

PreFilter infers the features the pod needs (component-helpers/nodedeclaredfeatures
`InferForPodScheduling` over the version's feature registry): none → Skip. Filter: a node whose
`status.declaredFeatures` lacks one is UnschedulableAndUnresolvable; v1.35 says "node declared
features check failed - unsatisfied requirements: A, B", v1.36+ the constant "node(s) didn't match
Pod's required features". With the gate off the plugin is inert (PreFilter Skip).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.runtime import Framework
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..versions import Version
from .declared_features import required_features
from .names import NODE_DECLARED_FEATURES

NAME = NODE_DECLARED_FEATURES
STATE_KEY = "PreFilter" + NAME
LISTED_REASON = "node declared features check failed - unsatisfied requirements: "
CONSTANT_REASON = "node(s) didn't match Pod's required features"


class NodeDeclaredFeatures:
    name = NAME

    def __init__(self, version: Version | None) -> None:
        self.version = version  # None: the gate is off
        self.constant_reason = version is not None and version.has("node-declared-features-constant-reason")

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        if self.version is None:
            return None, SKIP
        needed = required_features(pod.pod, self.version.minor)
        if not needed:
            return None, SKIP
        state[STATE_KEY] = needed
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        needed: tuple[str, ...] = state[STATE_KEY]
        codes = np.zeros(table.n, dtype=np.int8)
        by_reason: dict[str, list[int]] = {}
        for i, declared in enumerate(table.declared_features):
            missing = [name for name in needed if name not in declared]
            if missing:
                reason = CONSTANT_REASON if self.constant_reason else f"{LISTED_REASON}{', '.join(missing)}"
                by_reason.setdefault(reason, []).append(i)
        if not by_reason:
            return NodeVerdicts.all_pass(table.n)
        reasons = []
        for reason, nodes in by_reason.items():
            mask = np.zeros(table.n, dtype=bool)
            mask[nodes] = True
            codes[mask] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            reasons.append((reason, mask))
        return NodeVerdicts(codes, reasons)


def new(args: dict[str, Any], handle: Framework) -> NodeDeclaredFeatures:
    version = handle.version
    return NodeDeclaredFeatures(version if version.gates.enabled("NodeDeclaredFeatures") else None)
