"""VolumeRestrictions (plugins/volumerestrictions/volume_restrictions.go).

clusterviz models no PersistentVolumeClaims, so a pod naming one fails PreFilter exactly as
upstream does when the claim does not exist.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api.objects import Volume
from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import Code, NodeVerdicts, PreFilterResult, Status
from .names import VOLUME_RESTRICTIONS

NAME = VOLUME_RESTRICTIONS
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


class VolumeRestrictions:
    name = NAME

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        volumes = pod.pod.spec.volumes
        for volume in volumes:
            claim = volume.persistent_volume_claim
            if claim is not None:
                name = claim.get("claimName", "")
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f'persistentvolumeclaim "{name}" not found',))
        if not any(_needs_check(v) for v in volumes):
            return None, Status(Code.SKIP)
        return None, Status()

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        conflict = np.zeros(table.n, dtype=bool)
        wanted = [v for v in pod.pod.spec.volumes if _needs_check(v)]
        for i, other in table.volume_pods:
            if conflict[i]:
                continue
            if any(is_volume_conflict(v, o) for v in wanted for o in other.pod.spec.volumes):
                conflict[i] = True
        return NodeVerdicts.reject_where(conflict, Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)


def new(args: dict[str, Any], handle: object) -> VolumeRestrictions:
    return VolumeRestrictions()
