"""NodeResourcesBalancedAllocation (plugins/noderesources/balanced_allocation.go).

balance = int64((1 − std) · 100) over the fractions requested/allocatable (capped at 1) of the
configured resources, with actual requests (no non-zero defaults). PreScore skips pods that request
none of those resources (PR #130260). Up to v1.35 the score is the balance with the pod; from
v1.36 (kubernetes/kubernetes#135573) it scores the change: 50 + (50 + with − without) / 2, Go's
integer division (so 75 when the pod changes nothing, 50 to 100).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework.columns import compact
from ...framework.cycle_state import CycleState
from ...framework.interface import MAX_NODE_SCORE
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.runtime import Framework
from ...framework.status import SKIP, SUCCESS, Status
from ..names import NODE_RESOURCES_BALANCED_ALLOCATION
from .resource_allocation import ResourceSpec, is_dropped, parse_resources, request_key, resource_column

NAME = NODE_RESOURCES_BALANCED_ALLOCATION
# Up to this many nodes to (re)score, Python floats beat numpy's cost per call (after the first
# cycle the memo rescores only the nodes a bind changed, usually one); the arithmetic is the same
# IEEE double arithmetic in the same order, so the scores are identical.
SCALAR_NODES = 8


class BalancedAllocation:
    name = NAME

    def __init__(self, resources: tuple[ResourceSpec, ...], score_change: bool = False) -> None:
        self.resources = resources
        self.score_change = score_change  # v1.36+: score the change in balance (#135573)

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        if all(pod.requests.get(spec.name, 0) == 0 for spec in self.resources):
            return SKIP
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        # A node's score depends on that node alone and on the pod's requests: every node's score
        # is kept across cycles for pods requesting the same, recomputed where pods changed.
        key = (NAME, self.resources, self.score_change, request_key(pod, self.resources, True))
        scores = table.memo(key, lambda nodes: self._node_scores(table, pod, nodes))
        return compact(table.take(scores, idx), copy=True)  # the memo changes later

    def _node_scores(self, table: NodeTable, pod: PodInfo, idx: np.ndarray) -> np.ndarray:
        columns = [resource_column(table, pod, idx, spec, use_requested=True) for spec in self.resources]
        valids = [c.alloc != 0 if not c.all_valid else None for c in columns]
        all_valid = all(c.all_valid for c in columns)
        n = len(idx)
        requests = [0 if is_dropped(table, pod, s.name) else pod.requests.get(s.name, 0) for s in self.resources]
        if n <= SCALAR_NODES and len(columns) == 2 and all_valid:
            return self._few_node_scores(columns, requests, n)
        if not self.score_change:
            return _balance([c.req / c.divisor for c in columns], valids, all_valid, n)
        # with the pod and without it (resource_column adds the pod's request), in one pass of 2n
        fractions = []
        for request, c in zip(requests, columns, strict=True):
            both = np.concatenate((c.req, c.req - request)) / np.concatenate((c.divisor, c.divisor))
            fractions.append(both)
        both_valids = [None if v is None else np.concatenate((v, v)) for v in valids]
        balance = _balance(fractions, both_valids, all_valid, 2 * n)
        change = MAX_NODE_SCORE // 2 + balance[:n] - balance[n:]
        halved = np.where(change < 0, -(-change // 2), change // 2)  # Go's division truncates toward 0
        return MAX_NODE_SCORE // 2 + halved

    def _few_node_scores(self, columns: list[Any], requests: list[int], n: int) -> np.ndarray:
        """`_node_scores` for two resources, every allocatable > 0 and at most SCALAR_NODES nodes."""
        (req0, req1), (div0, div1) = ([c.req.tolist() for c in columns], [c.divisor.tolist() for c in columns])
        out = []
        for i in range(n):
            with_pod = _pair_balance(float(req0[i]) / float(div0[i]), float(req1[i]) / float(div1[i]))
            if not self.score_change:
                out.append(with_pod)
                continue
            without = _pair_balance(
                float(req0[i] - requests[0]) / float(div0[i]), float(req1[i] - requests[1]) / float(div1[i])
            )
            change = MAX_NODE_SCORE // 2 + with_pod - without
            out.append(MAX_NODE_SCORE // 2 + (-(-change // 2) if change < 0 else change // 2))
        return np.array(out, dtype=np.int64)


def _pair_balance(f0: float, f1: float) -> int:
    """`_balance` of one node with two resources: int64((1 − |f0 − f1| / 2) · 100), fractions capped at 1."""
    std = abs((min(f0, 1.0) - min(f1, 1.0)) / 2)
    return int((1 - std) * MAX_NODE_SCORE)


def _balance(fractions: list[np.ndarray], valids: list[np.ndarray | None], all_valid: bool, n: int) -> np.ndarray:
    """int64((1 − std) · 100) per node over the capped fractions (`balancedResourceScorer`)."""
    fractions = [np.minimum(f, 1.0, out=f) for f in fractions]
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


def new(args: dict[str, Any], handle: Framework) -> BalancedAllocation:
    return BalancedAllocation(
        parse_resources(args.get("resources"), "profile: NodeResourcesBalancedAllocation args.resources"),
        score_change=handle.version.has("balanced-allocation-change"),
    )
