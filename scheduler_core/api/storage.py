"""Pydantic models of the storage objects the volume plugins read.

PersistentVolumeClaim and PersistentVolume (core/v1), StorageClass, CSINode, CSIDriver and
CSIStorageCapacity (storage.k8s.io/v1),
with the fields VolumeBinding, VolumeZone, NodeVolumeLimits and VolumeRestrictions read, and the
API server's defaults that matter to them (a StorageClass's `volumeBindingMode` is `Immediate`
unless set; a PV's phase is `Pending` until the controller makes it `Available`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from .objects import K8sModel, LabelSelector, NodeSelector, ObjectMeta, QuantityField, ResourceList, none_as_empty

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_SELECTED_NODE",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "CSIDriver",
    "CSINode",
    "CSIStorageCapacity",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "claim_class",
    "volume_class",
]

# k8s.io/component-helpers/storage/volume and core/v1 annotation keys.
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

AccessMode = Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]


def _named(meta: ObjectMeta, kind: str) -> None:
    if not meta.name:
        raise ValueError(f"metadata.name: Required value ({kind})")


class ClaimResources(K8sModel):
    requests: ResourceList = Field(default_factory=dict)
    limits: ResourceList = Field(default_factory=dict)

    _none_is_empty = none_as_empty(dict, "requests", "limits")


class PersistentVolumeClaimSpec(K8sModel):
    access_modes: list[AccessMode] = Field(default_factory=list)
    selector: LabelSelector | None = None
    resources: ClaimResources = Field(default_factory=ClaimResources)
    volume_name: str = ""
    storage_class_name: str | None = None
    volume_mode: Literal["Filesystem", "Block"] | None = None
    volume_attributes_class_name: str | None = None

    _none_list = none_as_empty(list, "access_modes")

    _none_str = none_as_empty(str, "volume_name")


class PersistentVolumeClaimStatus(K8sModel):
    phase: Literal["Pending", "Bound", "Lost"] | None = None


class PersistentVolumeClaim(K8sModel):
    api_version: str = "v1"
    kind: Literal["PersistentVolumeClaim"] = "PersistentVolumeClaim"
    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec = Field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = Field(default_factory=PersistentVolumeClaimStatus)

    @model_validator(mode="after")
    def _defaults(self) -> PersistentVolumeClaim:
        _named(self.metadata, "PersistentVolumeClaim")
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def fully_bound(self) -> bool:
        """`isPVCFullyBound`: a volume name and the controller's bind-completed annotation."""
        return bool(self.spec.volume_name) and ANN_BIND_COMPLETED in self.metadata.annotations

    @property
    def storage_request(self) -> Fraction:
        """`spec.resources.requests.storage` (exact; zero when unset)."""
        quantity = self.spec.resources.requests.get("storage")
        return Fraction(0) if quantity is None else quantity.amount


class ObjectReference(K8sModel):
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None


class VolumeNodeAffinity(K8sModel):
    required: NodeSelector | None = None


class CSIPersistentVolumeSource(K8sModel):
    driver: str
    volume_handle: str


class PersistentVolumeSpec(K8sModel):
    capacity: ResourceList = Field(default_factory=dict)
    access_modes: list[AccessMode] = Field(default_factory=list)
    claim_ref: ObjectReference | None = None
    storage_class_name: str = ""
    node_affinity: VolumeNodeAffinity | None = None
    volume_mode: Literal["Filesystem", "Block"] | None = None
    volume_attributes_class_name: str | None = None
    csi: CSIPersistentVolumeSource | None = None
    aws_elastic_block_store: dict[str, Any] | None = None
    gce_persistent_disk: dict[str, Any] | None = None
    azure_disk: dict[str, Any] | None = None
    cinder: dict[str, Any] | None = None

    _none_map = none_as_empty(dict, "capacity")

    _none_list = none_as_empty(list, "access_modes")

    _none_str = none_as_empty(str, "storage_class_name")


class PersistentVolumeStatus(K8sModel):
    phase: Literal["Pending", "Available", "Bound", "Released", "Failed"] = "Pending"


class PersistentVolume(K8sModel):
    api_version: str = "v1"
    kind: Literal["PersistentVolume"] = "PersistentVolume"
    metadata: ObjectMeta
    spec: PersistentVolumeSpec = Field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = Field(default_factory=PersistentVolumeStatus)

    @model_validator(mode="after")
    def _defaults(self) -> PersistentVolume:
        _named(self.metadata, "PersistentVolume")
        return self

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def capacity(self) -> Fraction:
        """`spec.capacity.storage` (exact; zero when unset)."""
        quantity = self.spec.capacity.get("storage")
        return Fraction(0) if quantity is None else quantity.amount


