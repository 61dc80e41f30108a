"""NodeResourcesBalancedAllocation (plugins/noderesources/balanced_allocation.go), v1.33–v1.34 formula.

Score = int64((1 − std) · 100) over the fractions requested/allocatable (capped at 1) of the
configured resources, with actual requests (no non-zero defaults). PreScore skips pods that request
none of those resources (PR #130260).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework.columns import compact
from ...framework.cycle_state import CycleState
from ...framework.interface import MAX_NODE_SCORE
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.status import SKIP, SUCCESS, Status
from ..names import NODE_RESOURCES_BALANCED_ALLOCATION
from .resource_allocation import ResourceSpec, parse_resources, request_key, resource_column

NAME = NODE_RESOURCES_BALANCED_ALLOCATION


class BalancedAllocation:
    name = NAME

    def __init__(self, resources: tuple[ResourceSpec, ...]) -> None:
        self.resources = resources

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        if all(pod.requests.get(spec.name, 0) == 0 for spec in self.resources):
            return SKIP
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        # A node's score depends on that node alone and on the pod's requests: every node's score
        # is kept across cycles for pods requesting the same, recomputed where pods changed.
        key = (NAME, self.resources, request_key(pod, self.resources, True))
        scores = table.memo(key, lambda nodes: self._node_scores(table, pod, nodes))
        return compact(table.take(scores, idx), copy=True)  # the memo changes later

    def _node_scores(self, table: NodeTable, pod: PodInfo, idx: np.ndarray) -> np.ndarray:
        n = len(idx)
        fractions = []
        valids = []
        all_valid = True
        for spec in self.resources:
            c = resource_column(table, pod, idx, spec, use_requested=True)
            fraction = c.req / c.divisor
            fractions.append(np.minimum(fraction, 1.0, out=fraction))
            valids.append(c.alloc != 0 if not c.all_valid else None)
            all_valid = all_valid and c.all_valid
        std = np.zeros(n, dtype=np.float64)
        if len(fractions) == 2 and (all_valid or all(v is None or v.all() for v in valids)):
            std = fractions[0] - fractions[1]
            std /= 2
            np.abs(std, out=std)
        elif len(fractions) >= 2:
            masks = [np.ones(n, dtype=bool) if v is None else v for v in valids]
            std = _std_over_valid(np.array(fractions), np.array(masks))
        std = 1 - std
        std *= MAX_NODE_SCORE
        return std.astype(np.int64)


def _std_over_valid(f: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per node, the std of the fractions of resources with allocatable > 0 (upstream's rules:
    two → |(f0 − f1) / 2|, more → population std, fewer → 0)."""
    count = v.sum(axis=0)
    std = np.zeros(f.shape[1], dtype=np.float64)
    two = count == 2
    if two.any():
        order = np.argsort(~v, axis=0, kind="stable")[:2]
        first = np.take_along_axis(f, order[:1], axis=0)[0]
        second = np.take_along_axis(f, order[1:2], axis=0)[0]
        std = np.where(two, np.abs((first - second) / 2), std)
    many = count > 2
    if many.any():
        mean = np.where(v, f, 0.0).sum(axis=0) / np.maximum(count, 1)
        var = np.where(v, (f - mean) ** 2, 0.0).sum(axis=0) / np.maximum(count, 1)
        std = np.where(many, np.sqrt(var), std)
    return std


def new(args: dict[str, Any], handle: object) -> BalancedAllocation:
    return BalancedAllocation(
        parse_resources(args.get("resources"), "profile: NodeResourcesBalancedAllocation args.resources")
    )
