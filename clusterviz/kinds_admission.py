"""Validation and API defaults of the kinds beyond pods, nodes and Deployments: DaemonSet,
StatefulSet, Job, Service, ConfigMap, Secret, ServiceAccount, PersistentVolumeClaim,
PodDisruptionBudget and ControllerRevision.

Defaults follow pkg/apis/apps/v1/defaults.go, pkg/apis/batch/v1/defaults.go and
pkg/apis/core/v1/defaults.go (v1.34); errors name the field as kube-apiserver's validation does.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError

from scheduler_core.api.loading import InputError, format_validation_error, locate
from scheduler_core.api.objects import LabelSelector, ObjectMeta
from scheduler_core.api.policy import PodDisruptionBudget
from scheduler_core.api.validation import Replicas
from scheduler_core.framework.selectors import compile_label_selector

from .validation import PodTemplate, _check_containers, _check_meta, _Model, prune, prune_as

__all__ = ["admit_extra"]

JOB_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"

Obj = dict[str, Any]
Path = tuple[int | str, ...]


class _TemplatedSpec(_Model):
    selector: LabelSelector | None = None
    template: PodTemplate


class _Templated(_Model):
    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: _TemplatedSpec


class _StatefulSetSpec(_TemplatedSpec):
    replicas: Replicas = 1
    pod_management_policy: Literal["OrderedReady", "Parallel"] = "OrderedReady"


class _JobSpec(_TemplatedSpec):
    parallelism: int | None = Field(default=None, ge=0)
    completions: int | None = Field(default=None, ge=0)
    backoff_limit: int | None = Field(default=None, ge=0)


_SPEC_MODELS: dict[str, type[_TemplatedSpec]] = {
    "DaemonSet": _TemplatedSpec,
    "StatefulSet": _StatefulSetSpec,
    "Job": _JobSpec,
}


def _templated(kind: str, body: Obj, source: str, node: yaml.Node | None, prefix: Path) -> Obj:
    """The workload kinds with a pod template; returns the pruned, defaulted object."""
    spec_model = _SPEC_MODELS[kind]
    try:
        spec = spec_model.model_validate(body.get("spec") or {})
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, node, (*prefix, "spec"))) from None
    if kind == "Job":
        policy = ((body["spec"].get("template") or {}).get("spec") or {}).get("restartPolicy") or "Always"
        if policy not in ("OnFailure", "Never"):
            where = locate(source, node, (*prefix, "spec", "template", "spec", "restartPolicy"))
            raise InputError(f'{where}: Unsupported value: "{policy}": supported values: "OnFailure", "Never"')
    _check_containers(spec.template.spec, source, node, (*prefix, "spec", "template", "spec"))
    template_meta = spec.template.metadata.model_dump(by_alias=True)
    _check_meta("Pod", template_meta, source, node, (*prefix, "spec", "template"), require_name=False)
    model = _Templated.model_validate(body)
    out = prune(model.model_dump(by_alias=True, exclude_none=True, mode="json"))
    out.setdefault("spec", {})
    if kind == "Job":
        _default_job(out)
    elif spec.selector is None or spec.selector.is_empty():
        where = locate(source, node, (*prefix, "spec", "selector"))
        raise InputError(f"{where}: Invalid value: empty selector is invalid for {kind.lower()}")
    labels = out["spec"]["template"].setdefault("metadata", {}).get("labels", {})
    selector = LabelSelector.model_validate(out["spec"]["selector"])
    if not compile_label_selector(selector).matches(labels):
        where = locate(source, node, (*prefix, "spec", "template", "metadata", "labels"))
        raise InputError(f"{where}: Invalid value: `selector` does not match template `labels`")
    if kind == "DaemonSet":
        out["spec"].setdefault(
            "updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
        )
        out["spec"].setdefault("revisionHistoryLimit", 10)
    elif kind == "StatefulSet":
        out["spec"]["replicas"] = spec.replicas  # type: ignore[attr-defined]
        out["spec"].setdefault("podManagementPolicy", "OrderedReady")
        out["spec"].setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        out["spec"].setdefault("revisionHistoryLimit", 10)
        out["spec"].setdefault(
            "persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"}
        )
        for claim in out["spec"].get("volumeClaimTemplates", []):
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            claim.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    return out


def _default_job(out: Obj) -> None:
    """batch/v1 SetDefaults_Job plus the selector and labels the Job registry generates
    (pkg/registry/batch/job/strategy.go generateSelector)."""
    spec, meta = out["spec"], out["metadata"]
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    if spec.get("manualSelector"):
        return
    stored = bool(meta.get("uid"))  # an update: its selector is compared with the stored one (update_validation)
    uid = meta.setdefault("uid", str(uuid.uuid4()))
    name = meta.get("name") or ""
    if not (stored and spec.get("selector")):
        spec["selector"] = {"matchLabels": {JOB_UID_LABEL: uid}}
    labels = spec["template"].setdefault("metadata", {}).setdefault("labels", {})
    labels.update({JOB_UID_LABEL: uid, JOB_NAME_LABEL: name, LEGACY_JOB_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name})


def _service(body: Obj, source: str, node: yaml.Node | None, prefix: Path) -> Obj:
    """SetDefaults_Service and the ClusterIP port rules (the address itself is allocated on create)."""
    out = prune(body)
    spec = out.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    ports = spec.get("ports") or []
    if not ports and spec["type"] != "ExternalName" and spec.get("clusterIP") != "None":
        raise InputError(f"{locate(source, node, (*prefix, 'spec', 'ports'))}: Required value")
    for index, port in enumerate(ports):
        where = locate(source, node, (*prefix, "spec", "ports", index))
        if not isinstance(port, dict) or not isinstance(port.get("port"), int) or not 0 < port["port"] < 65536:
            raise InputError(f"{where}.port: Invalid value: must be between 1 and 65535, inclusive")
        if len(ports) > 1 and not port.get("name"):
            raise InputError(f"{where}.name: Required value")
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port["port"])
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    return out


def _secret(body: Obj, source: str, node: yaml.Node | None, prefix: Path) -> Obj:
    """stringData is merged into data (base64) on write, as the API server's conversion does."""
    out = prune(body)
    data = dict(out.get("data") or {})
    for key, value in data.items():
        try:
            base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            where = locate(source, node, (*prefix, "data", key))
            raise InputError(f"{where}: Invalid value: illegal base64 data") from None
    for key, value in (out.pop("stringData", None) or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    if data:
        out["data"] = data
    out.setdefault("type", "Opaque")
    return out


def _claim(body: Obj) -> Obj:
    out = prune(body)
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    if spec.get("storageClassName") == "":  # a *string: "" asks for no class (DefaultStorageClass leaves it)
        out.setdefault("spec", {})["storageClassName"] = ""
    out.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    out.setdefault("status", {}).setdefault("phase", "Pending")
    return out


def _disruption_budget(body: Obj, source: str, node: yaml.Node | None, prefix: Path) -> Obj:
    """policy/v1 PodDisruptionBudget, validated by the model the scheduler's preemption reads (one set
    of rules); an empty selector `{}` is kept, for it selects every pod of the namespace in policy/v1."""
    try:
        PodDisruptionBudget.model_validate(body)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, node, prefix)) from None
    out = prune(body)
    selector = (body.get("spec") or {}).get("selector")
    if isinstance(selector, dict):
        out.setdefault("spec", {})["selector"] = prune(selector)
    status = out.setdefault("status", {})  # its counts are written even when 0 (no omitempty)
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        status.setdefault(key, 0)
    return out


