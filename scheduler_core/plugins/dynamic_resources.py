"""DynamicResources (plugins/dynamicresources/dynamicresources.go, v1.34: DRA GA and on).

PreEnqueue and PreFilter find the pod's ResourceClaims (`spec.resourceClaims`: by name, or made
from a template and named in `status.resourceClaimStatuses`); a claim that is missing, being
deleted, not the pod's, allocated and reserved by 256 other consumers, or in the middle of being
allocated for another pod keeps the pod Pending (UnschedulableAndUnresolvable, upstream's texts).
Filter, per node: an allocated claim's `allocation.nodeSelector` must match the node; the claims
still to allocate go to the structured allocator (scheduler_core/dra/allocator.py), whose
per-node result Reserve keeps and PreBind writes into the claims (`status.allocation`, the pod in
`status.reservedFor`). PostFilter deallocates one allocated claim that is unavailable on some node
and reserved by nobody else ("deallocation of ResourceClaim completed"); for a pod without claims
it says "no new claims to deallocate" (the v1.34 text; see the Errata). The deallocation is
returned in the PostFilterResult's detail for the caller to write (the core changes no claim in
PostFilter, so an explain stays a what-if).

Gates as v1.34 ships them: DRAAdminAccess and DRAPrioritizedList on (beta); device taints,
partitionable devices, binding conditions, consumable capacity and extended resources backed by
DRA off (alpha). DRASchedulerFilterTimeout (beta, 10 s) bounds wall-clock time, which a simulator
does not have: not modelled.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api.resource import AllocationResult, ResourceClaim, ResourceClaimConsumerReference
from ..dra.allocator import AllocationError, AllocationReport, Allocator, Features
from ..dra.claims import ClaimError, can_be_reserved, claim_name, is_for_pod, is_reserved_for_pod, lister_not_found
from ..dra.fast_path import fast_outcomes, single_device_request
from ..dra.index import DraIndex
from ..framework.cycle_state import CycleState
from ..framework.diagnosis import Diagnosis
from ..framework.interface import PostFilterResult
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.runtime import Framework
from ..framework.selectors import compile_node_selector_term
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from .names import DYNAMIC_RESOURCES

NAME = DYNAMIC_RESOURCES
STATE_KEY = NAME
FINALIZER = "resource.kubernetes.io/delete-protection"  # resourceapi.Finalizer

ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_IN_USE = "resourceclaim in use"
ERR_NO_CLAIMS = "no new claims to deallocate"
ERR_DEALLOCATED = "deallocation of ResourceClaim completed"
ERR_STILL_NOT_SCHEDULABLE = "still not schedulable"
ERR_STATE_NOT_FOUND = "not found"  # framework.ErrNotFound from CycleState.Read

# EventsToRegister (queueing hints on, as in v1.34): what may make a pod this plugin rejected schedulable
EVENTS_TO_REGISTER: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("Node", ("Add", "UpdateNodeLabel", "UpdateNodeAllocatable"), None),
    ("ResourceClaim", ("Add", "Update"), "is_schedulable_after_claim_change"),
    ("Pod", ("UpdatePodGeneratedResourceClaim",), "is_schedulable_after_pod_change"),
    ("DeviceClass", ("Add", "Update"), None),
    ("ResourceSlice", ("Add", "Update"), None),
)
QUEUE, QUEUE_SKIP = "Queue", "QueueSkip"


def _unresolvable(reason: str) -> Status:
    """`statusUnschedulable`: every rejection of this plugin is UnschedulableAndUnresolvable."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


def _error(message: str) -> Status:
    return Status(Code.ERROR, (message,))


@dataclass
class DraState:
    """`stateData`: the pod's claims as PreFilter found them and what Filter and Reserve decided."""

    claims: list[ResourceClaim] = field(default_factory=list)
    available_on: list[np.ndarray | None] = field(default_factory=list)  # per claim: nodes its allocation allows
    to_allocate: list[int] = field(default_factory=list)  # indexes of the claims without an allocation
    allocator: Allocator | None = None
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[int, list[AllocationResult]] = field(default_factory=dict)  # node index → results
    lazy: np.ndarray | None = None  # nodes whose results the allocator builds at Reserve (fast path)
    allocations: dict[int, AllocationResult] = field(default_factory=dict)  # claim index → reserved result

    def clone(self) -> DraState:
        return self  # upstream's Clone returns the same pointer


