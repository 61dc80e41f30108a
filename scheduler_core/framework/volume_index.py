"""The storage objects of a snapshot, indexed as the scheduler's informer listers serve them.

Upstream the volume plugins read PersistentVolumeClaims, PersistentVolumes, StorageClasses and
CSINodes through listers; here one `VolumeIndex` plays those listers and hangs on the `NodeTable`
(`table.volumes`), the way Services and controllers do. Lookups that miss return None; the plugins
turn a miss into upstream's NotFound text (`not_found`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..api.objects import Pod
from ..api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    volume_class,
)
from .selectors import compile_node_selector_term

if TYPE_CHECKING:
    from .node_table import NodeTable

__all__ = ["VolumeIndex", "claim_is_for_pod", "ephemeral_owner_error", "not_found", "pv_affinity_mask"]

# The GroupResource each lister names in its NotFound error (`errors.NewNotFound`).
_RESOURCES = {
    "PersistentVolumeClaim": "persistentvolumeclaim",
    "PersistentVolume": "persistentvolume",
    "StorageClass": "storageclass.storage.k8s.io",
    "CSINode": "csinode.storage.k8s.io",
    "CSIDriver": "csidriver.storage.k8s.io",
}


def not_found(kind: str, name: str) -> str:
    """A lister's NotFound error text: `persistentvolumeclaim "data" not found`."""
    return f'{_RESOURCES[kind]} "{name}" not found'


@dataclass
class VolumeIndex:
    """Claims by `namespace/name`, volumes, classes and CSINodes by name, volumes by class."""

    claims: dict[str, PersistentVolumeClaim] = field(default_factory=dict)
    volumes: dict[str, PersistentVolume] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    by_class: dict[str, list[PersistentVolume]] = field(default_factory=dict)
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)
    # every CSIStorageCapacity, in list order, by storageClassName
    capacities: dict[str, list[CSIStorageCapacity]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        claims: Iterable[PersistentVolumeClaim] = (),
        volumes: Iterable[PersistentVolume] = (),
        classes: Iterable[StorageClass] = (),
        csi_nodes: Iterable[CSINode] = (),
        csi_drivers: Iterable[CSIDriver] = (),
        capacities: Iterable[CSIStorageCapacity] = (),
    ) -> VolumeIndex:
        index = cls(
            {c.key: c for c in claims},
            {v.name: v for v in volumes},
            {c.metadata.name: c for c in classes},
            {c.metadata.name: c for c in csi_nodes},
            csi_drivers={d.metadata.name: d for d in csi_drivers},
        )
        for capacity in capacities:
            index.capacities.setdefault(capacity.storage_class_name, []).append(capacity)
        for volume in index.volumes.values():
            index.by_class.setdefault(volume_class(volume), []).append(volume)
        return index

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.claims.get(f"{namespace}/{name}")


def pv_affinity_mask(volume: PersistentVolume, table: NodeTable) -> np.ndarray:
    """`volume.CheckNodeAffinity` on every node: True where the PV's required node affinity holds.

    Upstream matches a Node built from the labels alone, so `matchFields` see an empty name; a
    term that does not parse matches nothing (component-helpers nodeaffinity).
    """
    affinity = volume.spec.node_affinity
    if affinity is None or affinity.required is None:
        return np.ones(table.n, dtype=bool)
    mask = np.zeros(table.n, dtype=bool)
    for raw in affinity.required.node_selector_terms:
        term = compile_node_selector_term(raw)
        if not term.valid or not all(r.matches(_NO_NAME) for r in term.field_requirements):
            continue
        hit = np.ones(table.n, dtype=bool)
        for requirement in term.label_requirements:
            hit &= table.label_column(requirement.key).requirement_mask(requirement)
        mask |= hit
    return mask


_NO_NAME = {"metadata.name": ""}


def claim_is_for_pod(claim: PersistentVolumeClaim, pod: Pod) -> bool:
    """`ephemeral.VolumeIsForPod`: same namespace and the pod is the claim's controller."""
    if claim.metadata.namespace != (pod.metadata.namespace or "default"):
        return False
    controller = next((ref for ref in claim.metadata.owner_references if ref.controller), None)
    return controller is not None and controller.uid == (pod.metadata.uid or "")


def ephemeral_owner_error(claim: PersistentVolumeClaim, pod: Pod) -> str:
    return (
        f"PVC {claim.metadata.namespace}/{claim.metadata.name} was not created for pod "
        f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
    )