def _controller_revision(body: Obj, source: str, node: yaml.Node | None, prefix: Path) -> Obj:
    """apps/v1 ControllerRevision: `revision` is required (ValidateControllerRevision), `data` is kept as written."""
    revision = body.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 0:
        where = locate(source, node, (*prefix, "revision"))
        raise InputError(f"{where}: Invalid value: {revision!r}: must be greater than or equal to 0")
    data = body.get("data")
    out = prune(body)
    if data is not None:
        out["data"] = data
    return out


def admit_extra(kind: str, body: Obj, source: str, node: yaml.Node | None, prefix: Path) -> Obj:
    """Validate and default one object of a kind this module names (`validation.admit` checked its apiVersion)."""
    try:
        if kind in _SPEC_MODELS:
            return _templated(kind, body, source, node, prefix)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, node, prefix)) from None
    if kind == "Service":
        return _service(body, source, node, prefix)
    if kind == "Secret":
        return _secret(body, source, node, prefix)
    if kind == "PersistentVolumeClaim":
        return _claim(body)
    if kind == "PodDisruptionBudget":
        return _disruption_budget(body, source, node, prefix)
    if kind == "ControllerRevision":
        return _controller_revision(body, source, node, prefix)
    if kind == "LimitRange":
        from .limit_ranges import admit_limit_range

        return prune_as("LimitRange", admit_limit_range(body, source, node, prefix))
    if kind == "ResourceQuota":
        from .resource_quotas import admit_resource_quota

        return prune_as("ResourceQuota", admit_resource_quota(body, source, node, prefix))
    return prune(body)  # ConfigMap, ServiceAccount