@dataclass
class _Outcomes:
    """The allocator's verdict on every node: results, lazily built results, no solution, or an error."""

    cannot: np.ndarray
    lazy: np.ndarray  # the fast path found the device: results built at Reserve
    results: dict[int, list[AllocationResult]] = field(default_factory=dict)
    errors: dict[int, AllocationError] = field(default_factory=dict)

    def record(self, i: int, outcome: Any, wanted: int) -> None:
        if isinstance(outcome, AllocationError):
            self.errors[i] = outcome
        elif outcome is None or len(outcome) != wanted:  # "cannot allocate all claims"
            self.cannot[i] = True
        else:
            self.results[i] = outcome


def _allocate_or_error(allocator: Allocator, node: Any, claims: list[ResourceClaim]) -> Any:
    try:
        return allocator.allocate(node, claims)
    except AllocationError as exc:
        return exc


def pod_claims(pod: PodInfo, index: DraIndex) -> list[ResourceClaim]:
    """`foreachPodResourceClaim`: every claim of the pod, or ClaimError with upstream's text."""
    claims = []
    for pod_claim in pod.pod.spec.resource_claims:
        name, must_check_owner = claim_name(pod.pod, pod_claim)
        if name is None:
            continue  # intentionally not created (the template asked for nothing)
        claim = index.claim(pod.namespace, name)
        if claim is None:
            raise ClaimError(lister_not_found(name))
        if claim.metadata.deletion_timestamp is not None:
            raise ClaimError(f'resourceclaim "{claim.metadata.name}" is being deleted')
        if must_check_owner:
            is_for_pod(pod.pod, claim)
        claims.append(claim)
    return claims


def _selector_mask(claim: ResourceClaim, table: NodeTable) -> np.ndarray | None:
    """Nodes where an allocated claim is available (None: everywhere)."""
    allocation = claim.status.allocation
    if allocation is None or allocation.node_selector is None:
        return None
    mask = np.zeros(table.n, dtype=bool)
    for term in allocation.node_selector.node_selector_terms:
        mask |= table.term_mask(compile_node_selector_term(term))
    return mask


