"""Pydantic models of the Dynamic Resource Allocation kinds (resource.k8s.io/v1, GA in v1.34).

DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate with the fields the
DynamicResources plugin and the structured allocator read, and the API server's defaults and
checks that matter to them (pkg/apis/resource/v1 defaults.go, pkg/apis/resource/validation):
a request's `allocationMode` defaults to `ExactCount` and its `count` to 1; exactly one of
`exactly` / `firstAvailable` per request; device names unique within a slice; exactly one of
`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` per slice; exactly one value per
device attribute. Fields of gates that are off in v1.34 (device taints, partitionable devices,
binding conditions, consumable capacity) are kept as unknown fields and not read.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from .objects import (
    K8sModel,
    NodeSelector,
    ObjectMeta,
    PodResourceClaim,
    PodResourceClaimStatus,
    QuantityField,
    none_as_empty,
)

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "DRA_KINDS",
    "RESERVED_FOR_MAX_SIZE",
    "AllocationResult",
    "Device",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceSubRequest",
    "ExactDeviceRequest",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "qualified_name",
]

API_VERSION = "resource.k8s.io/v1"
# staging/src/k8s.io/api/resource/v1/types.go
RESERVED_FOR_MAX_SIZE = 256  # ResourceClaimReservedForMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32  # AllocationResultsMaxSize
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")

# semver.org 2.0.0, as k8s.io/dynamic-resource-allocation validates version attributes (blang/semver)
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def qualified_name(name: str, driver: str) -> str:
    """`FullyQualifiedName`: an attribute or capacity name without a domain is the driver's."""
    return name if "/" in name else f"{driver}/{name}"


def _exactly_one(model: K8sModel, fields: tuple[str, ...], shown: str) -> None:
    given = [f for f in fields if getattr(model, f) not in (None, False)]
    if len(given) != 1:
        if given:
            raise ValueError(f"Invalid value: {{{', '.join(given)}}}: exactly one of {shown} is required")
        raise ValueError(f"Required value: exactly one of {shown} is required")


# --- DeviceClass ------------------------------------------------------------------------------


class CELDeviceSelector(K8sModel):
    expression: str


class DeviceSelector(K8sModel):
    cel: CELDeviceSelector | None = None


class DeviceClassSpec(K8sModel):
    selectors: list[DeviceSelector] = Field(default_factory=list)
    config: list[dict[str, Any]] = Field(default_factory=list)

    _none_list = none_as_empty(list, "selectors", "config")


class DeviceClass(K8sModel):
    api_version: str = API_VERSION
    kind: Literal["DeviceClass"] = "DeviceClass"
    metadata: ObjectMeta
    spec: DeviceClassSpec = Field(default_factory=DeviceClassSpec)

    @model_validator(mode="after")
    def _named(self) -> DeviceClass:
        if not self.metadata.name:
            raise ValueError("metadata.name: Required value: name or generateName is required")
        return self

    @property
    def name(self) -> str:
        return self.metadata.name


# --- ResourceSlice ----------------------------------------------------------------------------


class DeviceAttribute(K8sModel):
    """Exactly one of int, bool, string, version."""

    int_: int | None = Field(default=None, alias="int", ge=-(2**63), le=2**63 - 1)
    bool_: bool | None = Field(default=None, alias="bool")
    string: str | None = Field(default=None, max_length=64)
    version: str | None = Field(default=None, max_length=64)

    @model_validator(mode="after")
    def _one_value(self) -> DeviceAttribute:
        given = sum(v is not None for v in (self.int_, self.bool_, self.string, self.version))
        if given != 1:
            raise ValueError("exactly one value must be specified")
        if self.version is not None and not _SEMVER.match(self.version):
            raise ValueError(
                f'.version: Invalid value: "{self.version}": must be a string compatible with semver.org spec 2.0.0'
            )
        return self

    @property
    def kind_and_value(self) -> tuple[str, int | bool | str]:
        if self.int_ is not None:
            return "int", self.int_
        if self.bool_ is not None:
            return "bool", self.bool_
        if self.string is not None:
            return "string", self.string
        return "version", str(self.version)


class DeviceCapacity(K8sModel):
    value: QuantityField


class Device(K8sModel):
    name: str = Field(min_length=1)
    attributes: dict[str, DeviceAttribute] = Field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = Field(default_factory=dict)
    # per-device node selection (spec.perDeviceNodeSelection)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None

    _none_map = none_as_empty(dict, "attributes", "capacity")


class ResourcePool(K8sModel):
    name: str = Field(min_length=1)
    generation: int = Field(default=0, ge=0)
    resource_slice_count: int = Field(default=1, ge=1)


class ResourceSliceSpec(K8sModel):
    driver: str = Field(min_length=1)
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: Annotated[list[Device], Field(max_length=128)] = Field(default_factory=list)

    _none_list = none_as_empty(list, "devices")

    @model_validator(mode="after")
    def _check(self) -> ResourceSliceSpec:
        _exactly_one(
            self,
            ("node_name", "node_selector", "all_nodes", "per_device_node_selection"),
            "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`",
        )
        seen: set[str] = set()
        for i, device in enumerate(self.devices):
            if device.name in seen:
                raise ValueError(f'devices[{i}].name: Duplicate value: "{device.name}"')
            seen.add(device.name)
            if self.per_device_node_selection:
                _exactly_one(
                    device, ("node_name", "node_selector", "all_nodes"), "`nodeName`, `nodeSelector`, `allNodes`"
                )
        return self


