"""What an update may not change: kube-apiserver's ValidateXxxUpdate rules, for every door that
replaces a stored object (kubectl's PUT and PATCH in kube_api/writes.py, the browser's `replace`
action in services.py). Refusals are 422 Invalid with upstream's field errors.

Sources (v1.32): apimachinery pkg/api/validation/objectmeta.go (ValidateObjectMetaUpdate),
apiserver pkg/registry/rest/update.go (BeforeUpdate), pkg/apis/apps/validation/validation.go,
pkg/registry/apps/{deployment,replicaset,daemonset}/strategy.go (the apps/v1 selector),
pkg/apis/batch/validation/validation.go (ValidateJobSpecUpdate), pkg/apis/core/validation/
validation.go (ValidatePodUpdate, ValidateServiceUpdate, ValidatePersistentVolume(Claim)Update) and
pkg/registry/core/service/storage/storage.go (patchAllocatedValues, normalizeClusterIPs).

Upstream appends a `cmp.Diff` of the specs to the Forbidden spec messages; go-cmp randomises its
layout on purpose, so it is left out here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from scheduler_core.api.quantity import parse_quantity

from . import store
from .defaults import default_pod_spec
from .go_values import go_quote, go_slice, label_selector

__all__ = ["SERVER_METADATA", "FieldError", "UpdateInvalid", "admit_update", "update_errors"]

Obj = dict[str, Any]

# metadata the server owns: a write's values are replaced by the stored ones (BeforeUpdate), except
# `uid`, which an update may leave out but not change
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "selfLink",
)
GROUPS = {
    "Deployment": "apps",
    "ReplicaSet": "apps",
    "DaemonSet": "apps",
    "StatefulSet": "apps",
    "ControllerRevision": "apps",
    "Job": "batch",
    "PodDisruptionBudget": "policy",
    "PriorityClass": "scheduling.k8s.io",
}
IMMUTABLE = "field is immutable"
ONCE_SET = "may not change once set"
POD_UPDATABLE = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
    "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
    "negative),`spec.schedulingGates` (only removals)"
)
STATEFULSET_UPDATABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy")
STATEFULSET_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)
PVC_FORBIDDEN = "spec is immutable after creation except resources.requests for bound claims"
# the PersistentVolumeSource members of a PV's spec (core/v1 PersistentVolumeSource)
PV_SOURCES = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "iscsi",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)


@dataclass(frozen=True)
class FieldError:
    """One field.Error: `field: Invalid value: <value>: detail` or `field: Forbidden: detail`."""

    field: str
    type: str  # "Invalid" | "Forbidden"
    detail: str
    value: str = ""

    @property
    def body(self) -> str:
        """ErrorBody(): the cause's message, without the field."""
        if self.type == "Forbidden":
            return f"Forbidden: {self.detail}"
        return f"Invalid value: {self.value}: {self.detail}"

    @property
    def reason(self) -> str:
        return "FieldValueForbidden" if self.type == "Forbidden" else "FieldValueInvalid"

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"


class UpdateInvalid(store.StoreError):
    """422 Invalid: the update changes what may not change (errors.NewInvalid's message and causes)."""

    reason = "Invalid"
    code = 422

    def __init__(self, kind: str, name: str, errors: list[FieldError]) -> None:
        self.kind = kind
        self.name = name
        self.errors = errors
        listed = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(str(e) for e in errors) + "]"
        super().__init__(f'The {kind} "{name}" is invalid: {listed}')

    def details(self) -> Obj:
        details: Obj = {
            "name": self.name,
            "kind": self.kind,
            "causes": [{"reason": e.reason, "message": e.body, "field": e.field} for e in self.errors],
        }
        if self.kind in GROUPS:
            details["group"] = GROUPS[self.kind]
        return details


def admit_update(kind: str, old: Obj, new: Obj) -> None:
    """Fill in what an update may leave out (BeforeUpdate, the Service allocator's patch-up), then
    refuse it (UpdateInvalid) if it changes what may not change. `new` is admitted and defaulted."""
    normalize(kind, old, new)
    errors = update_errors(kind, old, new)
    if errors:
        raise UpdateInvalid(kind, old["metadata"]["name"], errors)


def normalize(kind: str, old: Obj, new: Obj) -> None:
    """BeforeUpdate: an empty uid is the stored one; creationTimestamp and the deletion fields are
    always the stored ones. Services: patchAllocatedValues and normalizeClusterIPs."""
    meta, old_meta = new.setdefault("metadata", {}), old.get("metadata", {})
    for key in SERVER_METADATA:
        if key == "uid" and meta.get("uid"):
            continue
        if key in old_meta and key != "managedFields":
            meta[key] = old_meta[key]
        elif key != "managedFields":
            meta.pop(key, None)
    if kind == "Service":
        _normalize_service(old.get("spec") or {}, new.setdefault("spec", {}))