class DynamicResources:
    name = NAME

    def __init__(self, features: Features | None = None) -> None:
        self.features = features or Features()

    # --- PreEnqueue / PreFilter ------------------------------------------------------------

    def pre_enqueue(self, pod: PodInfo, table: NodeTable) -> Status:
        try:
            pod_claims(pod, table.dra)
        except ClaimError as exc:
            return _unresolvable(str(exc))
        return SUCCESS

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        s = DraState()
        state[STATE_KEY] = s
        index = table.dra
        try:
            claims = pod_claims(pod, index)
        except ClaimError as exc:
            return None, _unresolvable(str(exc))
        if not claims:
            return None, SKIP
        for k, claim in enumerate(claims):
            allocated = claim.status.allocation is not None
            if allocated and not can_be_reserved(claim) and not is_reserved_for_pod(pod.pod, claim):
                return None, _unresolvable(ERR_IN_USE)
            s.available_on.append(_selector_mask(claim, table))
            if allocated:
                continue
            s.to_allocate.append(k)
            if index.has_pending(claim.uid):
                return None, _unresolvable(f"resource claim {claim.key} is in the process of being allocated")
            status = self._check_requests(claim, index)
            if status is not None:
                return None, status
        if s.to_allocate:
            s.allocator = Allocator(self.features, index.allocated_devices(), index.classes, index.slice_index())
        s.claims = claims
        return None, SUCCESS

    def _check_requests(self, claim: ResourceClaim, index: DraIndex) -> Status | None:
        """Every request names a class that exists (`validateDeviceClass`)."""
        for request in claim.spec.devices.requests:
            if request.exactly is not None:
                wanted = [(request.exactly.device_class_name, request.name)]
            elif request.first_available:
                if not self.features.prioritized_list:
                    return _unresolvable(
                        f"resource claim {claim.key}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                wanted = [(sub.device_class_name, f"{request.name}/{sub.name}") for sub in request.first_available]
            else:
                return _unresolvable(f"resource claim {claim.key}, request {request.name}: unknown request type")
            for class_name, request_name in wanted:
                if not class_name:
                    return _error(f"request {request_name}: unsupported request type")
                if class_name not in index.classes:
                    return _unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    # --- Filter -----------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        s: DraState = state[STATE_KEY]
        n = table.n
        unavailable_any = np.zeros(n, dtype=bool)
        for mask in s.available_on:
            if mask is not None:
                unavailable_any |= ~mask
        cannot = np.zeros(n, dtype=bool)
        errors: dict[str, np.ndarray] = {}
        if s.allocator is not None:
            outcome = self._allocate_everywhere(s, table)
            cannot = outcome.cannot
            for i, error in outcome.errors.items():
                errors.setdefault(str(error), np.zeros(n, dtype=bool))[i] = True
            for i, results in outcome.results.items():
                if not unavailable_any[i]:
                    s.node_allocations[i] = results
            s.lazy = outcome.lazy & ~unavailable_any
        failed = cannot.copy()
        for mask in errors.values():
            failed |= mask
        # the claims unavailable on a node the allocator did not already reject (PostFilter's candidates)
        for k, mask in enumerate(s.available_on):
            if mask is not None and (~mask & ~failed).any():
                s.unavailable.add(k)
        not_available = unavailable_any & ~failed
        codes = np.zeros(n, dtype=np.int8)
        reasons: list[tuple[str, np.ndarray]] = []
        for reason, mask in ((ERR_CANNOT_ALLOCATE, cannot), (ERR_NOT_AVAILABLE, not_available)):
            if mask.any():
                codes[mask] = np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
                reasons.append((reason, mask))
        for message, mask in errors.items():
            codes[mask] = np.int8(Code.ERROR)
            reasons.append((message, mask))
        return NodeVerdicts(codes, reasons)

    @staticmethod
    def _allocate_everywhere(s: DraState, table: NodeTable) -> _Outcomes:
        """`Allocate` on every node.

        The common single-device claim takes the columnar path (dra/fast_path.py), whose successes
        are `lazy`: the results are built by the allocator for the one node Reserve gets. Otherwise,
        nodes that no slice reaches all get the outcome of the first of them (it cannot depend on
        the node)."""
        assert s.allocator is not None
        allocator = s.allocator
        claims = [s.claims[k] for k in s.to_allocate]
        slices = allocator.slices
        n = table.n
        out = _Outcomes(np.zeros(n, dtype=bool), np.zeros(n, dtype=bool))
        if single_device_request(claims, slices):
            try:
                allocator.check_claims(claims)
            except AllocationError:
                pass  # every node meets the error: the general path below reports it
            else:
                fast = fast_outcomes(allocator, table.dra, claims[0], table.names)
                found = fast.row >= 0
                out.lazy = found & ~fast.general
                out.cannot = ~found & ~fast.general
                for i, error in fast.errors.items():
                    out.cannot[i] = False
                    out.errors[i] = error
                for i in np.flatnonzero(fast.general).tolist():
                    out.record(i, _allocate_or_error(allocator, table.nodes[i], claims), len(claims))
                return out
        bare: Any = ...
        for i, node in enumerate(table.nodes):
            reached = slices.reaches(table.names[i])
            if not reached and bare is not ...:
                outcome = bare
            else:
                outcome = _allocate_or_error(allocator, node, claims)
                if not reached:
                    bare = outcome
            out.record(i, outcome, len(claims))
        return out

    def allocation_report(self, state: CycleState, table: NodeTable, i: int) -> AllocationReport | None:
        """For explain: node i's allocation again, with why each device was or was not chosen."""
        s: DraState | None = state.get(STATE_KEY)
        if s is None or s.allocator is None:
            return None
        report = AllocationReport()
        with contextlib.suppress(AllocationError):  # the error is Filter's verdict already
            s.allocator.allocate(table.nodes[i], [s.claims[k] for k in s.to_allocate], report)
        return report

    # --- PostFilter -------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        s: DraState | None = state.get(STATE_KEY)
        if s is None:
            return None, _error(ERR_STATE_NOT_FOUND)
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, (ERR_NO_CLAIMS,))
        uid = pod.pod.metadata.uid or ""
        for k in sorted(s.unavailable):  # upstream iterates a map: any one claim will do
            claim = s.claims[k]
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == uid):
                deallocated = claim.model_copy(deep=True)
                deallocated.status.allocation = None
                deallocated.status.reserved_for = []
                return PostFilterResult(detail={"deallocate": deallocated}), Status(
                    Code.UNSCHEDULABLE, (ERR_DEALLOCATED,)
                )
        return None, Status(Code.UNSCHEDULABLE, (ERR_STILL_NOT_SCHEDULABLE,))

    # --- Reserve / Unreserve / PreBind --------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, table: NodeTable, i: int) -> Status:
        s: DraState | None = state.get(STATE_KEY)
        if s is None or not s.claims or not s.to_allocate:
            return SKIP
        results = s.node_allocations.get(i)
        if results is None and s.lazy is not None and s.lazy[i]:
            assert s.allocator is not None
            results = s.node_allocations[i] = s.allocator.allocate(table.nodes[i], [s.claims[k] for k in s.to_allocate])
        if results is None:
            return _error("claim allocation not found for node")
        if len(results) != len(s.to_allocate):
            return _error(
                f"internal error, have {len(results)} allocations, {len(s.to_allocate)} claims to allocate, "
                f"want {len(s.to_allocate)} claims"
            )
        for k, result in zip(s.to_allocate, results, strict=True):
            s.allocations[k] = result
            claim = s.claims[k].model_copy(deep=True)
            if FINALIZER not in claim.metadata.model_extra.get("finalizers", []):  # type: ignore[union-attr]
                claim.metadata.model_extra["finalizers"] = [  # type: ignore[index]
                    *claim.metadata.model_extra.get("finalizers", []),  # type: ignore[union-attr]
                    FINALIZER,
                ]
            claim.status.allocation = result
            table.dra.signal_pending(claim)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, table: NodeTable, i: int) -> None:
        s: DraState | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return
        uid = pod.pod.metadata.uid or ""
        for claim in s.claims:
            table.dra.remove_pending(claim.uid)
            current = table.dra.claims.get(claim.key)
            if current is not None and current.status.allocation is not None and is_reserved_for_pod(pod.pod, current):
                kept = current.model_copy(deep=True)
                kept.status.reserved_for = [ref for ref in kept.status.reserved_for if ref.uid != uid]
                table.dra.store(kept)

    def pre_bind(self, state: CycleState, pod: PodInfo, table: NodeTable, i: int) -> Status:
        s: DraState | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return SKIP
        for k, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod.pod, claim):
                continue
            bound = self._bind_claim(s, k, pod, table)
            if isinstance(bound, Status):
                return bound
            s.claims[k] = bound
        return SUCCESS

    @staticmethod
    def _bind_claim(s: DraState, k: int, pod: PodInfo, table: NodeTable) -> ResourceClaim | Status:
        """`bindClaim`: the allocation Reserve chose (if any) and the pod among the consumers."""
        claim = s.claims[k]
        allocation = s.allocations.get(k)
        current = table.dra.claims.get(claim.key)
        try:
            if current is None or current.metadata.deletion_timestamp is not None:
                return _error(f"claim {claim.key} got deleted in the meantime")
            updated = current.model_copy(deep=True)
            if allocation is not None:
                if updated.status.allocation is not None:
                    return _error(f"claim {claim.key} got allocated elsewhere in the meantime")
                finalizers = updated.metadata.model_extra.setdefault("finalizers", [])  # type: ignore[union-attr]
                if FINALIZER not in finalizers:
                    finalizers.append(FINALIZER)
                updated.status.allocation = allocation
            updated.status.reserved_for = [
                *updated.status.reserved_for,
                ResourceClaimConsumerReference(resource="pods", name=pod.name, uid=pod.pod.metadata.uid or ""),
            ]
            table.dra.store(updated)
            return updated
        finally:
            if allocation is not None:
                table.dra.remove_pending(claim.uid)

    # --- queueing hints -----------------------------------------------------------------------

    def is_schedulable_after_claim_change(
        self, pod: PodInfo, table: NodeTable, old: ResourceClaim | None, new: ResourceClaim
    ) -> str:
        """`isSchedulableAfterClaimChange`: Queue when the change may let the pod schedule."""
        try:
            uses = any(claim.uid == new.uid for claim in pod_claims(pod, table.dra))
        except ClaimError:
            return QUEUE_SKIP
        if old is not None and old.status.allocation is not None and new.status.allocation is None:
            return QUEUE  # a deallocation frees devices for any pod
        if not uses:
            return QUEUE_SKIP
        if old is None:
            return QUEUE
        return QUEUE_SKIP if old.status == new.status else QUEUE

    def is_schedulable_after_pod_change(self, pod: PodInfo, table: NodeTable, modified: PodInfo) -> str:
        """`isSchedulableAfterPodChange`: the pod itself got the claims it waited for."""
        if (pod.pod.metadata.uid or "") != (modified.pod.metadata.uid or ""):
            return QUEUE_SKIP
        try:
            pod_claims(modified, table.dra)
        except ClaimError:
            return QUEUE_SKIP
        return QUEUE


def new(args: dict[str, Any], handle: Framework) -> DynamicResources:
    return DynamicResources(Features.of(handle.version))
