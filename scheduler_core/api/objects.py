"""Pydantic models of the Kubernetes objects the scheduler reads.

Field names follow the Kubernetes JSON (camelCase aliases). Unknown fields are kept, as the API
server tolerates them; a malformed known field fails validation with its path. API-server
defaulting that changes scheduling is applied here: a container's requests default to its limits,
ports default to TCP (and, with hostNetwork, their hostPort to their containerPort), a pod's
namespace to "default" and its schedulerName to "default-scheduler".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from . import limits
from .quantity import Quantity, QuantityError, parse_quantity
from .text import quote

__all__ = [
    "Affinity",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "K8sModel",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "ObjectMeta",
    "OwnerReference",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSpec",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "QuantityField",
    "ResourceList",
    "RuntimeClass",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
    "Workload",
]


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # int32 fields (spec.priority, PriorityClass.value)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # int64 fields (tolerationSeconds)


def at_most(limit: int) -> BeforeValidator:
    """A list or map of at most `limit` entries (see `limits`), checked before its items are:
    `Too many: 5000: must have at most 1000 items`, upstream's field.TooMany wording."""

    def check(value: object) -> object:
        if isinstance(value, (list, dict)) and len(value) > limit:
            raise ValueError(f"Too many: {len(value)}: must have at most {limit} items")
        return value

    return BeforeValidator(check)


def none_as_empty(empty: Callable[[], object], *fields: str) -> Any:
    """A before-validator, assigned in a model's body: `fields` given as null (as YAML writes an
    empty field) read as `empty()` (`[]`, `{}`, `""` or False), as the API server decodes them."""

    def coerce(cls: type, value: object) -> object:
        return empty() if value is None else value

    return field_validator(*fields, mode="before")(coerce)


def _to_quantity(raw: object) -> Quantity:
    if isinstance(raw, Quantity):
        return raw
    if type(raw) is str or type(raw) is int:  # a snapshot repeats the same few quantities: parse each once
        return _parsed_quantity(type(raw), raw)  # type: ignore[arg-type]
    return _parse_quantity(raw)


@functools.lru_cache(maxsize=4096)
def _parsed_quantity(kind: type, raw: str | int) -> Quantity:
    return _parse_quantity(raw)


def _parse_quantity(raw: object) -> Quantity:
    if isinstance(raw, str) and len(raw) > limits.MAX_QUANTITY_CHARS:
        raise ValueError(
            f"{quote(raw)} is not a valid quantity: must be no more than {limits.MAX_QUANTITY_CHARS} characters"
        )
    try:
        return parse_quantity(raw)
    except QuantityError as exc:  # pydantic reports ValueError with the field path
        raise ValueError(str(exc)) from None


QuantityField = Annotated[
    Quantity,
    BeforeValidator(_to_quantity),
    PlainSerializer(lambda q: q.text, return_type=str),
]
ResourceList = Annotated[dict[str, QuantityField], at_most(limits.MAX_RESOURCE_NAMES)]


