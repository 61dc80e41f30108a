"""VolumeZone (plugins/volumezone/volume_zone.go, v1.34).

PreFilter reads the zone and region labels (GA and legacy `failure-domain.beta.kubernetes.io/*`)
of the PersistentVolumes bound to the pod's claims; Filter rejects a node whose zone/region label
is not among a volume's values (`a__b` lists several). Nodes without any of these labels pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api.storage import PersistentVolume, claim_class
from ..framework.cycle_state import CycleState
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..framework.volume_index import not_found
from .names import VOLUME_ZONE

NAME = VOLUME_ZONE
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}
MULTI_ZONE_DELIMITER = "__"  # LabelMultiZoneDelimiter


def label_zones_to_set(value: str) -> set[str] | None:
    """`volumehelpers.LabelZonesToSet`: `a__b` → {a, b}; None when an element is empty."""
    zones = {part.strip() for part in value.split(MULTI_ZONE_DELIMITER)}
    return None if "" in zones else zones


def pv_topologies(volume: PersistentVolume) -> list[tuple[str, set[str]]]:
    """`getPVTopologies`: (label key, allowed values) for each topology label on the PV."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = volume.metadata.labels.get(key)
        if value is not None:
            zones = label_zones_to_set(value)
            if zones is not None:
                out.append((key, zones))
    return out


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


class VolumeZone:
    name = NAME

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        index = table.volumes
        topologies: list[tuple[str, set[str]]] = []
        for volume in pod.pod.spec.volumes:
            claim_name = volume.claim_name
            if claim_name is None:
                continue
            if claim_name == "":
                return None, _unresolvable("PersistentVolumeClaim had no name")
            claim = index.claim(pod.namespace, claim_name)
            if claim is None:
                return None, _unresolvable(not_found("PersistentVolumeClaim", claim_name))
            pv_name = claim.spec.volume_name
            if not pv_name:
                class_name = claim_class(claim)
                if not class_name:
                    return None, _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                storage_class = index.classes.get(class_name)
                if storage_class is None:
                    return None, _unresolvable(not_found("StorageClass", class_name))
                if storage_class.volume_binding_mode == "WaitForFirstConsumer":
                    continue  # unbound volumes are skipped
                return None, _unresolvable("PersistentVolume had no name")
            pv = index.volumes.get(pv_name)
            if pv is None:
                return None, _unresolvable(not_found("PersistentVolume", pv_name))
            topologies.extend(pv_topologies(pv))
        if not topologies:
            return None, SKIP
        state[PRE_FILTER_STATE_KEY] = topologies
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        topologies: list[tuple[str, set[str]]] = state.get(PRE_FILTER_STATE_KEY, [])
        constrained = np.zeros(table.n, dtype=bool)
        for key in TOPOLOGY_LABELS:
            constrained |= table.key_mask(key)
        ok = np.ones(table.n, dtype=bool)
        for key, zones in topologies:
            column = table.label_column(key)
            hit = np.array([v in zones for v in column.values], dtype=bool)
            match = column.lookup(hit, False)
            if key in _GA:  # a node without the beta label is matched on the GA one
                ga = table.label_column(_GA[key])
                ga_hit = np.array([v in zones for v in ga.values], dtype=bool)
                match = np.where(column.codes >= 0, match, ga.lookup(ga_hit, False))
            ok &= match
        conflict = constrained & ~ok
        return NodeVerdicts.reject_where(conflict, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)


def new(args: dict[str, Any], handle: object) -> VolumeZone:
    return VolumeZone()
