"""What the API server checks and fills in before an object is stored.

`admit()` validates a Kubernetes object (JSON) of a supported kind, applies defaulting and
admission (priority from PriorityClasses, RuntimeClass overhead, the SchedulingGated condition)
and returns the body to store. Errors are `InputError`s naming the field (and the line, when the
YAML node tree is given).
"""

from __future__ import annotations

from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from scheduler_core.api.limits import MAX_LABELS
from scheduler_core.api.loading import InputError, admit_pod, format_validation_error, locate
from scheduler_core.api.objects import (
    LabelSelector,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodSpec,
    PriorityClass,
    RuntimeClass,
)
from scheduler_core.api.text import quote
from scheduler_core.api.validation import (
    Replicas,
    dns1123_label_error,
    dns1123_subdomain_error,
    label_key_error,
    label_value_error,
)
from scheduler_core.framework.selectors import compile_label_selector

from .defaults import default_namespace, default_pod, default_workload
from .kube_api.schema import newest_schema

__all__ = ["SUPPORTED_KINDS", "admit", "prune", "prune_as"]

SUPPORTED_KINDS = (
    "Pod",
    "Node",
    "Deployment",
    "ReplicaSet",
    "Namespace",
    "PriorityClass",
    "DaemonSet",
    "StatefulSet",
    "Job",
    "Service",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "LimitRange",
    "ResourceQuota",
    "PersistentVolumeClaim",
    "PodDisruptionBudget",
    "ControllerRevision",
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "StorageClass",
    "CSIDriver",
    "CSIStorageCapacity",
    "PersistentVolume",
    "CSINode",
)
API_VERSIONS = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "Event": "v1",
    "DaemonSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
    "Service": "v1",
    "ConfigMap": "v1",
    "Secret": "v1",
    "ServiceAccount": "v1",
    "LimitRange": "v1",
    "ResourceQuota": "v1",
    "PersistentVolumeClaim": "v1",
    "PodDisruptionBudget": "policy/v1",
    "ControllerRevision": "apps/v1",
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSIDriver": "storage.k8s.io/v1",
    "CSIStorageCapacity": "storage.k8s.io/v1",
    "PersistentVolume": "v1",
    "CSINode": "storage.k8s.io/v1",
}


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class PodTemplate(_Model):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec

    @model_validator(mode="after")
    def _containers(self) -> PodTemplate:
        if not self.spec.containers:
            raise ValueError("spec.containers: Required value")
        return self


class WorkloadSpec(_Model):
    replicas: Replicas = 1
    selector: LabelSelector
    template: PodTemplate

    @model_validator(mode="after")
    def _selector_matches_template(self) -> WorkloadSpec:
        if self.selector.is_empty():
            raise ValueError("selector: Invalid value: empty selector is invalid for deployment")
        if not compile_label_selector(self.selector).matches(self.template.metadata.labels):
            raise ValueError("template.metadata.labels: Invalid value: `selector` does not match template `labels`")
        return self


class Workload(_Model):
    api_version: str
    kind: Literal["Deployment", "ReplicaSet"]
    metadata: ObjectMeta
    spec: WorkloadSpec


# Fields whose values are maps of strings: an empty string there is data (`kgc: ""`), not a default.
_STRING_MAPS = frozenset(
    {"labels", "annotations", "nodeSelector", "matchLabels", "requests", "limits", "capacity", "allocatable"}
)


def prune(value: Any, in_map: bool = False) -> Any:
    """Drop what the API server's JSON leaves out (omitempty): nulls, empty lists and maps, empty
    strings of struct fields and `unschedulable: false`; empty strings in label-like maps stay."""
    if isinstance(value, dict):
        out = {k: prune(v, k in _STRING_MAPS) for k, v in value.items()}
        return {
            k: v
            for k, v in out.items()
            if v not in (None, [], {}) and (in_map or v != "") and not (k == "unschedulable" and v is False)
        }
    if isinstance(value, list):
        return [prune(v) for v in value]
    return value


