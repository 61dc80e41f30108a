"""VolumeRestrictions (plugins/volumerestrictions/volume_restrictions.go, v1.34).

PreFilter looks up every claim the pod names (a missing one: `persistentvolumeclaim "x" not
found`, UnschedulableAndUnresolvable) and counts its ReadWriteOncePod claims already used by a pod
on any node; Filter rejects disk conflicts on the node, then (when such a claim is in use) every node.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..api.objects import Volume
from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..framework.volume_index import not_found
from .names import VOLUME_RESTRICTIONS

NAME = VOLUME_RESTRICTIONS
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)


def _needs_check(volume: Volume) -> bool:
    return bool(volume.gce_persistent_disk or volume.aws_elastic_block_store or volume.iscsi or volume.rbd)


def _read_only(source: dict[str, Any]) -> bool:
    return bool(source.get("readOnly"))


def is_volume_conflict(volume: Volume, other: Volume) -> bool:
    """`isVolumeConflict`: same disk used by both pods, unless both mount it read-only (EBS: always)."""
    if volume.gce_persistent_disk and other.gce_persistent_disk:
        a, b = volume.gce_persistent_disk, other.gce_persistent_disk
        if a.get("pdName") == b.get("pdName") and not (_read_only(a) and _read_only(b)):
            return True
    if (
        volume.aws_elastic_block_store
        and other.aws_elastic_block_store
        and volume.aws_elastic_block_store.get("volumeID") == other.aws_elastic_block_store.get("volumeID")
    ):
        return True
    if volume.iscsi and other.iscsi:
        a, b = volume.iscsi, other.iscsi
        if a.get("iqn") == b.get("iqn") and not (_read_only(a) and _read_only(b)):
            return True
    if volume.rbd and other.rbd:
        a, b = volume.rbd, other.rbd
        monitors = set(a.get("monitors") or ()) & set(b.get("monitors") or ())
        # API defaulting (SetDefaults_RBDVolumeSource) turns an empty pool into "rbd".
        same = (a.get("pool") or "rbd") == (b.get("pool") or "rbd") and a.get("image") == b.get("image")
        if monitors and same and not (_read_only(a) and _read_only(b)):
            return True
    return False


@dataclass
class _PreFilterState:
    """`preFilterState`: the pod's ReadWriteOncePod claims and how many scheduled pods' volumes name them."""

    rwop_claims: frozenset[str]
    conflicting_refs: int

    def clone(self) -> _PreFilterState:
        return replace(self)

    def update_with_pod(self, other: PodInfo, multiplier: int) -> None:
        """`updateWithPod`: upstream matches claim names only (no namespace check)."""
        refs = sum(1 for v in other.pod.spec.volumes if v.claim_name is not None and v.claim_name in self.rwop_claims)
        self.conflicting_refs += multiplier * refs


class VolumeRestrictions:
    name = NAME

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        volumes = pod.pod.spec.volumes
        if not volumes:
            return None, SKIP  # nothing to check, no claim to hold
        needs_check = any(_needs_check(v) for v in volumes)
        rwop: set[str] = set()
        for volume in volumes:
            name = volume.claim_name
            if name is None:
                continue
            claim = table.volumes.claim(pod.namespace, name)
            if claim is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (not_found("PersistentVolumeClaim", name),))
            if "ReadWriteOncePod" in claim.spec.access_modes:
                rwop.add(name)
        # `IsPVCUsedByPods`: the claim is referenced by a pod on some node of the snapshot.
        conflicting = sum(1 for name in rwop if table.pvc_refs.get(f"{pod.namespace}/{name}", 0) > 0)
        if not needs_check and conflicting == 0:
            return None, SKIP
        state[PRE_FILTER_STATE_KEY] = _PreFilterState(frozenset(rwop), conflicting)
        return None, SUCCESS

    # --- PreFilterExtensions (volume_restrictions.go AddPod / RemovePod → updateWithPod) -------

    def add_pod(self, state: CycleState, pod: PodInfo, added: PodInfo, table: NodeTable, i: int) -> None:
        state[PRE_FILTER_STATE_KEY].update_with_pod(added, +1)

    def remove_pod(self, state: CycleState, pod: PodInfo, removed: PodInfo, table: NodeTable, i: int) -> None:
        state[PRE_FILTER_STATE_KEY].update_with_pod(removed, -1)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        conflict = np.zeros(table.n, dtype=bool)
        wanted = [v for v in pod.pod.spec.volumes if _needs_check(v)]
        if wanted:
            for i, other in table.volume_pods:
                if conflict[i]:
                    continue
                if any(is_volume_conflict(v, o) for v in wanted for o in other.pod.spec.volumes):
                    conflict[i] = True
        verdicts = NodeVerdicts.reject_where(conflict, Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        prefiltered = state.get(PRE_FILTER_STATE_KEY)
        if prefiltered is not None and prefiltered.conflicting_refs > 0:
            # Every node the disk check let through fails on the claim in use elsewhere.
            rwop = ~conflict
            verdicts = verdicts.writable()
            verdicts.codes[rwop] = np.int8(Code.UNSCHEDULABLE)
            verdicts.reasons.append((ERR_REASON_RWOP, rwop))
        return verdicts


def new(args: dict[str, Any], handle: object) -> VolumeRestrictions:
    return VolumeRestrictions()
