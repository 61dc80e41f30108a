"""VolumeBinding (plugins/volumebinding/volume_binding.go and binder.go, v1.34).

PreFilter: the pod's claims must exist, not be Lost or being deleted; claims not yet bound whose
class binds `Immediate` (or which are pre-bound) reject the pod. Filter, per node: a bound claim's
PV must exist and its node affinity hold; a `WaitForFirstConsumer` claim needs an available PV
that fits on the node (smallest first), or a class that can provision there (its provisioner and
`allowedTopologies`). Every Filter rejection is UnschedulableAndUnresolvable. Scoring needs the
StorageCapacityScoring gate (off up to v1.36, on in v1.37; KEP-4049): without it PreScore Skips;
with it a node scores the broken-linear `shape` (default utilization 0 → 10, 100 → 0) of each
storage class's utilization — the static bindings' requests over their PVs' capacity where the
node binds existing PVs, else the provisioned claims' requests over the CSIStorageCapacity that
holds them — averaged over the classes and rounded.
A claim to provision needs a CSIStorageCapacity that holds it where the driver opts in
("node(s) did not have enough free storage"). Not modelled: in-tree→CSI PV translation, and
the binding cycle's PV binding and provisioning (Reserve and PreBind Skip).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    claim_class,
    volume_class,
)
from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.runtime import Framework
from ..framework.selectors import compile_label_selector, is_valid_label_key, is_valid_label_value
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..framework.volume_index import VolumeIndex, claim_is_for_pod, ephemeral_owner_error, not_found, pv_affinity_mask
from .names import VOLUME_BINDING
from .node_resources.resource_allocation import MAX_CUSTOM_PRIORITY_SCORE, broken_linear, parse_shape

NAME = VOLUME_BINDING
STATE_KEY = NAME
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass
class PodVolumeClaims:
    """`PodVolumeClaims`: the pod's claims split as GetPodVolumeClaims splits them."""

    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    # what Filter found per node, for the storage-capacity score (`PodVolumes`)
    static: list[tuple[PersistentVolumeClaim, list[PersistentVolume], np.ndarray]] = field(default_factory=list)
    provisions: list[tuple[PersistentVolumeClaim, np.ndarray, np.ndarray]] = field(default_factory=list)


def _claim_names(pod: PodInfo) -> list[tuple[str, bool]]:
    """(claim name, generic ephemeral?) for each volume backed by a claim, in spec order."""
    out = []
    for volume in pod.pod.spec.volumes:
        if volume.persistent_volume_claim is not None:
            out.append((volume.claim_name or "", False))
        elif volume.ephemeral is not None:
            out.append((f"{pod.name}-{volume.name}", True))  # ephemeral.VolumeClaimName
    return out


def pod_claims(pod: PodInfo, index: VolumeIndex) -> tuple[list[PersistentVolumeClaim], str]:
    """`podHasPVCs`: the claims, or the first problem (upstream's error text)."""
    claims = []
    for name, ephemeral in _claim_names(pod):
        claim = index.claim(pod.namespace, name)
        if claim is None:
            if ephemeral:
                return claims, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
            return claims, not_found("PersistentVolumeClaim", name)
        if claim.status.phase == "Lost":
            return claims, (
                f'persistentvolumeclaim "{claim.metadata.name}" bound to non-existent persistentvolume '
                f'"{claim.spec.volume_name}"'
            )
        if claim.metadata.deletion_timestamp is not None:
            return claims, f'persistentvolumeclaim "{claim.metadata.name}" is being deleted'
        if ephemeral and not claim_is_for_pod(claim, pod.pod):
            return claims, ephemeral_owner_error(claim, pod.pod)
        claims.append(claim)
    return claims, ""


def is_delay_binding(claim: PersistentVolumeClaim, classes: Mapping[str, StorageClass]) -> bool:
    """`IsDelayBindingMode`: the claim's class (among `classes`, by name) exists and waits for the
    first consumer."""
    name = claim_class(claim)
    storage_class = classes.get(name) if name else None
    return storage_class is not None and storage_class.volume_binding_mode == "WaitForFirstConsumer"


def split_claims(claims: list[PersistentVolumeClaim], index: VolumeIndex) -> PodVolumeClaims:
    """`GetPodVolumeClaims`: bound; unbound delayed (no volume name yet); unbound immediate (incl. pre-bound)."""
    out = PodVolumeClaims()
    for claim in claims:
        if claim.fully_bound:
            out.bound.append(claim)
        elif is_delay_binding(claim, index.classes) and not claim.spec.volume_name:
            out.delay_binding.append(claim)
        else:
            out.immediate.append(claim)
    return out


