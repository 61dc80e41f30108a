"""Per-resource (allocatable, requested) columns and the scoring strategies.

Upstream: plugins/noderesources/resource_allocation.go (`calculateResourceAllocatableRequest`),
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go. Integer arithmetic as Go's
int64 (truncating division); rounding as Go's math.Round (half away from zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...api.loading import InputError
from ...framework.interface import MAX_NODE_SCORE
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo, is_scalar_resource

__all__ = [
    "ResourceColumn",
    "ResourceSpec",
    "allocatable_and_requested",
    "least_allocated",
    "most_allocated",
    "parse_resources",
    "request_key",
    "requested_to_capacity_ratio",
    "resource_column",
    "round_half_away",
]

MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(frozen=True)
class ResourceSpec:
    name: str
    weight: int


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def parse_resources(raw: object, where: str) -> tuple[ResourceSpec, ...]:
    if not raw:
        return DEFAULT_RESOURCES
    if not isinstance(raw, list):
        raise InputError(f"{where}: must be a list of {{name, weight}}")
    out = []
    for k, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise InputError(f"{where}[{k}].name: Required value")
        weight = item.get("weight", 1) or 1
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            raise InputError(f"{where}[{k}].weight: must be an integer between 1 and 100")
        out.append(ResourceSpec(item["name"], weight))
    return tuple(out)


def round_half_away(values: np.ndarray) -> np.ndarray:
    """Go `math.Round` on float64 arrays."""
    return np.sign(values) * np.floor(np.abs(values) + 0.5)


def floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact `a // b` for non-negative int64 arrays with b > 0.

    numpy's integer division is not vectorized; float division is. IEEE division is correctly
    rounded, so truncating the float quotient is exact whenever a + b < 2**53 (the distance from
    a/b to the next integer, at least 1/b, then exceeds half an ulp of the quotient).
    """
    if len(a) and int(a.max()) + int(b.max()) >= 2**53:
        return a // b
    return (a / b).astype(np.int64)


def _go_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int64 division truncating toward zero (Go), where b != 0."""
    q = np.abs(a) // np.maximum(np.abs(b), 1)
    return np.where((a < 0) ^ (b < 0), -q, q)


def allocatable_and_requested(
    table: NodeTable, pod: PodInfo, idx: np.ndarray, resource: str, use_requested: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per scored node: (allocatable, requested including this pod); (0, 0) where the resource is dropped."""
    take = table.take
    if resource == "cpu":
        alloc = take(table.alloc["cpu"], idx)
        if use_requested:
            return alloc, take(table.requested["cpu"], idx) + pod.requests.get("cpu", 0)
        return alloc, take(table.non_zero_cpu, idx) + pod.non_zero_cpu
    if resource == "memory":
        alloc = take(table.alloc["memory"], idx)
        if use_requested:
            return alloc, take(table.requested["memory"], idx) + pod.requests.get("memory", 0)
        return alloc, take(table.non_zero_memory, idx) + pod.non_zero_memory
    if resource == "ephemeral-storage":
        used = take(table.requested["ephemeral-storage"], idx)
        return take(table.alloc["ephemeral-storage"], idx), used + pod.requests.get("ephemeral-storage", 0)
    zeros = np.zeros(len(idx), dtype=np.int64)
    request = pod.requests.get(resource, 0)
    # Only scalar resources live in NodeInfo's ScalarResources: any other name ("pods", "storage")
    # is omitted upstream, as is a scalar the pod does not request or no node offers.
    if not is_scalar_resource(resource) or request == 0 or resource not in table.alloc:
        return zeros, zeros
    requested = table.requested.get(resource)
    used = take(requested, idx) if requested is not None else zeros
    return take(table.alloc[resource], idx), used + request


@dataclass(slots=True)  # not frozen: built per resource per cycle, and frozen ones are ~3× slower to build
class ResourceColumn:
    """One resource over the scored nodes: allocatable, requested (with the pod), its weight, and
    node-static helpers: `divisor` (allocatable as float64, 1 where it is 0) and whether every node
    of the table has some allocatable (`all_valid`)."""

    alloc: np.ndarray
    req: np.ndarray
    weight: int
    divisor: np.ndarray
    all_valid: bool
    exact_float: bool  # alloc·101 < 2**53 on every node: float division truncates exactly

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.alloc, self.req, self.weight))


def resource_column(
    table: NodeTable, pod: PodInfo, idx: np.ndarray, spec: ResourceSpec, use_requested: bool
) -> ResourceColumn:
    """`allocatable_and_requested` with the node-static divisor the scorers divide by."""
    alloc, req = allocatable_and_requested(table, pod, idx, spec.name, use_requested)
    if is_dropped(table, pod, spec.name):
        return ResourceColumn(alloc, req, spec.weight, np.ones(len(idx)), False, True)
    divisor, all_valid, exact = table.resource_statics(spec.name)
    return ResourceColumn(alloc, req, spec.weight, table.take(divisor, idx), all_valid, exact)