def prune_as(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """`prune` guided by the kind's schema: an empty struct stays (`emptyDir: {}`, `resources: {}` —
    a set pointer or a struct is written even when empty), empty lists and maps go. The newest
    release's schema answers which fields are structs (it knows every type the older ones have)."""
    type_name = newest_schema().kind_type(kind)
    return _prune_typed(body, type_name) if type_name else prune(body)


def _fields_of(type_name: str) -> dict[str, Any] | None:
    return newest_schema().fields_of(type_name)


def _prune_typed(value: Any, go_type: str) -> Any:
    if go_type.startswith("[]"):
        return [_prune_typed(v, go_type[2:]) for v in value] if isinstance(value, list) else prune(value)
    if not isinstance(value, dict):
        return value
    if go_type.startswith("map[string]"):
        inner = go_type[len("map[string]") :]
        out = {k: _prune_typed(v, inner) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, [], {}) or (v == {} and _fields_of(inner) is not None)}
    fields = _fields_of(go_type)
    if fields is None:
        return prune(value)
    kept: dict[str, Any] = {}
    for key, item in value.items():
        field = fields.get(key)
        pruned = _prune_typed(item, field.type) if field is not None else prune(item, key in _STRING_MAPS)
        if pruned is None or pruned == [] or pruned == "" or (key == "unschedulable" and pruned is False):
            continue
        if pruned == {} and (field is None or _fields_of(field.type) is None):
            continue
        kept[key] = pruned
    return kept


def _check_meta(
    kind: str,
    meta: dict[str, Any],
    source: str,
    node: yaml.Node | None,
    path: tuple[int | str, ...],
    require_name: bool = True,
) -> None:
    """Name, namespace and labels; errors read `source:line: path.metadata.name: ...`."""
    for field in ("name", "generateName", "namespace"):
        value = meta.get(field)
        if value is not None and not isinstance(value, str):
            where = locate(source, node, (*path, "metadata", field))
            raise InputError(f'{where}: Invalid value: "{value}": must be a string')
    namespace = meta.get("namespace") or ""
    if namespace and kind not in ("Node", "Namespace", "PriorityClass"):
        error = dns1123_label_error(namespace)
        if error:
            raise InputError(f"{locate(source, node, (*path, 'metadata', 'namespace'))}: {error}")
    name = meta.get("name") or ""
    if require_name and not name and not meta.get("generateName"):
        where = locate(source, node, (*path, "metadata", "name"))
        raise InputError(f"{where}: Required value: name or generateName is required")
    if name:
        error = dns1123_label_error(name) if kind == "Namespace" else dns1123_subdomain_error(name)
        if error:
            raise InputError(f"{locate(source, node, (*path, 'metadata', 'name'))}: {error}")
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        raise InputError(f"{locate(source, node, (*path, 'metadata', 'labels'))}: must be a map of strings")
    if len(labels) > MAX_LABELS:
        where = locate(source, node, (*path, "metadata", "labels"))
        raise InputError(f"{where}: Too many: {len(labels)}: must have at most {MAX_LABELS} items")
    for key, value in labels.items():
        error = label_key_error(str(key)) or (
            label_value_error(value) if isinstance(value, str) else f'Invalid value: "{value}": must be a string'
        )
        if error:
            raise InputError(f"{locate(source, node, (*path, 'metadata', 'labels'))}: {error}")