class K8sModel(BaseModel):
    """Base: camelCase aliases, unknown fields kept, assignment not validated (speed)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=False,
    )

    def to_dict(self) -> dict[str, Any]:
        """The object as Kubernetes JSON (camelCase, empty fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class OwnerReference(K8sModel):
    api_version: str = ""
    kind: str
    name: str
    uid: str = ""
    controller: bool | None = None


class ObjectMeta(K8sModel):
    name: str = ""
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    labels: Annotated[dict[str, str], at_most(limits.MAX_LABELS)] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: Annotated[list[OwnerReference], at_most(limits.MAX_OWNER_REFERENCES)] = Field(
        default_factory=list
    )
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None

    _none_is_empty = none_as_empty(dict, "labels", "annotations")

    @field_validator("annotations")
    @classmethod
    def _annotations_size(cls, value: dict[str, str]) -> dict[str, str]:
        # ValidateAnnotationsSize (apimachinery/pkg/api/validation/objectmeta.go)
        total = sum(len(k.encode()) + len(v.encode()) for k, v in value.items())
        if total > limits.MAX_ANNOTATIONS_BYTES:
            raise ValueError(f"Too long: must have at most {limits.MAX_ANNOTATIONS_BYTES} bytes")
        return value


# --- selectors ------------------------------------------------------------------------------

NodeSelectorOperator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
LabelSelectorOperator = Literal["In", "NotIn", "Exists", "DoesNotExist"]


SelectorValues = Annotated[list[str], at_most(limits.MAX_SELECTOR_VALUES)]


class NodeSelectorRequirement(K8sModel):
    key: str
    operator: NodeSelectorOperator
    values: SelectorValues = Field(default_factory=list)


NodeSelectorRequirements = Annotated[list[NodeSelectorRequirement], at_most(limits.MAX_MATCH_EXPRESSIONS)]


class NodeSelectorTerm(K8sModel):
    match_expressions: NodeSelectorRequirements = Field(default_factory=list)
    match_fields: NodeSelectorRequirements = Field(default_factory=list)


class NodeSelector(K8sModel):
    node_selector_terms: Annotated[list[NodeSelectorTerm], at_most(limits.MAX_SELECTOR_TERMS)] = Field(
        default_factory=list
    )


class PreferredSchedulingTerm(K8sModel):
    weight: int = Field(ge=1, le=100)
    preference: NodeSelectorTerm


class NodeAffinity(K8sModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: Annotated[
        list[PreferredSchedulingTerm], at_most(limits.MAX_SELECTOR_TERMS)
    ] = Field(default_factory=list)


class LabelSelectorRequirement(K8sModel):
    key: str
    operator: LabelSelectorOperator
    values: SelectorValues = Field(default_factory=list)


class LabelSelector(K8sModel):
    match_labels: Annotated[dict[str, str], at_most(limits.MAX_LABELS)] = Field(default_factory=dict)
    match_expressions: Annotated[list[LabelSelectorRequirement], at_most(limits.MAX_MATCH_EXPRESSIONS)] = Field(
        default_factory=list
    )

    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions


class PodAffinityTerm(K8sModel):
    label_selector: LabelSelector | None = None
    namespaces: SelectorValues = Field(default_factory=list)
    topology_key: str = Field(min_length=1)
    namespace_selector: LabelSelector | None = None
    match_label_keys: Annotated[list[str], at_most(limits.MAX_LABELS)] = Field(default_factory=list)
    mismatch_label_keys: Annotated[list[str], at_most(limits.MAX_LABELS)] = Field(default_factory=list)


class WeightedPodAffinityTerm(K8sModel):
    weight: int = Field(ge=1, le=100)
    pod_affinity_term: PodAffinityTerm


class PodAffinity(K8sModel):
    required_during_scheduling_ignored_during_execution: Annotated[
        list[PodAffinityTerm], at_most(limits.MAX_POD_AFFINITY_TERMS)
    ] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: Annotated[
        list[WeightedPodAffinityTerm], at_most(limits.MAX_POD_AFFINITY_TERMS)
    ] = Field(default_factory=list)


class PodAntiAffinity(PodAffinity):
    pass


class Affinity(K8sModel):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


# --- taints and tolerations -------------------------------------------------------------------

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Taint(K8sModel):
    key: str = Field(min_length=1)
    value: str = ""
    effect: TaintEffect
    time_added: str | None = None

    _none_value = none_as_empty(str, "value")


_DECIMAL_INTEGER = re.compile(r"^(0|-?[1-9][0-9]*)$")


def _decimal_int64(text: str) -> int | None:
    """content.IsDecimalInteger then strconv.ParseInt(…, 10, 64): "0" or [-][1-9][0-9]*, in int64."""
    if not _DECIMAL_INTEGER.match(text):
        return None
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else None


class Toleration(K8sModel):
    key: str = ""
    operator: Literal["", "Exists", "Equal", "Lt", "Gt"] = ""  # Lt/Gt: v1.35+ API (#134665)
    value: str = ""
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = ""
    toleration_seconds: int | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)

    _none_is_blank = none_as_empty(str, "key", "value", "operator", "effect")

    @model_validator(mode="after")
    def _check(self) -> Toleration:
        # staging/src/k8s.io/api validation: operator Exists takes no value; empty key needs Exists.
        if self.operator == "Exists" and self.value:
            raise ValueError("value must be empty when `operator` is 'Exists'")
        if not self.key and self.operator not in ("Exists",):
            raise ValueError('operator must be Exists when `key` is empty, which means "match all values and all keys"')
        return self

    def tolerates(self, taint: Taint, comparison_operators: bool = False) -> bool:
        """`ToleratesTaint` (staging/src/k8s.io/api/core/v1/toleration.go); `comparison_operators` is
        the TaintTolerationComparisonOperators gate (v1.35 alpha): without it Lt/Gt never tolerate."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator == "Exists":
            return True
        if not comparison_operators:
            return False
        # compareNumericValues: both canonical decimal int64s, else not tolerated; strict comparisons
        toleration_value, taint_value = _decimal_int64(self.value), _decimal_int64(taint.value or "")
        if toleration_value is None or taint_value is None:
            return False
        return taint_value < toleration_value if self.operator == "Lt" else taint_value > toleration_value


# --- containers and volumes -------------------------------------------------------------------


class ContainerPort(K8sModel):
    name: str | None = None
    container_port: int = Field(ge=1, le=65535)
    host_port: int = Field(default=0, ge=0, le=65535)
    host_ip: str = Field(default="", alias="hostIP")
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"


class ResourceRequirements(K8sModel):
    requests: ResourceList = Field(default_factory=dict)
    limits: ResourceList = Field(default_factory=dict)

    _none_is_empty = none_as_empty(dict, "requests", "limits")

    @field_validator("requests", "limits")
    @classmethod
    def _non_negative(cls, value: dict[str, Quantity]) -> dict[str, Quantity]:
        for name, quantity in value.items():
            if quantity.amount.numerator < 0:  # (an int comparison: Fraction comparisons are slow)
                # ValidateResourceQuantityValue: the path names the key, e.g. requests[cpu].
                raise ValueError(f'[{name}]: Invalid value: "{quantity.text}": must be greater than or equal to 0')
        return value


class Container(K8sModel):
    name: str = Field(min_length=1)
    image: str = ""
    ports: Annotated[list[ContainerPort], at_most(limits.MAX_CONTAINER_PORTS)] = Field(default_factory=list)
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)
    restart_policy: str | None = None

    _none_is_empty = none_as_empty(list, "ports")

    @property
    def is_sidecar(self) -> bool:
        """A restartable init container (`restartPolicy: Always`)."""
        return self.restart_policy == "Always"


class Volume(K8sModel):
    name: str
    gce_persistent_disk: dict[str, Any] | None = None
    aws_elastic_block_store: dict[str, Any] | None = None
    iscsi: dict[str, Any] | None = None
    rbd: dict[str, Any] | None = None
    persistent_volume_claim: dict[str, Any] | None = None
    # Generic ephemeral volumes (a claim named `<pod>-<volume>`) and the in-tree sources that
    # csi-translation-lib can migrate inline (NodeVolumeLimits counts them).
    ephemeral: dict[str, Any] | None = None
    azure_disk: dict[str, Any] | None = None
    azure_file: dict[str, Any] | None = None
    cinder: dict[str, Any] | None = None
    vsphere_volume: dict[str, Any] | None = None
    portworx_volume: dict[str, Any] | None = None
    empty_dir: dict[str, Any] | None = None  # local storage, which `kubectl drain` refuses to delete

    @property
    def read_by_plugins(self) -> bool:
        """Whether a volume plugin reads this volume: a claim, an ephemeral volume or a disk (not
        emptyDir, nor a volume whose source the loader dropped: configMap, secret, projected, …)."""
        return any(getattr(self, source) is not None for source in _PLUGIN_VOLUME_SOURCES)

    @property
    def claim_name(self) -> str | None:
        """The claim a `persistentVolumeClaim` volume names (None for other volumes)."""
        if self.persistent_volume_claim is None:
            return None
        return str(self.persistent_volume_claim.get("claimName") or "")


_PLUGIN_VOLUME_SOURCES = tuple(
    name for name in Volume.model_fields if name not in ("name", "empty_dir")
)  # the sources a plugin reads


class TopologySpreadConstraint(K8sModel):
    max_skew: int = Field(ge=1)
    topology_key: str = Field(min_length=1)
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    label_selector: LabelSelector | None = None
    min_domains: int | None = Field(default=None, ge=1)
    node_affinity_policy: Literal["Honor", "Ignore"] | None = None
    node_taints_policy: Literal["Honor", "Ignore"] | None = None
    match_label_keys: Annotated[list[str], at_most(limits.MAX_LABELS)] = Field(default_factory=list)


class SchedulingGate(K8sModel):
    name: str


class PodResourceClaim(K8sModel):
    """`spec.resourceClaims[]`: a ResourceClaim by name, or one made from a template for the pod."""

    name: str = Field(min_length=1)
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodResourceClaimStatus(K8sModel):
    """`status.resourceClaimStatuses[]`: the claim the controller made from a template (None: none needed)."""

    name: str
    resource_claim_name: str | None = None


class PodResources(K8sModel):
    """Pod-level resources. Requests missing here but limited are defaulted by the API server
    from the containers (see `PodSpec`)."""

    requests: ResourceList = Field(default_factory=dict)
    limits: ResourceList = Field(default_factory=dict)

    @field_validator("requests", "limits")
    @classmethod
    def _non_negative(cls, value: dict[str, Quantity]) -> dict[str, Quantity]:
        return ResourceRequirements._non_negative(value)


class PodSpec(K8sModel):
    node_name: str = ""
    node_selector: Annotated[dict[str, str], at_most(limits.MAX_LABELS)] = Field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: Annotated[list[Toleration], at_most(limits.MAX_TOLERATIONS)] = Field(default_factory=list)
    containers: Annotated[list[Container], at_most(limits.MAX_CONTAINERS)] = Field(default_factory=list)
    init_containers: Annotated[list[Container], at_most(limits.MAX_CONTAINERS)] = Field(default_factory=list)
    volumes: Annotated[list[Volume], at_most(limits.MAX_VOLUMES)] = Field(default_factory=list)
    topology_spread_constraints: Annotated[
        list[TopologySpreadConstraint], at_most(limits.MAX_TOPOLOGY_SPREAD_CONSTRAINTS)
    ] = Field(default_factory=list)
    priority: int | None = Field(default=None, ge=INT32_MIN, le=INT32_MAX)
    priority_class_name: str = ""
    preemption_policy: Literal["PreemptLowerPriority", "Never"] | None = None
    overhead: ResourceList = Field(default_factory=dict)
    runtime_class_name: str | None = None
    scheduler_name: str = "default-scheduler"
    scheduling_gates: Annotated[list[SchedulingGate], at_most(limits.MAX_LABELS)] = Field(default_factory=list)
    resources: PodResources | None = None
    resource_claims: Annotated[list[PodResourceClaim], at_most(limits.MAX_RESOURCE_CLAIMS)] = Field(
        default_factory=list
    )
    host_network: bool | None = None  # omitempty: false is never written

    @field_validator(
        "node_selector",
        "overhead",
        mode="before",
    )
    @classmethod
    def _none_map(cls, value: object) -> object:
        return {} if value is None else value

    @field_validator(
        "tolerations",
        "init_containers",
        "volumes",
        "topology_spread_constraints",
        "scheduling_gates",
        "resource_claims",
        mode="before",
    )
    @classmethod
    def _none_list(cls, value: object) -> object:
        return [] if value is None else value

    @field_validator("overhead")
    @classmethod
    def _overhead_non_negative(cls, value: dict[str, Quantity]) -> dict[str, Quantity]:
        # validateOverhead reuses ValidateResourceRequirements with the overhead as Limits, hence
        # upstream's path `spec.overhead.limits[cpu]`.
        for name, quantity in value.items():
            if quantity.amount.numerator < 0:  # (an int comparison: Fraction comparisons are slow)
                raise ValueError(
                    f'.limits[{name}]: Invalid value: "{quantity.text}": must be greater than or equal to 0'
                )
        return value

    _none_str = none_as_empty(str, "node_name", "priority_class_name")

    @field_validator("host_network", mode="before")
    @classmethod
    def _false_is_absent(cls, value: object) -> object:
        return None if value is False else value

    def default_as_pod(self) -> None:
        """pkg/apis/core/v1/defaults.go SetDefaults_Pod, which only a Pod gets (a workload's
        template keeps what it was given): a container's requests default to its limits; a
        pod-level limit without a pod-level request defaults the request to the limit when no
        container requests that resource (defaultPodRequests; otherwise the containers' aggregate
        stands, as the scheduler computes it anyway); with host networking a port without a
        hostPort takes its containerPort (defaultHostNetworkPorts), so NodePorts sees the ports
        the pod really binds."""
        containers = (*self.containers, *self.init_containers)
        for container in containers:
            resources = container.resources
            for name, quantity in resources.limits.items():
                resources.requests.setdefault(name, quantity)
        if self.resources is not None:
            for name, limit in self.resources.limits.items():
                if name not in self.resources.requests and not any(name in c.resources.requests for c in containers):
                    self.resources.requests[name] = limit
        if self.host_network:
            for container in containers:
                for port in container.ports:
                    if port.host_port == 0:
                        port.host_port = port.container_port


class PodCondition(K8sModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None


class PodStatus(K8sModel):
    phase: str | None = None
    nominated_node_name: str | None = None
    start_time: str | None = None
    conditions: list[PodCondition] = Field(default_factory=list)
    resource_claim_statuses: list[PodResourceClaimStatus] = Field(default_factory=list)

    _none_list = none_as_empty(list, "conditions", "resource_claim_statuses")


class Pod(K8sModel):
    api_version: str = "v1"
    kind: Literal["Pod"] = "Pod"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus = Field(default_factory=PodStatus)

    @model_validator(mode="after")
    def _defaults(self) -> Pod:
        if not self.metadata.namespace:
            self.metadata.namespace = "default"
        if not self.spec.containers:
            raise ValueError("spec.containers: Required value")
        self.spec.default_as_pod()
        return self

    @property
    def key(self) -> str:
        """`namespace/name`, as the scheduler names a pod in messages."""
        return f"{self.metadata.namespace}/{self.metadata.name}"


class ContainerImage(K8sModel):
    names: Annotated[list[str], at_most(limits.MAX_IMAGE_NAMES)] = Field(default_factory=list)
    size_bytes: int = 0


class NodeSpec(K8sModel):
    unschedulable: bool = False
    taints: Annotated[list[Taint], at_most(limits.MAX_TAINTS)] = Field(default_factory=list)

    _none_list = none_as_empty(list, "taints")

    _none_false = none_as_empty(bool, "unschedulable")


class NodeStatus(K8sModel):
    capacity: ResourceList = Field(default_factory=dict)
    allocatable: ResourceList = Field(default_factory=dict)
    images: Annotated[list[ContainerImage], at_most(limits.MAX_NODE_IMAGES)] = Field(default_factory=list)
    # v1.35+ (KEP-5328): the features the kubelet declares, read by NodeDeclaredFeatures
    declared_features: Annotated[list[str], at_most(limits.MAX_DECLARED_FEATURES)] = Field(default_factory=list)

    _none_map = none_as_empty(dict, "capacity", "allocatable")

    @field_validator("capacity", "allocatable")
    @classmethod
    def _non_negative(cls, value: dict[str, Quantity]) -> dict[str, Quantity]:
        # ValidateNode: ValidateResourceQuantityValue on status.capacity.<name> and status.allocatable.<name>
        for name, quantity in value.items():
            if quantity.amount.numerator < 0:  # (an int comparison: Fraction comparisons are slow)
                raise ValueError(f'.{name}: Invalid value: "{quantity.text}": must be greater than or equal to 0')
        return value

    _none_list = none_as_empty(list, "images", "declared_features")


class Node(K8sModel):
    api_version: str = "v1"
    kind: Literal["Node"] = "Node"
    metadata: ObjectMeta
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)

    @model_validator(mode="after")
    def _defaults(self) -> Node:
        if not self.metadata.name:
            raise ValueError("metadata.name: Required value")
        # API-server defaulting (pkg/apis/core/v1/defaults.go SetDefaults_NodeStatus):
        # a node status without allocatable gets a copy of its capacity.
        if not self.status.allocatable:
            self.status.allocatable = dict(self.status.capacity)
        return self

    @property
    def name(self) -> str:
        return self.metadata.name


class Namespace(K8sModel):
    api_version: str = "v1"
    kind: Literal["Namespace"] = "Namespace"
    metadata: ObjectMeta


class PriorityClass(K8sModel):
    api_version: str = "scheduling.k8s.io/v1"
    kind: Literal["PriorityClass"] = "PriorityClass"
    metadata: ObjectMeta
    value: int = Field(ge=INT32_MIN, le=INT32_MAX)
    global_default: bool = False
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    description: str | None = None


class RuntimeClassOverhead(K8sModel):
    pod_fixed: ResourceList = Field(default_factory=dict)


class RuntimeClass(K8sModel):
    api_version: str = "node.k8s.io/v1"
    kind: Literal["RuntimeClass"] = "RuntimeClass"
    metadata: ObjectMeta
    handler: str = ""
    overhead: RuntimeClassOverhead | None = None


class Workload(K8sModel):
    """A Service or workload controller, kept for the selectors that spreading reads and for
    grouping pods by owner."""

    api_version: str = "v1"
    kind: Literal["Service", "ReplicaSet", "StatefulSet", "ReplicationController", "Deployment", "DaemonSet", "Job"]
    metadata: ObjectMeta
    spec: dict[str, Any] = Field(default_factory=dict)

    _none_map = none_as_empty(dict, "spec")