def _topology_mask(storage_class: StorageClass, table: NodeTable) -> np.ndarray:
    """`v1helper.MatchTopologySelectorTerms` on every node: OR of terms, each an AND of `key In values`."""
    terms = storage_class.allowed_topologies
    if not terms:
        return np.ones(table.n, dtype=bool)
    mask = np.zeros(table.n, dtype=bool)
    for term in terms:
        expressions = term.match_label_expressions
        if not expressions or not all(
            is_valid_label_key(e.key) and e.values and all(is_valid_label_value(v) for v in e.values)
            for e in expressions
        ):
            continue  # an empty or unparsable term selects nothing
        hit = np.ones(table.n, dtype=bool)
        for expression in expressions:
            column = table.label_column(expression.key)
            values = np.array([v in expression.values for v in column.values], dtype=bool)
            hit &= column.lookup(values, False)
        mask |= hit
    return mask


def _capacity_mask(
    claim: PersistentVolumeClaim, storage_class: StorageClass, index: VolumeIndex, table: NodeTable
) -> tuple[np.ndarray, np.ndarray]:
    """`hasEnoughCapacity` on every node (binder.go): only for a CSI driver that opts in
    (`CSIDriver.spec.storageCapacity`); then some CSIStorageCapacity of the claim's class must hold
    the request (`maximumVolumeSize`, else `capacity`; neither set: not enough) and reach the node
    (`nodeTopology` matches its labels; no topology: reaches no node). Also, per node, the `capacity`
    of the first such object (the provision's NodeCapacity; -1: none, or no opt-in)."""
    quantity = claim.spec.resources.requests.get("storage")
    driver = index.csi_drivers.get(storage_class.provisioner)
    chosen = np.full(table.n, -1, dtype=np.int64)
    if quantity is None or driver is None or not driver.spec.storage_capacity:
        return np.ones(table.n, dtype=bool), chosen
    size = quantity.value()
    mask = np.zeros(table.n, dtype=bool)
    for capacity in index.capacities.get(storage_class.metadata.name, []):
        limit = capacity.limit
        if limit is None or limit < size or capacity.node_topology is None:
            continue
        selector = compile_label_selector(capacity.node_topology)
        reach = np.fromiter((selector.matches(labels) for labels in table.labels), dtype=bool, count=table.n)
        if capacity.capacity is not None:
            chosen[reach & ~mask] = capacity.capacity.value()
        mask |= reach
    return mask, chosen


def _volume_mode(mode: str | None) -> str:
    return mode or "Filesystem"


def candidate_volumes(
    claim: PersistentVolumeClaim, volumes: list[PersistentVolume]
) -> tuple[PersistentVolume | None, list[PersistentVolume]]:
    """`FindMatchingVolume`'s node-independent checks: the first PV pre-bound to the claim (which
    decides alone), and the available PVs that could take it, smallest first (list order on ties)."""
    requested = claim.storage_request
    wanted_class = claim_class(claim)
    selector = compile_label_selector(claim.spec.selector) if claim.spec.selector is not None else None
    claim_vac = claim.spec.volume_attributes_class_name or ""
    ranked: list[tuple[Any, int, PersistentVolume]] = []
    for position, volume in enumerate(volumes):
        ref = volume.spec.claim_ref
        prebound = (
            ref is not None
            and ref.name == claim.metadata.name
            and ref.namespace == claim.metadata.namespace
            and (not ref.uid or ref.uid == (claim.metadata.uid or ""))
        )
        if ref is not None and not prebound:
            continue
        if volume.capacity < requested:
            continue
        if _volume_mode(claim.spec.volume_mode) != _volume_mode(volume.spec.volume_mode):
            continue
        if claim_vac != (volume.spec.volume_attributes_class_name or ""):
            continue  # VolumeAttributesClass is GA in v1.34
        if volume.metadata.deletion_timestamp is not None:
            continue
        if prebound:
            return volume, []
        if volume.status.phase != "Available":
            continue
        if selector is not None and not selector.matches(volume.metadata.labels):
            continue
        if volume_class(volume) != wanted_class:
            continue
        if not set(claim.spec.access_modes) <= set(volume.spec.access_modes):
            continue
        ranked.append((volume.capacity, position, volume))
    ranked.sort(key=lambda entry: (entry[0], entry[1]))
    return None, [volume for _, _, volume in ranked]


