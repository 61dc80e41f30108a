"""Type errors of a request body, as kube-apiserver's decoder (sigs.k8s.io/json, encoding/json's
wording) reports them: `json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas
of type int32`, and a Quantity that does not parse: `quantities must match the regular expression …`.
Create and update answer them as 400 BadRequest `Deployment in version "v1" cannot be handled as a
Deployment: …` (endpoints/handlers/create.go, update.go)."""

from __future__ import annotations

import re
from typing import Any

from .schema import LIST, MAP, Schema

__all__ = ["QUANTITY_PATTERN", "type_error"]

QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
QUANTITY_ERROR = f"quantities must match the regular expression '{QUANTITY_PATTERN}'"
_QUANTITY = re.compile(QUANTITY_PATTERN)
# map[string]Quantity fields (the schema has them as map[string]string) and Quantity fields
QUANTITY_MAPS = frozenset({"requests", "limits", "capacity", "allocatable", "hard", "used", "overhead"})
QUANTITY_FIELDS = frozenset({"sizeLimit"})
# the int64 fields among the schema's integers (the others are int32)
INT64_FIELDS = frozenset(
    {
        "activeDeadlineSeconds",
        "terminationGracePeriodSeconds",
        "deletionGracePeriodSeconds",
        "generation",
        "observedGeneration",
        "runAsUser",
        "runAsGroup",
        "fsGroup",
        "supplementalGroups",
        "tolerationSeconds",
        "expirationSeconds",
        "revision",
        "startingDeadlineSeconds",
    }
)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    return "array" if isinstance(value, list) else "object"


def _go_type(type_name: str, key: str) -> str:
    if type_name.startswith(LIST):
        return "[]" + _go_type(type_name[len(LIST) :], key)
    if type_name.startswith(MAP):
        return "map[string]" + _go_type(type_name[len(MAP) :], key)
    if type_name == "integer":
        return "int64" if key in INT64_FIELDS else "int32"
    return {"string": "string", "boolean": "bool", "number": "float64", "Time": "v1.Time"}.get(
        type_name, f"v1.{type_name}"
    )


class _Mismatch(Exception):
    pass


def type_error(kind: str, body: Any, schema: Schema) -> str | None:
    """The decoder's error for the first value of `body` whose JSON type its field (in `schema`'s
    release) does not take."""
    type_name = schema.kind_type(kind)
    if type_name is None or not isinstance(body, dict):
        return None
    try:
        _check(schema, type_name, body, kind, [], "")
    except _Mismatch as mismatch:
        return str(mismatch)
    return None


def _fail(value: Any, struct: str, path: list[str], go_type: str, number: bool = False) -> _Mismatch:
    shown = f"number {value}" if number else _json_kind(value)
    return _Mismatch(f"json: cannot unmarshal {shown} into Go struct field {struct}.{'.'.join(path)} of type {go_type}")


def _check(schema: Schema, type_name: str, value: Any, struct: str, path: list[str], key: str) -> None:
    if value is None:
        return  # null decodes as the zero value
    if key in QUANTITY_FIELDS or (type_name == "map[string]string" and key in QUANTITY_MAPS):
        for quantity in value.values() if isinstance(value, dict) else [value]:
            if isinstance(quantity, str) and not _QUANTITY.match(quantity.strip()):
                raise _Mismatch(QUANTITY_ERROR)
        if isinstance(value, dict) or key in QUANTITY_FIELDS:
            return
    go_type = _go_type(type_name, key)
    if type_name.startswith(LIST):
        if not isinstance(value, list):
            raise _fail(value, struct, path, go_type)
        for item in value:
            _check(schema, type_name[len(LIST) :], item, struct, path, key)
        return
    if type_name.startswith(MAP):
        if not isinstance(value, dict):
            raise _fail(value, struct, path, go_type)
        for item in value.values():
            _check(schema, type_name[len(MAP) :], item, struct, path, key)
        return
    if type_name in ("Object", "Time"):
        return  # IntOrString, RawExtension, free-form objects; times are parsed later
    if type_name == "integer":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(value, struct, path, go_type)
        if isinstance(value, float) and not value.is_integer():
            raise _fail(value, struct, path, go_type, number=True)
        return
    if type_name == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(value, struct, path, go_type)
        return
    if type_name == "string":
        if not isinstance(value, str):
            raise _fail(value, struct, path, go_type)
        return
    if type_name == "boolean":
        if not isinstance(value, bool):
            raise _fail(value, struct, path, go_type)
        return
    fields = schema.fields_of(type_name)
    if fields is None:
        return
    if not isinstance(value, dict):
        raise _fail(value, struct, path, go_type)
    for name, item in value.items():
        field = fields.get(name)
        if field is not None:
            _check(schema, field.type, item, type_name, [*path, name], name)