def request_key(pod: PodInfo, specs: tuple[ResourceSpec, ...], use_requested: bool) -> tuple[int, ...]:
    """What `allocatable_and_requested` reads of the pod for `specs`: per-node scores computed for
    one pod hold for any pod with the same key (`NodeTable.memo`)."""
    key = []
    for spec in specs:
        if spec.name == "cpu" and not use_requested:
            key.append(pod.non_zero_cpu)
        elif spec.name == "memory" and not use_requested:
            key.append(pod.non_zero_memory)
        else:
            key.append(pod.requests.get(spec.name, 0))
    return tuple(key)


def is_dropped(table: NodeTable, pod: PodInfo, resource: str) -> bool:
    """Whether `allocatable_and_requested` answers (0, 0) for `resource`."""
    if resource in ("cpu", "memory", "ephemeral-storage"):
        return False
    return not is_scalar_resource(resource) or pod.requests.get(resource, 0) == 0 or resource not in table.alloc


def least_allocated(columns: list[ResourceColumn], n: int) -> np.ndarray:
    """`leastResourceScorer`: Σ((cap−req)·100/cap · w) / Σw over resources with cap > 0."""
    total: np.ndarray | None = None
    weights: np.ndarray | int = 0
    for c in columns:
        # (cap − req)·100, or 0 where the request does not fit (req > cap) or cap is 0
        free = c.alloc - c.req
        free *= MAX_NODE_SCORE
        np.maximum(free, 0, out=free)
        score = (free / c.divisor).astype(np.int64) if c.exact_float else free // c.divisor.astype(np.int64)
        if c.weight != 1:
            score *= c.weight
        if total is None:
            total = score
        else:
            total += score
        weights = weights + (c.weight if c.all_valid else (c.alloc != 0) * c.weight)
    if total is None:
        return np.zeros(n, dtype=np.int64)
    if isinstance(weights, int):
        return total // weights if weights > 1 else (total if weights == 1 else np.zeros(n, dtype=np.int64))
    return np.where(weights > 0, floor_div(total, np.maximum(weights, 1)), 0)


def most_allocated(columns: list[ResourceColumn], n: int) -> np.ndarray:
    """`mostResourceScorer`: Σ(min(req, cap)·100/cap · w) / Σw over resources with cap > 0."""
    total = np.zeros(n, dtype=np.int64)
    weights = np.zeros(n, dtype=np.int64)
    for alloc, req, weight in columns:
        valid = alloc != 0
        capped = np.where(valid, np.minimum(req, alloc), 0)
        score = floor_div(capped * MAX_NODE_SCORE, np.where(valid, alloc, 1))
        total += score * weight
        weights += valid * weight
    return np.where(weights > 0, floor_div(total, np.maximum(weights, 1)), 0)


def parse_shape(raw: object, where: str) -> list[tuple[int, int]]:
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}: at least one point is required")
    points = []
    for k, item in enumerate(raw):
        if not isinstance(item, dict):
            raise InputError(f"{where}[{k}]: must be {{utilization, score}}")
        utilization, score = item.get("utilization", 0), item.get("score", 0)
        if not isinstance(utilization, int) or not 0 <= utilization <= 100:
            raise InputError(f"{where}[{k}].utilization: must be an integer between 0 and 100")
        if not isinstance(score, int) or not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise InputError(f"{where}[{k}].score: must be an integer between 0 and 10")
        if points and utilization <= points[-1][0]:
            raise InputError(f"{where}[{k}].utilization: values must be sorted in increasing order")
        points.append((utilization, score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)))
    return points


def broken_linear(points: list[tuple[int, int]], p: np.ndarray) -> np.ndarray:
    out = np.full(len(p), points[-1][1], dtype=np.int64)
    done = np.zeros(len(p), dtype=bool)
    for i, (u, s) in enumerate(points):
        hit = ~done & (p <= u)
        if i == 0:
            out[hit] = s
        else:
            u0, s0 = points[i - 1]
            out[hit] = s0 + _go_div((s - s0) * (p[hit] - u0), np.full(int(hit.sum()), u - u0, dtype=np.int64))
        done |= hit
    return out


def requested_to_capacity_ratio(columns: list[ResourceColumn], n: int, shape: list[tuple[int, int]]) -> np.ndarray:
    """`requestedToCapacityRatioScorer`: broken-linear f(utilization), averaged over resources scoring > 0."""
    total = np.zeros(n, dtype=np.int64)
    weights = np.zeros(n, dtype=np.int64)
    for alloc, req, weight in columns:
        valid = alloc != 0
        utilization = np.where(
            valid & (req <= alloc), req * MAX_NODE_SCORE // np.where(valid, alloc, 1), MAX_NODE_SCORE
        )
        score = broken_linear(shape, utilization)
        counted = valid & (score > 0)
        total += np.where(counted, score * weight, 0)
        weights += np.where(counted, weight, 0)
    averaged = round_half_away(total / np.maximum(weights, 1)).astype(np.int64)
    return np.where(weights > 0, averaged, 0)
