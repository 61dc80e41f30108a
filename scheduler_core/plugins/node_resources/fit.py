"""NodeResourcesFit (plugins/noderesources/fit.go) with its scoring strategies.

Filter reasons, in upstream's order: Too many pods, Insufficient cpu, memory, ephemeral-storage,
then each requested scalar resource. Since v1.34 (PR #131345) a request above the node's *total*
allocatable makes the status UnschedulableAndUnresolvable ("Too many pods" never does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...api.loading import InputError
from ...framework.columns import compact
from ...framework.cycle_state import CycleState
from ...framework.events import PerNode
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.status import SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..names import NODE_RESOURCES_FIT
from .resource_allocation import (
    ResourceSpec,
    least_allocated,
    most_allocated,
    parse_resources,
    parse_shape,
    request_key,
    requested_to_capacity_ratio,
    resource_column,
)

NAME = NODE_RESOURCES_FIT
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_TOO_MANY_PODS = "Too many pods"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


def is_extended_resource(name: str) -> bool:
    """`v1helper.IsExtendedResourceName`: a domain-prefixed name outside kubernetes.io, not "requests.*"."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


class Fit:
    name = NAME

    def __init__(
        self,
        strategy: str,
        resources: tuple[ResourceSpec, ...],
        shape: list[tuple[int, int]] | None,
        ignored_resources: frozenset[str],
        ignored_groups: frozenset[str],
    ) -> None:
        self.strategy = strategy
        self.resources = resources
        self.shape = shape
        self.ignored_resources = ignored_resources
        self.ignored_groups = ignored_groups

    def _ignored(self, resource: str) -> bool:
        """ignoredResources / ignoredResourceGroups apply to extended resources only (not hugepages-*,
        not *kubernetes.io/* names), as `v1helper.IsExtendedResourceName` gates them upstream."""
        if not is_extended_resource(resource):
            return False
        return resource in self.ignored_resources or resource.split("/", 1)[0] in self.ignored_groups

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        state[PRE_FILTER_STATE_KEY] = pod.requests
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        # Each check is per node and reads that node alone: kept across cycles (NodeTable.memo)
        # and recomputed where pods changed; a kept verdict gets its own copies.
        n = table.n
        take = table.take
        requests = pod.requests
        reasons: list[tuple[str, np.ndarray]] = []
        unresolvable: np.ndarray | None = None
        failed: np.ndarray | None = None
        pods = table.memo((NAME, "pods"), lambda i: take(table.pod_count, i) + 1 > take(table.alloc["pods"], i))
        if pods.any():
            failed = pods.copy()  # one kept copy for both: neither is changed in place
            reasons.append((ERR_REASON_TOO_MANY_PODS, failed))
        scalars = sorted(r for r, v in requests.items() if r not in ("cpu", "memory", "ephemeral-storage") and v)
        base_zero = all(requests.get(r, 0) == 0 for r in ("cpu", "memory", "ephemeral-storage"))
        detail: dict[str, object] = {}
        if not (base_zero and not scalars):
            for resource in ("cpu", "memory", "ephemeral-storage", *scalars):
                request = requests.get(resource, 0)
                if request == 0 or (resource in scalars and self._ignored(resource)):
                    continue
                alloc = table.alloc.get(resource)
                alloc = alloc if alloc is not None else np.zeros(n, dtype=np.int64)
                used = table.requested.get(resource)
                used = used if used is not None else np.zeros(n, dtype=np.int64)
                short = table.memo(
                    (NAME, "short", resource, request),
                    lambda i, alloc=alloc, used=used, request=request: request > take(alloc, i) - take(used, i),
                )
                detail[resource] = {"request": request, "used": PerNode(used), "allocatable": PerNode(alloc)}
                if short.any():
                    short = short.copy()
                    reasons.append((insufficient(resource), short))
                    failed = short if failed is None else failed | short
                    beyond = short & (request > alloc)
                    unresolvable = beyond if unresolvable is None else unresolvable | beyond
        if failed is None:
            return NodeVerdicts(NodeVerdicts.all_pass(n).codes, reasons, detail, passes_all=True)
        rejected = np.int8(Code.UNSCHEDULABLE)
        if unresolvable is not None:
            rejected = np.where(unresolvable, np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), rejected)
        codes = np.where(failed, rejected, np.int8(0)).astype(np.int8)
        return NodeVerdicts(codes, reasons, detail)

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        # A node's score depends on that node alone and on the pod's requests: every node's score
        # is kept across cycles for pods requesting the same, recomputed where pods changed.
        key = (NAME, self.strategy, self.resources, tuple(self.shape or ()), request_key(pod, self.resources, False))
        scores = table.memo(key, lambda nodes: self._node_scores(table, pod, nodes))
        return compact(table.take(scores, idx), copy=True)  # the memo changes later

    def _node_scores(self, table: NodeTable, pod: PodInfo, nodes: np.ndarray) -> np.ndarray:
        columns = [resource_column(table, pod, nodes, spec, use_requested=False) for spec in self.resources]
        if self.strategy == MOST_ALLOCATED:
            return most_allocated(columns, len(nodes))
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            assert self.shape is not None
            return requested_to_capacity_ratio(columns, len(nodes), self.shape)
        return least_allocated(columns, len(nodes))


def new(args: dict[str, Any], handle: object) -> Fit:
    where = "profile: pluginConfig NodeResourcesFit args"
    strategy_args = args.get("scoringStrategy") or {}
    if not isinstance(strategy_args, dict):
        raise InputError(f"{where}.scoringStrategy: must be an object")
    strategy = strategy_args.get("type") or LEAST_ALLOCATED
    if strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO):
        raise InputError(
            f'{where}.scoringStrategy.type: Unsupported value: "{strategy}": supported values: '
            f'"{LEAST_ALLOCATED}", "{MOST_ALLOCATED}", "{REQUESTED_TO_CAPACITY_RATIO}"'
        )
    resources = parse_resources(strategy_args.get("resources"), f"{where}.scoringStrategy.resources")
    shape = None
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        ratio = strategy_args.get("requestedToCapacityRatio") or {}
        shape = parse_shape(ratio.get("shape"), f"{where}.scoringStrategy.requestedToCapacityRatio.shape")
    return Fit(
        strategy,
        resources,
        shape,
        frozenset(args.get("ignoredResources") or ()),
        frozenset(args.get("ignoredResourceGroups") or ()),
    )
