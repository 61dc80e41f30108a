"""`metadata.managedFields` for server-side apply: each field manager's Apply entry records the
fields of the object it applied (FieldsV1: `f:<field>`, associative list items as
`k:{"name":"web"}`, set items as `v:"x"`), as kube-apiserver's structured-merge-diff writes it."""

from __future__ import annotations

import json
from typing import Any

from .options import invalid_option
from .patch import MERGE_KEYS, MERGE_PRIMITIVES
from .status import ApiError

__all__ = ["applied", "check_manager", "fields_v1"]

Obj = dict[str, Any]
IDENTITY = {"apiVersion", "kind"}
MAX_MANAGER_BYTES = 128  # apimachinery ValidateFieldManager
IDENTITY_META = {"name", "namespace", "managedFields"}


def _members(value: Any, field: str) -> Obj:
    """The FieldsV1 of one field's value."""
    if isinstance(value, dict):
        return {f"f:{key}": _members(item, key) for key, item in value.items()}
    if isinstance(value, list):
        key = MERGE_KEYS.get(field)
        if key and all(isinstance(item, dict) and key in item for item in value):
            out: Obj = {}
            for item in value:
                name = "k:" + json.dumps({key: item[key]}, separators=(",", ":"))
                out[name] = {".": {}, **{f"f:{k}": _members(v, k) for k, v in item.items()}}
            return out
        if field in MERGE_PRIMITIVES:
            return {"v:" + json.dumps(item, separators=(",", ":")): {} for item in value}
    return {}  # a scalar, or an atomic list


def fields_v1(obj: Obj) -> Obj:
    """The fields an applied object sets (its identity — apiVersion, kind, name, namespace — aside)."""
    out: Obj = {}
    for key, value in obj.items():
        if key in IDENTITY:
            continue
        if key == "metadata" and isinstance(value, dict):
            meta = {k: v for k, v in value.items() if k not in IDENTITY_META}
            if meta:
                out["f:metadata"] = _members(meta, "metadata")
            continue
        out[f"f:{key}"] = _members(value, key)
    return out


def check_manager(manager: str | None, doc: Any) -> str:
    """ValidatePatchOptions for apply, and the structured-merge manager's own rule."""
    if not manager:
        raise ApiError(
            422,
            "Invalid",
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
            {
                "kind": "PatchOptions",
                "group": "meta.k8s.io",
                "causes": [
                    {
                        "reason": "FieldValueRequired",
                        "message": "Required value: is required for apply patch",
                        "field": "fieldManager",
                    }
                ],
            },
        )
    if len(manager.encode()) > MAX_MANAGER_BYTES:
        raise invalid_option("PatchOptions", "fieldManager", f"Too long: must have at most {MAX_MANAGER_BYTES} bytes")
    for position, char in enumerate(manager):
        if not char.isprintable():
            detail = (
                f"Invalid value: {json.dumps(manager)}: invalid character U+{ord(char):04X} (at position {position})"
            )
            raise invalid_option("PatchOptions", "fieldManager", detail)
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise ApiError(400, "BadRequest", "metadata.managedFields must be nil")
    return manager


def applied(current: list[Obj], manager: str, api_version: str, doc: Obj, now: str) -> list[Obj]:
    """The managedFields after `manager` applied `doc`: its Apply entry replaced, the others kept."""
    entry = {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1(doc),
    }
    mine = [e for e in current if e.get("manager") == manager and e.get("operation") == "Apply"]
    if mine and mine[0].get("fieldsV1") == entry["fieldsV1"] and mine[0].get("apiVersion") == api_version:
        return current  # the same fields again: nothing changes (nor does the time)
    others = [e for e in current if e not in mine]
    return [*others, entry]