class _Affinity:
    """PV node-affinity masks, computed once per volume per Filter call."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.masks: dict[str, np.ndarray] = {}

    def __call__(self, volume: PersistentVolume) -> np.ndarray:
        mask = self.masks.get(volume.name)
        if mask is None:
            mask = self.masks[volume.name] = pv_affinity_mask(volume, self.table)
        return mask


def _static_bindings(split: PodVolumeClaims, node: int) -> list[tuple[PersistentVolumeClaim, PersistentVolume]]:
    return [(claim, volumes[int(pick[node])]) for claim, volumes, pick in split.static if pick[node] >= 0]


def volumes_to_bind(state: CycleState | None, node: int) -> list[tuple[PersistentVolumeClaim, PersistentVolume]]:
    """What PreBind's `BindPodVolumes` writes for the pod bound to node `node` (its index): each
    claim waiting for its first consumer with the volume `FindPodVolumes` matched it to there (the
    volume's claimRef; the PersistentVolume controller completes the bind). Claims to provision are
    not in it."""
    split = state.get(STATE_KEY) if state is not None else None
    return _static_bindings(split, node) if isinstance(split, PodVolumeClaims) else []


class VolumeBinding:
    name = NAME

    def __init__(self, shape: list[tuple[int, int]] | None = None) -> None:
        self.shape = shape  # the scorer's shape (scaled to 0–100); None: StorageCapacityScoring off

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        if not _claim_names(pod):
            return None, SKIP
        index = table.volumes
        claims, problem = pod_claims(pod, index)
        if problem:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (problem,))
        split = split_claims(claims, index)
        if split.immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_UNBOUND_IMMEDIATE,))
        state[STATE_KEY] = split
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        """`FindPodVolumes` on every node; the reasons keep upstream's order."""
        split: PodVolumeClaims = state[STATE_KEY]
        index = table.volumes
        n = table.n
        affinity = _Affinity(table)
        node_conflict = np.zeros(n, dtype=bool)
        pv_missing = np.zeros(n, dtype=bool)
        # checkBoundClaims: stops at the first claim whose PV is missing or does not fit the node.
        alive = np.ones(n, dtype=bool)
        for claim in split.bound:
            volume = index.volumes.get(claim.spec.volume_name)
            if volume is None:
                pv_missing |= alive
                break
            fits = affinity(volume)
            node_conflict |= alive & ~fits
            alive &= fits
        bind_conflict = np.zeros(n, dtype=bool)
        no_space = np.zeros(n, dtype=bool)
        errors: list[tuple[str, np.ndarray]] = []
        if split.delay_binding:
            bind_conflict, no_space, errors = self._unbound(split, index, table, affinity)
        codes = np.zeros(n, dtype=np.int8)
        reasons: list[tuple[str, np.ndarray]] = []
        for reason, mask in (
            (ERR_REASON_NODE_CONFLICT, node_conflict),
            (ERR_REASON_BIND_CONFLICT, bind_conflict),
            (ERR_REASON_NOT_ENOUGH_SPACE, no_space),
            (ERR_REASON_PV_NOT_EXIST, pv_missing),
        ):
            if mask.any():
                codes[mask] = np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
                reasons.append((reason, mask))
        for message, mask in errors:  # an error replaces the node's reasons (FindPodVolumes returns it alone)
            for _, other in reasons:
                other &= ~mask
            codes[mask] = np.int8(Code.ERROR)
            reasons.append((message, mask))
        return NodeVerdicts(codes, reasons)

    @staticmethod
    def _unbound(
        split: PodVolumeClaims, index: VolumeIndex, table: NodeTable, affinity: _Affinity
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[str, np.ndarray]]]:
        """The claims waiting for their first consumer: (nodes rejected, nodes without enough
        storage capacity for a claim to provision, [(error, nodes)]); the PVs each claim would bind
        and the claims to provision, per node, are kept in `split` for Score."""
        claims = split.delay_binding
        split.static, split.provisions = [], []
        n = table.n
        rejected = np.zeros(n, dtype=bool)
        no_space = np.zeros(n, dtype=bool)
        # A claim the scheduler already gave to a node (selected-node annotation) fits nowhere else.
        selected = [c for c in claims if ANN_SELECTED_NODE in c.metadata.annotations]
        for claim in selected:
            rejected |= np.array([name != claim.metadata.annotations[ANN_SELECTED_NODE] for name in table.names])
        alive = ~rejected
        to_match = sorted((c for c in claims if ANN_SELECTED_NODE not in c.metadata.annotations), key=_size)
        # findMatchingVolumes: per node, greedily the smallest fitting PV not taken by an earlier claim.
        chosen: dict[str, np.ndarray] = {}
        unmatched: list[np.ndarray] = []
        for claim in to_match:
            prebound, ranked = candidate_volumes(claim, index.by_class.get(claim_class(claim), []))
            matched = np.zeros(n, dtype=bool)
            if prebound is not None:
                matched = affinity(prebound).copy()
                split.static.append((claim, [prebound], np.where(matched, 0, -1)))
            elif ranked:
                free = np.array([affinity(v) & ~chosen.get(v.name, np.zeros(n, dtype=bool)) for v in ranked])
                matched = free.any(axis=0)
                first = np.argmax(free, axis=0)
                for k, volume in enumerate(ranked):
                    took = matched & (first == k)
                    if took.any():
                        chosen[volume.name] = chosen.get(volume.name, np.zeros(n, dtype=bool)) | took
                split.static.append((claim, ranked, np.where(matched, first, -1)))
            unmatched.append(~matched)
        # checkVolumeProvisions: selected claims first, then the unmatched ones; the first that
        # cannot be provisioned on the node rejects it; a claim without a usable class is an error.
        provision = [(claim, np.ones(n, dtype=bool)) for claim in selected] + list(
            zip(to_match, unmatched, strict=True)
        )
        errors: list[tuple[str, np.ndarray]] = []
        for claim, needs in provision:
            here = alive & needs
            if not here.any():
                continue
            class_name = claim_class(claim)
            storage_class = index.classes.get(class_name) if class_name else None
            if storage_class is None:
                message = (
                    f'no class for claim "{claim.key}"'
                    if not class_name
                    else f'failed to find storage class "{class_name}"'
                )
                errors.append((message, here))
                alive &= ~here
                continue
            if storage_class.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
                rejected |= here
                alive &= ~here
                continue
            outside = here & ~_topology_mask(storage_class, table)
            rejected |= outside
            alive &= ~outside
            enough, node_capacity = _capacity_mask(claim, storage_class, index, table)
            short = alive & needs & ~enough
            no_space |= short
            alive &= ~short
            split.provisions.append((claim, alive & needs, node_capacity))
        return rejected, no_space, errors

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        # no scorer without StorageCapacityScoring; no state when PreFilter skipped (no claims)
        return SKIP if self.shape is None or STATE_KEY not in state else SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        """Score: per node, each class's requested and capacity, then the shape's average."""
        split: PodVolumeClaims = state[STATE_KEY]
        assert self.shape is not None
        out = np.zeros(len(idx), dtype=np.int64)
        for k, i in enumerate(idx.tolist()):
            classes: dict[str, list[int]] = {}  # class → [requested, capacity]
            bindings = _static_bindings(split, i)
            if bindings:
                for claim, volume in bindings:
                    entry = classes.setdefault(volume_class(volume), [0, 0])
                    entry[0] += int(claim.storage_request)
                    size = volume.spec.capacity.get("storage")
                    entry[1] += size.value() if size is not None else 0
            else:
                for claim, here, node_capacity in split.provisions:
                    if here[i] and node_capacity[i] >= 0:
                        entry = classes.setdefault(claim_class(claim), [0, 0])
                        entry[0] += int(claim.storage_request)
                        entry[1] = int(node_capacity[i])
            out[k] = self._classes_score(classes)
        return out

    def _classes_score(self, classes: dict[str, list[int]]) -> int:
        """buildScorerFunction: utilization per class (100 when it does not fit), the shape, the
        rounded mean; 0 without classes."""
        assert self.shape is not None
        if not classes:
            return 0
        utilization = np.array(
            [
                100 if capacity == 0 or requested > capacity else requested * 100 // capacity
                for requested, capacity in classes.values()
            ],
            dtype=np.int64,
        )
        total = int(broken_linear(self.shape, utilization).sum())
        return math.floor(total / len(classes) + 0.5)  # math.Round: halves away from zero (total >= 0)

    def reserve(self, state: CycleState, pod: PodInfo, table: NodeTable, i: int) -> Status:
        """AssumePodVolumes: binding and provisioning PersistentVolumes is not simulated (the
        claims stay as the snapshot has them), so there is nothing to assume: Skip."""
        return SKIP

    def pre_bind(self, state: CycleState, pod: PodInfo, table: NodeTable, i: int) -> Status:
        """BindPodVolumes: not simulated, as Reserve (above)."""
        return SKIP


def _size(claim: PersistentVolumeClaim) -> Any:
    return claim.storage_request


# SetDefaults_VolumeBindingArgs with StorageCapacityScoring on.
DEFAULT_SHAPE = [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE}, {"utilization": 100, "score": 0}]


def new(args: dict[str, Any], handle: Framework) -> VolumeBinding:
    if not handle.version.gates.enabled("StorageCapacityScoring"):
        return VolumeBinding()
    return VolumeBinding(parse_shape(args.get("shape") or DEFAULT_SHAPE, "profile: VolumeBinding args.shape"))
