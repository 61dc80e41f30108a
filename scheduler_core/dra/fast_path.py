"""The allocator's answer on every node at once, for the common claim: one device of one class.

A pod whose only claim to allocate asks for exactly one device (one `exactly` request, count 1,
no admin access, no constraints) from node-local slices gets, on each node, the first device in
GatherPools order that is free and selectable — the first step of the allocator's search, which
then succeeds. That is computed here for all nodes with numpy: the node-local devices are one
column set (rows grouped by node, in pool and slice order), a device's selector verdict is kept
per selector list across cycles (it depends only on the device and the expressions), and the
first free row of each node whose verdict is not false is looked up with one `searchsorted`.
Rows whose verdict is unknown are evaluated — only those, so a CEL error surfaces exactly on the
nodes where the search meets the device, as upstream's search would. Nodes with an invalid pool,
and anything the conditions exclude, go the general allocator's way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..api.resource import ResourceClaim
from .allocator import AllocationError, Allocator, DeviceID, Features
from .index import DraIndex
from .pools import PoolDevice, SliceIndex

__all__ = ["DeviceColumns", "FastOutcome", "columns_of", "fast_outcomes", "single_device_request"]

UNKNOWN, FALSE, TRUE, ERROR = -1, 0, 1, 2


@dataclass
class FastOutcome:
    """Per table node: the device row chosen (-1: none), the error (if the search met one), general-path nodes."""

    row: np.ndarray  # int64 per node: the chosen row, -1 when no device
    errors: dict[int, AllocationError]
    general: np.ndarray  # bool per node: decided by the general allocator instead


class DeviceColumns:
    """The node-local devices of a SliceIndex, one row each, grouped by node in GatherPools order."""

    def __init__(self, slices: SliceIndex, features: Features) -> None:
        self.nodes: list[str] = []
        self.starts: list[int] = []
        self.invalid: set[str] = set()  # nodes with an invalid pool: general path
        devices: list[PoolDevice] = []
        usable: list[bool] = []  # binding conditions make a device unselectable (checked before selectors)
        counters: list[bool] = []  # consuming counters makes a selectable device unallocatable
        for name in sorted(slices.local):
            self.nodes.append(name)
            self.starts.append(len(devices))
            for pool in slices.local_pools(name):
                if pool.invalid:
                    self.invalid.add(name)
                for device in pool.devices:
                    if features.unmodelled and features.unmodelled_use(device):
                        self.invalid.add(name)  # the general path refuses it with the gate's error
                    devices.append(device)
                    extra = device.device.model_extra or {}
                    usable.append(features.device_binding_conditions or not extra.get("bindingConditions"))
                    counters.append(not features.partitionable_devices and bool(extra.get("consumesCounters")))
        self.devices = devices
        self.row_of: dict[DeviceID, int] = {DeviceID(d.driver, d.pool, d.name): k for k, d in enumerate(devices)}
        self.usable = np.array(usable, dtype=bool)
        self.counters = np.array(counters, dtype=bool)
        self.verdicts: dict[tuple[str, ...], np.ndarray] = {}  # selector expressions → int8 per row
        self._in_use = np.zeros(len(devices), dtype=bool)
        self._followed: tuple[int, int] | None = None  # (journal epoch, position) applied to _in_use
        self._segments: tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray] | None = None

    def in_use(self, index: DraIndex) -> np.ndarray:
        """Rows whose device is in use, following the index's journal of changes."""
        position = len(index.journal)
        if self._followed is None or self._followed[0] != index.journal_epoch or self._followed[1] > position:
            self._in_use[:] = False
            for device in index.in_use():
                k = self.row_of.get(device)
                if k is not None:
                    self._in_use[k] = True
        else:
            for device, used in index.journal[self._followed[1] :]:
                k = self.row_of.get(device)
                if k is not None:
                    self._in_use[k] = used
        self._followed = (index.journal_epoch, position)
        return self._in_use

    def segments(self, node_names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per table node: its first row, its end row (equal: no rows), and whether it needs the general path."""
        key = tuple(node_names)
        if self._segments is not None and self._segments[0] == key:
            return self._segments[1], self._segments[2], self._segments[3]
        total = len(self.devices)
        n = len(node_names)
        where = {name: j for j, name in enumerate(self.nodes)}
        bounds = [*self.starts, total]
        start = np.full(n, total, dtype=np.int64)
        end = np.full(n, total, dtype=np.int64)
        general = np.zeros(n, dtype=bool)
        for i, name in enumerate(node_names):
            j = where.get(name)
            if j is None:
                continue
            if name in self.invalid:
                general[i] = True
                continue
            start[i], end[i] = bounds[j], bounds[j + 1]
        self._segments = (key, start, end, general)
        return start, end, general

    def verdict_column(self, expressions: tuple[str, ...]) -> np.ndarray:
        column = self.verdicts.get(expressions)
        if column is None:
            column = self.verdicts[expressions] = np.full(len(self.devices), UNKNOWN, dtype=np.int8)
        return column


def columns_of(slices: SliceIndex, allocator: Allocator) -> DeviceColumns:
    """The SliceIndex's columns (built once per index and set of gates)."""
    features = allocator.features
    columns = slices.fast_columns.get(features)
    if columns is None:
        columns = slices.fast_columns[features] = DeviceColumns(slices, features)
    return columns


def single_device_request(claims: Sequence[ResourceClaim], slices: SliceIndex) -> bool:
    """Whether the fast path gives the allocator's answer for these claims."""
    if len(claims) != 1 or slices.shared:
        return False
    devices = claims[0].spec.devices
    if len(devices.requests) != 1 or devices.constraints:
        return False
    exactly = devices.requests[0].exactly
    return (
        exactly is not None
        and exactly.allocation_mode == "ExactCount"
        and (exactly.count or 1) == 1
        and exactly.admin_access is None
        and all(selector.cel is not None for selector in exactly.selectors)
    )


def fast_outcomes(allocator: Allocator, index: DraIndex, claim: ResourceClaim, node_names: list[str]) -> FastOutcome:
    """The first free selectable device of each node (in `node_names` order)."""
    slices = allocator.slices
    columns = columns_of(slices, allocator)
    n = len(node_names)
    row = np.full(n, -1, dtype=np.int64)
    general = np.zeros(n, dtype=bool)
    errors: dict[int, AllocationError] = {}
    request = claim.spec.devices.requests[0]
    exactly = request.exactly
    assert exactly is not None
    device_class = allocator.classes[exactly.device_class_name]
    class_selectors = device_class.spec.selectors
    expressions = tuple(s.cel.expression for s in class_selectors) + tuple(  # type: ignore[union-attr]
        s.cel.expression
        for s in exactly.selectors  # type: ignore[union-attr]
    )
    total = len(columns.devices)
    if total == 0:
        return FastOutcome(row, errors, general)
    verdicts = columns.verdict_column(expressions)
    free = columns.usable & ~columns.in_use(index)
    # the allocator's set is the index's at PreFilter: the same devices, unless a caller passed its own
    if len(allocator.allocated) != len(index.in_use()):
        free = columns.usable.copy()
        for device in allocator.allocated:
            k = columns.row_of.get(device)
            if k is not None:
                free[k] = False
    seg_start, seg_end, general = columns.segments(node_names)
    general = general.copy()
    pending = seg_start < seg_end
    owner_class = f"class {device_class.metadata.name}"
    owner_claim = f"claim {claim.metadata.namespace}/{claim.metadata.name}"
    n_class = len(class_selectors)
    while pending.any():
        candidates = np.flatnonzero(free & (verdicts != FALSE) & ~(columns.counters & (verdicts == TRUE)))
        nodes = np.flatnonzero(pending)
        at = np.searchsorted(candidates, seg_start[nodes])
        first = (
            np.where(at < len(candidates), candidates[np.minimum(at, len(candidates) - 1)], total)
            if len(candidates)
            else np.full(len(nodes), total)
        )
        inside = first < seg_end[nodes]
        pending[nodes[~inside]] = False  # no candidate left: cannot allocate
        nodes, first = nodes[inside], first[inside]
        states = verdicts[first]
        known = states != UNKNOWN
        for i, k in zip(nodes[known].tolist(), first[known].tolist(), strict=True):
            pending[i] = False
            if verdicts[k] == TRUE:
                row[i] = k
            else:
                errors[i] = _error_of(
                    allocator, columns.devices[k], class_selectors, exactly.selectors, owner_class, owner_claim, n_class
                )
        for k in np.unique(first[~known]).tolist():
            verdicts[k] = _evaluate(
                allocator, columns.devices[k], class_selectors, exactly.selectors, owner_class, owner_claim
            )
    return FastOutcome(row, errors, general)


def _evaluate(
    allocator: Allocator, device: PoolDevice, class_selectors, claim_selectors, owner_class: str, owner_claim: str
) -> int:
    try:
        if allocator._selectors_match(class_selectors, device, owner_class) >= 0:
            return FALSE
        if allocator._selectors_match(claim_selectors, device, owner_claim) >= 0:
            return FALSE
    except AllocationError:
        return ERROR
    return TRUE


def _error_of(
    allocator: Allocator,
    device: PoolDevice,
    class_selectors,
    claim_selectors,
    owner_class: str,
    owner_claim: str,
    n_class: int,
) -> AllocationError:
    """The error the search meets at `device` (selector results are memoised, so this is cheap)."""
    try:
        allocator._selectors_match(class_selectors, device, owner_class)
        allocator._selectors_match(claim_selectors, device, owner_claim)
    except AllocationError as exc:
        return exc
    raise AssertionError("a device marked ERROR evaluated cleanly")  # pragma: no cover
