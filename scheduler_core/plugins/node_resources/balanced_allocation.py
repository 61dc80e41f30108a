"""NodeResourcesBalancedAllocation (plugins/noderesources/balanced_allocation.go), v1.33–v1.34 formula.

Score = int64((1 − std) · 100) over the fractions requested/allocatable (capped at 1) of the
configured resources, with actual requests (no non-zero defaults). PreScore skips pods that request
none of those resources (PR #130260).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework.cycle_state import CycleState
from ...framework.interface import MAX_NODE_SCORE
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.status import Code, Status
from ..names import NODE_RESOURCES_BALANCED_ALLOCATION
from .resource_allocation import ResourceSpec, allocatable_and_requested, parse_resources

NAME = NODE_RESOURCES_BALANCED_ALLOCATION


class BalancedAllocation:
    name = NAME

    def __init__(self, resources: tuple[ResourceSpec, ...]) -> None:
        self.resources = resources

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        if all(pod.requests.get(spec.name, 0) == 0 for spec in self.resources):
            return Status(Code.SKIP)
        return Status()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        n = len(idx)
        fractions = []
        valids = []
        for spec in self.resources:
            alloc, req = allocatable_and_requested(table, pod, idx, spec.name, use_requested=True)
            valid = alloc != 0
            fractions.append(np.minimum(req / np.where(valid, alloc, 1), 1.0))
            valids.append(valid)
        std = np.zeros(n, dtype=np.float64)
        if len(fractions) == 2 and valids[0].all() and valids[1].all():
            std = np.abs((fractions[0] - fractions[1]) / 2)
        elif len(fractions) >= 2:
            std = _std_over_valid(np.array(fractions), np.array(valids))
        return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)


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