def _normalize_service(old: Obj, new: Obj) -> None:
    if "ExternalName" in (old.get("type"), new.get("type")):
        return
    if old.get("clusterIP") and new.get("clusterIP") in (None, ""):
        new["clusterIP"] = old["clusterIP"]  # patchAllocatedValues: a client that left it out
        if not new.get("clusterIPs") and old.get("clusterIPs"):
            new["clusterIPs"] = list(old["clusterIPs"])
    for key in ("ipFamilies", "ipFamilyPolicy"):
        if key not in new and key in old:
            new[key] = copy.deepcopy(old[key])
    if old.get("clusterIPs") and not new.get("clusterIPs") and old.get("clusterIP") == new.get("clusterIP"):
        new["clusterIPs"] = list(old["clusterIPs"])
    changed = old.get("clusterIP") and new.get("clusterIP") and old["clusterIP"] != new["clusterIP"]
    if changed and new.get("clusterIPs") and new.get("clusterIPs") == old.get("clusterIPs"):
        new["clusterIPs"] = [new["clusterIP"], *new["clusterIPs"][1:]]  # mirrored into clusterIPs


def update_errors(kind: str, old: Obj, new: Obj) -> list[FieldError]:
    """The field errors of updating `old` to `new` (both as stored: admitted, defaulted)."""
    errors = _metadata_errors(old.get("metadata") or {}, new.get("metadata") or {})
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        errors += _immutable_selector(old_spec, new_spec)
    elif kind == "StatefulSet":
        errors += _statefulset_errors(old_spec, new_spec)
    elif kind == "Job":
        errors += _job_errors(old, new)
    elif kind == "Service":
        errors += _service_errors(old_spec, new_spec)
    elif kind == "PersistentVolumeClaim":
        errors += _claim_errors(old, new)
    elif kind == "PersistentVolume":
        errors += _volume_errors(old_spec, new_spec)
    elif kind == "Pod":
        errors += _pod_errors(old_spec, new_spec)
    return errors


def _metadata_errors(old: Obj, new: Obj) -> list[FieldError]:
    errors = []
    for key in ("uid",):
        if new.get(key, "") != old.get(key, ""):
            errors.append(FieldError(f"metadata.{key}", "Invalid", IMMUTABLE, go_quote(str(new.get(key, "")))))
    return errors


def _immutable_selector(old: Obj, new: Obj, path: str = "spec.selector") -> list[FieldError]:
    if new.get("selector") == old.get("selector"):
        return []
    return [FieldError(path, "Invalid", IMMUTABLE, label_selector(new.get("selector")))]


def _statefulset_errors(old: Obj, new: Obj) -> list[FieldError]:
    def rest(spec: Obj) -> Obj:
        return {k: v for k, v in spec.items() if k not in (*STATEFULSET_UPDATABLE, "minReadySeconds")}

    if rest(old) != rest(new):
        return [FieldError("spec", "Forbidden", STATEFULSET_FORBIDDEN)]
    return []