def _check_no_nul(body: Any, source: str, node: yaml.Node | None, prefix: tuple[int | str, ...]) -> None:
    """No NUL character in any string or key: PostgreSQL cannot store one in JSON (and no
    Kubernetes field takes one), so it is refused here, located, rather than by the database."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(body, prefix)]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                where = locate(source, node, path)
                raise InputError(f"{where}: Invalid value: {quote(value)}: must not contain NUL characters")
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and "\x00" in key:
                    where = locate(source, node, path)
                    raise InputError(f"{where}: Invalid value: {quote(key)}: keys must not contain NUL characters")
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(value))


def _check_containers(spec: PodSpec, source: str, node: yaml.Node | None, path: tuple[int | str, ...]) -> None:
    """pkg/apis/core/validation validateInitContainers/validateContainers: every container name is a
    DNS-1123 label, unique across initContainers and containers; every container names its image
    (validateContainerCommon: `image: Required value`, checked after the name)."""
    seen: set[str] = set()
    for field, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for index, container in enumerate(containers):
            loc = (*path, field, index, "name")
            error = dns1123_label_error(container.name)
            if error:
                raise InputError(f"{locate(source, node, loc)}: {error}")
            if container.name in seen:
                raise InputError(f"{locate(source, node, loc)}: Duplicate value: {quote(container.name)}")
            seen.add(container.name)
            if not container.image:
                raise InputError(f"{locate(source, node, (*path, field, index, 'image'))}: Required value")


HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")


def _check_priority_class(
    body: dict[str, Any], source: str, node: yaml.Node | None, prefix: tuple[int | str, ...]
) -> None:
    """pkg/apis/scheduling/validation ValidatePriorityClass: user classes stay at or below 1e9 and
    the `system-` prefix is reserved."""
    name = body["metadata"].get("name", "")
    if name in SYSTEM_PRIORITY_CLASSES:
        return
    if name.startswith("system-"):
        where = locate(source, node, (*prefix, "metadata", "name"))
        raise InputError(
            f"{where}: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            f"error: {name} is not a known system priority class"
        )
    if int(body.get("value", 0)) > HIGHEST_USER_DEFINABLE_PRIORITY:
        where = locate(source, node, (*prefix, "value"))
        raise InputError(
            f"{where}: Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        )


def admit(
    body: Any,
    source: str = "object",
    node: yaml.Node | None = None,
    priority_classes: dict[str, PriorityClass] | None = None,
    runtime_classes: dict[str, RuntimeClass] | None = None,
    prefix: tuple[int | str, ...] = (),
) -> dict[str, Any]:
    """Validate and default one object; returns the JSON to store.

    `node` is the YAML document's node and `prefix` the object's path in it (`("items", 3)` for
    an item of a List), so that errors name the right line and field.
    """
    if not isinstance(body, dict):
        where = locate(source, node, prefix)
        raise InputError(f"{where}: expected a Kubernetes object (a mapping)")
    kind = body.get("kind")
    if kind not in SUPPORTED_KINDS:
        supported = ", ".join(SUPPORTED_KINDS)
        raise InputError(
            f'{locate(source, node, (*prefix, "kind"))}: unsupported kind "{kind}" (supported: {supported})'
        )
    api_version = body.get("apiVersion") or API_VERSIONS[kind]
    if api_version != API_VERSIONS[kind]:
        raise InputError(
            f'{locate(source, node, (*prefix, "apiVersion"))}: "{api_version}" is not served for kind {kind} '
            f"(use {API_VERSIONS[kind]})"
        )
    _check_no_nul(body, source, node, prefix)
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        raise InputError(f"{locate(source, node, (*prefix, 'metadata'))}: Required value")
    _check_meta(kind, meta, source, node, prefix)
    try:
        if kind == "Pod":
            pod = Pod.model_validate(body)
            _check_containers(pod.spec, source, node, (*prefix, "spec"))
            admit_pod(pod, priority_classes or {}, runtime_classes or {}, source, node, prefix)
            out = prune_as("Pod", pod.to_dict())
            default_pod(out)
            out["spec"]["priority"] = pod.spec.priority
            out.setdefault("status", {}).setdefault("phase", "Pending")
            if pod.spec.scheduling_gates and not pod.spec.node_name:
                out["status"].setdefault("conditions", []).append(
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "SchedulingGated",
                        "message": "Scheduling is blocked due to non-empty scheduling gates",
                    }
                )
            return out
        if kind == "Node":
            out = prune_as("Node", Node.model_validate(body).to_dict())
            # spec and status are structs: the API server always writes them, if only as {}
            out.setdefault("spec", {})
            out.setdefault("status", {})
            return out
        if kind == "Namespace":
            out = prune_as("Namespace", Namespace.model_validate(body).to_dict())
            default_namespace(out)
            return out
        if kind == "PriorityClass":
            out = prune_as("PriorityClass", PriorityClass.model_validate(body).to_dict())
            _check_priority_class(out, source, node, prefix)
            return out
        if kind == "PersistentVolume" or api_version.startswith(("resource.k8s.io/", "storage.k8s.io/")):
            from .resource_admission import admit_resource_kind  # imports this module's prune_as

            return admit_resource_kind(kind, {**body, "apiVersion": api_version}, source, node, prefix)
        if kind not in ("Deployment", "ReplicaSet"):
            from .kinds_admission import admit_extra  # imports this module's models

            return admit_extra(kind, {**body, "apiVersion": api_version}, source, node, prefix)
        workload = Workload.model_validate({**body, "apiVersion": api_version})
        _check_containers(workload.spec.template.spec, source, node, (*prefix, "spec", "template", "spec"))
        template_meta = workload.spec.template.metadata.model_dump(by_alias=True)
        _check_meta("Pod", template_meta, source, node, (*prefix, "spec", "template"), require_name=False)
        out = prune_as(workload.kind, workload.model_dump(by_alias=True, exclude_none=True, mode="json"))
        out["spec"]["replicas"] = workload.spec.replicas
        default_workload(out)
        return out
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, node, prefix)) from None
