"""Validation and API defaults of the kinds the scheduler reads beside pods and nodes and kubectl
writes: Dynamic Resource Allocation's resource.k8s.io/v1 DeviceClass, ResourceSlice, ResourceClaim
and ResourceClaimTemplate, and VolumeBinding's storage.k8s.io/v1 StorageClass, CSIDriver, CSINode
and CSIStorageCapacity and core/v1 PersistentVolume.

Each object is read by the model scheduler_core reads it with (one set of rules, a located error),
then checked where kube-apiserver checks more (pkg/apis/resource/validation/validation.go v1.34: a
request's device class, its CEL selectors compiled as the API server compiles them) and defaulted
as pkg/apis/resource/v1/defaults.go and pkg/apis/storage/v1/defaults.go default them.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError

from scheduler_core.api.loading import KINDS, InputError, format_validation_error, locate
from scheduler_core.dra.cel import validate_selector_expression

from .validation import prune_as

__all__ = ["RESOURCE_KINDS", "admit_resource_kind"]

Obj = dict[str, Any]
Path = tuple[int | str, ...]

RESOURCE_KINDS = (
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "StorageClass",
    "CSIDriver",
    "CSIStorageCapacity",
    "CSINode",
    "PersistentVolume",
)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _check_selectors(selectors: Any, source: str, node: yaml.Node | None, path: Path) -> None:
    """Each `selectors[i].cel.expression` compiled as validateCELSelector does."""
    for i, selector in enumerate(_list(selectors)):
        expression = _map(_map(selector).get("cel")).get("expression")
        if not isinstance(expression, str):
            continue
        where = (*path, i, "cel", "expression")
        error = validate_selector_expression(expression, "")
        if error is not None:
            raise InputError(f"{locate(source, node, where)}: {error.removeprefix(': ')}")


def _counted_request(request: Obj, source: str, node: yaml.Node | None, path: Path) -> None:
    """An exact request or a subrequest: its class is required, its selectors compile; defaults."""
    if not request.get("deviceClassName"):
        raise InputError(f"{locate(source, node, (*path, 'deviceClassName'))}: Required value")
    _check_selectors(request.get("selectors"), source, node, (*path, "selectors"))
    mode = request.setdefault("allocationMode", "ExactCount")
    if mode == "ExactCount":
        request.setdefault("count", 1)


def _claim_spec(spec: Obj, source: str, node: yaml.Node | None, path: Path) -> None:
    devices = _map(spec.get("devices"))
    for i, request in enumerate(_list(devices.get("requests"))):
        request = _map(request)
        where = (*path, "devices", "requests", i)
        if isinstance(request.get("exactly"), dict):
            _counted_request(request["exactly"], source, node, (*where, "exactly"))
        for k, sub in enumerate(_list(request.get("firstAvailable"))):
            if isinstance(sub, dict):
                _counted_request(sub, source, node, (*where, "firstAvailable", k))


def _storage_class(body: Obj) -> None:
    body.setdefault("reclaimPolicy", "Delete")
    body.setdefault("volumeBindingMode", "Immediate")


def _csi_driver(body: Obj) -> None:
    spec = body.setdefault("spec", {})
    spec.setdefault("attachRequired", True)
    spec.setdefault("podInfoOnMount", False)
    spec.setdefault("storageCapacity", False)
    spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
    spec.setdefault("requiresRepublish", False)
    spec.setdefault("volumeLifecycleModes", ["Persistent"])


def _persistent_volume(body: Obj) -> None:
    """pkg/apis/core/v1 SetDefaults_PersistentVolume (and a hostPath's type): Pending until the
    PersistentVolume controller looks at it, Retain, Filesystem."""
    spec = body.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    if isinstance(spec.get("hostPath"), dict):
        spec["hostPath"].setdefault("type", "")
    body.setdefault("status", {}).setdefault("phase", "Pending")  # then the controller's to write


def admit_resource_kind(kind: str, body: Obj, source: str, node: yaml.Node | None, prefix: Path) -> Obj:
    """Validate and default one object of `RESOURCE_KINDS` (`validation.admit` checked its apiVersion)."""
    try:
        KINDS[kind].model.model_validate(body)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, node, prefix)) from None
    out = prune_as(kind, body)
    spec = _map(out.get("spec"))
    if kind == "DeviceClass":
        _check_selectors(spec.get("selectors"), source, node, (*prefix, "spec", "selectors"))
    elif kind == "ResourceClaim":
        _claim_spec(spec, source, node, (*prefix, "spec"))
    elif kind == "ResourceClaimTemplate":
        _claim_spec(_map(spec.get("spec")), source, node, (*prefix, "spec", "spec"))
    elif kind == "StorageClass":
        _storage_class(out)
    elif kind == "CSIDriver":
        _csi_driver(out)
    elif kind == "PersistentVolume":
        _persistent_volume(out)
    return out