class TopologySelectorRequirement(K8sModel):
    key: str
    values: list[str] = Field(default_factory=list)


class TopologySelectorTerm(K8sModel):
    match_label_expressions: list[TopologySelectorRequirement] = Field(default_factory=list)

    _none_list = none_as_empty(list, "match_label_expressions")


class StorageClass(K8sModel):
    api_version: str = "storage.k8s.io/v1"
    kind: Literal["StorageClass"] = "StorageClass"
    metadata: ObjectMeta
    provisioner: str = ""
    # API defaulting (pkg/apis/storage/v1/defaults.go): Immediate when unset.
    volume_binding_mode: Literal["Immediate", "WaitForFirstConsumer"] = "Immediate"
    allowed_topologies: list[TopologySelectorTerm] = Field(default_factory=list)

    @field_validator("volume_binding_mode", mode="before")
    @classmethod
    def _default_mode(cls, value: object) -> object:
        return "Immediate" if value is None else value

    _none_list = none_as_empty(list, "allowed_topologies")

    @model_validator(mode="after")
    def _defaults(self) -> StorageClass:
        _named(self.metadata, "StorageClass")
        return self


class VolumeNodeResources(K8sModel):
    count: int | None = Field(default=None, ge=0)


class CSINodeDriver(K8sModel):
    name: str
    node_id: str = Field(default="", alias="nodeID")
    allocatable: VolumeNodeResources | None = None
    topology_keys: list[str] = Field(default_factory=list)

    _none_list = none_as_empty(list, "topology_keys")


class CSINodeSpec(K8sModel):
    drivers: list[CSINodeDriver] = Field(default_factory=list)

    _none_list = none_as_empty(list, "drivers")


class CSINode(K8sModel):
    api_version: str = "storage.k8s.io/v1"
    kind: Literal["CSINode"] = "CSINode"
    metadata: ObjectMeta
    spec: CSINodeSpec = Field(default_factory=CSINodeSpec)

    @model_validator(mode="after")
    def _defaults(self) -> CSINode:
        _named(self.metadata, "CSINode")
        return self

    def limits(self) -> dict[str, int]:
        """`getVolumeLimits`: per driver, its `allocatable.count` (drivers without one have no limit)."""
        return {
            d.name: d.allocatable.count for d in self.spec.drivers if d.allocatable and d.allocatable.count is not None
        }


class CSIDriverSpec(K8sModel):
    # v1 defaulting: storageCapacity false when unset (pkg/apis/storage/v1/defaults.go)
    storage_capacity: bool = False

    _none_false = none_as_empty(bool, "storage_capacity")


class CSIDriver(K8sModel):
    """storage.k8s.io/v1 CSIDriver: whether VolumeBinding checks the driver's CSIStorageCapacity."""

    api_version: str = "storage.k8s.io/v1"
    kind: Literal["CSIDriver"] = "CSIDriver"
    metadata: ObjectMeta
    spec: CSIDriverSpec = Field(default_factory=CSIDriverSpec)

    @model_validator(mode="after")
    def _defaults(self) -> CSIDriver:
        _named(self.metadata, "CSIDriver")
        return self


class CSIStorageCapacity(K8sModel):
    """storage.k8s.io/v1 CSIStorageCapacity: free capacity of a class in a topology segment."""

    api_version: str = "storage.k8s.io/v1"
    kind: Literal["CSIStorageCapacity"] = "CSIStorageCapacity"
    metadata: ObjectMeta
    storage_class_name: str = Field(min_length=1)
    node_topology: LabelSelector | None = None
    capacity: QuantityField | None = None
    maximum_volume_size: QuantityField | None = None

    @model_validator(mode="after")
    def _defaults(self) -> CSIStorageCapacity:
        _named(self.metadata, "CSIStorageCapacity")
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        return self

    @property
    def limit(self) -> int | None:
        """`volumeLimit`: maximumVolumeSize when set (more precise), else capacity; `Value()` bytes."""
        quantity = self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity
        return None if quantity is None else quantity.value()


def claim_class(claim: PersistentVolumeClaim) -> str:
    """`GetPersistentVolumeClaimClass`: the beta annotation wins over `spec.storageClassName`."""
    annotations = claim.metadata.annotations
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return claim.spec.storage_class_name or ""


def volume_class(volume: PersistentVolume) -> str:
    """`GetPersistentVolumeClass`: the beta annotation wins over `spec.storageClassName`."""
    annotations = volume.metadata.annotations
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return volume.spec.storage_class_name