def _job_errors(old: Obj, new: Obj) -> list[FieldError]:
    """ValidateJobSpecUpdate: completions (NonIndexed), completionMode, selector and the template —
    whose scheduling directives may change while the Job is suspended and has never started."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    errors: list[FieldError] = []
    if new_spec.get("completions") != old_spec.get("completions"):
        value = new_spec.get("completions")
        errors.append(FieldError("spec.completions", "Invalid", IMMUTABLE, "null" if value is None else str(value)))
    errors += _immutable_selector(old_spec, new_spec)
    old_template = copy.deepcopy(old_spec.get("template") or {})
    new_template = new_spec.get("template") or {}
    never_started = not (old.get("status") or {}).get("startTime")
    if new_spec.get("suspend") and never_started:  # AllowMutableSchedulingDirectives
        old_meta, new_meta = old_template.setdefault("metadata", {}), new_template.get("metadata") or {}
        for key in ("labels", "annotations"):
            old_meta.pop(key, None)
            if key in new_meta:
                old_meta[key] = new_meta[key]
        old_pod, new_pod = old_template.setdefault("spec", {}), new_template.get("spec") or {}
        for key in ("nodeSelector", "tolerations", "schedulingGates", "affinity"):
            old_pod.pop(key, None)
            if key in new_pod:
                old_pod[key] = new_pod[key]
    if old_template != new_template:
        errors.append(FieldError("spec.template", "Invalid", IMMUTABLE, "core.PodTemplateSpec{…}"))
    if new_spec.get("completionMode") != old_spec.get("completionMode"):
        errors.append(
            FieldError("spec.completionMode", "Invalid", IMMUTABLE, go_quote(str(new_spec.get("completionMode"))))
        )
    return errors


def _service_errors(old: Obj, new: Obj) -> list[FieldError]:
    """validateUpgradeDowngradeClusterIPs and validateUpgradeDowngradeIPFamilies."""
    if "ExternalName" in (old.get("type"), new.get("type")):
        return []
    errors = []
    new_ips = new.get("clusterIPs") or []
    for index, address in enumerate(old.get("clusterIPs") or []):
        if index < len(new_ips) and new_ips[index] != address:
            errors.append(FieldError(f"spec.clusterIPs[{index}]", "Invalid", ONCE_SET, go_slice(new_ips)))
    if old.get("clusterIPs") and not new_ips:
        errors.append(FieldError("spec.clusterIPs[0]", "Invalid", "primary clusterIP can not be unset", go_slice(None)))
    new_families = new.get("ipFamilies") or []
    for index, family in enumerate(old.get("ipFamilies") or []):
        if index < len(new_families) and new_families[index] != family:
            errors.append(
                FieldError(f"spec.ipFamilies[{index}]", "Invalid", ONCE_SET, go_slice(new_families, "core.IPFamily"))
            )
    return errors


def _storage(spec: Obj) -> int | None:
    requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return None if requested is None else parse_quantity(str(requested)).milli_value()
    except ValueError:
        return None


def _claim_errors(old: Obj, new: Obj) -> list[FieldError]:
    """ValidatePersistentVolumeClaimUpdate: volumeName may be set once; a bound claim's storage
    request may grow; nothing else in the spec changes; the request never shrinks."""
    old_spec, new_spec = copy.deepcopy(old.get("spec") or {}), copy.deepcopy(new.get("spec") or {})
    if not old_spec.get("volumeName"):
        old_spec.pop("volumeName", None)
        new_spec.pop("volumeName", None)
    if (new.get("status") or {}).get("phase") == "Bound":
        for spec in (old_spec, new_spec):
            ((spec.get("resources") or {}).get("requests") or {}).pop("storage", None)
    errors = []
    if old_spec != new_spec:
        errors.append(FieldError("spec", "Forbidden", PVC_FORBIDDEN))
    before, after = _storage(old.get("spec") or {}), _storage(new.get("spec") or {})
    if before is not None and after is not None and after < before:
        errors.append(
            FieldError("spec.resources.requests.storage", "Forbidden", "field can not be less than previous value")
        )
    return errors


def _volume_errors(old: Obj, new: Obj) -> list[FieldError]:
    """ValidatePersistentVolumeUpdate: the volume source and volumeMode are fixed at creation."""
    errors = []
    if {k: old.get(k) for k in PV_SOURCES} != {k: new.get(k) for k in PV_SOURCES}:
        errors.append(
            FieldError(
                "spec.persistentvolumesource", "Forbidden", "spec.persistentvolumesource is immutable after creation"
            )
        )
    if old.get("volumeMode") != new.get("volumeMode"):
        errors.append(FieldError("volumeMode", "Invalid", IMMUTABLE, go_quote(str(new.get("volumeMode") or ""))))
    return errors


def _pod_errors(old: Obj, new: Obj) -> list[FieldError]:
    """ValidatePodUpdate: only images, activeDeadlineSeconds, added tolerations, removed scheduling
    gates (and a negative grace period set to 1) may change in a pod's spec."""

    def masked(spec: Obj) -> Obj:
        spec = copy.deepcopy(spec)
        default_pod_spec(spec)  # a pod stored before the defaults existed compares as if it had them
        for field in ("containers", "initContainers"):
            for container in spec.get(field, []):
                container.pop("image", None)
        for field in ("activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds"):
            spec.pop(field, None)
        return spec

    if masked(old) != masked(new):
        return [FieldError("spec", "Forbidden", POD_UPDATABLE)]
    new_tolerations = new.get("tolerations", [])
    if any(t not in new_tolerations for t in old.get("tolerations", [])):
        return [FieldError("spec", "Forbidden", POD_UPDATABLE)]
    old_gates = old.get("schedulingGates", [])
    if any(g not in old_gates for g in new.get("schedulingGates", [])):
        return [
            FieldError("spec.schedulingGates", "Forbidden", "only deletion is allowed, but found new scheduling gate")
        ]
    return []