class ResourceSlice(K8sModel):
    api_version: str = API_VERSION
    kind: Literal["ResourceSlice"] = "ResourceSlice"
    metadata: ObjectMeta
    spec: ResourceSliceSpec

    @property
    def name(self) -> str:
        return self.metadata.name


# --- ResourceClaim ----------------------------------------------------------------------------

AllocationMode = Literal["ExactCount", "All"]


class _CountedRequest(K8sModel):
    """What an exact request and a subrequest share."""

    device_class_name: str = ""
    selectors: list[DeviceSelector] = Field(default_factory=list)
    allocation_mode: AllocationMode = "ExactCount"
    count: int | None = None
    tolerations: list[dict[str, Any]] = Field(default_factory=list)

    _none_list = none_as_empty(list, "selectors", "tolerations")

    @model_validator(mode="after")
    def _default_count(self) -> _CountedRequest:
        # pkg/apis/resource/v1 defaults.go: ExactCount with no count means one device
        if self.allocation_mode == "ExactCount":
            if self.count is None:
                self.count = 1
            elif self.count <= 0:
                raise ValueError(f"count: Invalid value: {self.count}: must be greater than zero")
        elif self.count is not None:
            raise ValueError(f"count: Invalid value: {self.count}: must not be specified when allocationMode is 'All'")
        return self

    @property
    def wanted(self) -> int:
        return self.count or 0


class ExactDeviceRequest(_CountedRequest):
    admin_access: bool | None = None


class DeviceSubRequest(_CountedRequest):
    name: str = Field(min_length=1)


class DeviceRequest(K8sModel):
    name: str = Field(min_length=1)
    exactly: ExactDeviceRequest | None = None
    first_available: Annotated[list[DeviceSubRequest], Field(max_length=8)] = Field(default_factory=list)

    _none_list = none_as_empty(list, "first_available")

    @model_validator(mode="after")
    def _one_kind(self) -> DeviceRequest:
        if (self.exactly is None) == (not self.first_available):
            raise ValueError("Required value: exactly one of `exactly` or `firstAvailable` is required")
        return self


class DeviceConstraint(K8sModel):
    requests: list[str] = Field(default_factory=list)
    match_attribute: str | None = None

    _none_list = none_as_empty(list, "requests")


class DeviceClaim(K8sModel):
    requests: Annotated[list[DeviceRequest], Field(max_length=32)] = Field(default_factory=list)
    constraints: list[DeviceConstraint] = Field(default_factory=list)
    config: list[dict[str, Any]] = Field(default_factory=list)

    _none_list = none_as_empty(list, "requests", "constraints", "config")

    @model_validator(mode="after")
    def _unique_requests(self) -> DeviceClaim:
        seen: set[str] = set()
        for i, request in enumerate(self.requests):
            if request.name in seen:
                raise ValueError(f'requests[{i}].name: Duplicate value: "{request.name}"')
            seen.add(request.name)
        return self


class ResourceClaimSpec(K8sModel):
    devices: DeviceClaim = Field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(K8sModel):
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None


class DeviceAllocationResult(K8sModel):
    results: list[DeviceRequestAllocationResult] = Field(default_factory=list)
    config: list[dict[str, Any]] = Field(default_factory=list)

    _none_list = none_as_empty(list, "results", "config")


class AllocationResult(K8sModel):
    devices: DeviceAllocationResult = Field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(K8sModel):
    api_group: str = ""
    resource: str
    name: str
    uid: str


class ResourceClaimStatus(K8sModel):
    allocation: AllocationResult | None = None
    reserved_for: Annotated[list[ResourceClaimConsumerReference], Field(max_length=RESERVED_FOR_MAX_SIZE)] = Field(
        default_factory=list
    )

    _none_list = none_as_empty(list, "reserved_for")


class ResourceClaim(K8sModel):
    api_version: str = API_VERSION
    kind: Literal["ResourceClaim"] = "ResourceClaim"
    metadata: ObjectMeta
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = Field(default_factory=ResourceClaimStatus)

    @model_validator(mode="after")
    def _defaults(self) -> ResourceClaim:
        if not self.metadata.name:
            raise ValueError("metadata.name: Required value: name or generateName is required")
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        return self

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def uid(self) -> str:
        return self.metadata.uid or ""


class ResourceClaimTemplateSpec(K8sModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = Field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(K8sModel):
    api_version: str = API_VERSION
    kind: Literal["ResourceClaimTemplate"] = "ResourceClaimTemplate"
    metadata: ObjectMeta
    spec: ResourceClaimTemplateSpec = Field(default_factory=ResourceClaimTemplateSpec)

    @model_validator(mode="after")
    def _defaults(self) -> ResourceClaimTemplate:
        if not self.metadata.name:
            raise ValueError("metadata.name: Required value: name or generateName is required")
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        return self
