"""The served kinds' schemas (kube_schema.json, generated at build time by schema_build.py from the
official Kubernetes client's models of release 1.32): which fields each type has, their types and
descriptions. Field validation (`fields.py`) and the OpenAPI v3 documents (`openapi.py`) read them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["PRIMITIVES", "Field", "fields_of", "kind_type", "type_description", "unknown_fields"]

SCHEMA_FILE = Path(__file__).with_name("kube_schema.json")
PRIMITIVES = ("string", "integer", "boolean", "number", "Time", "Object")
LIST, MAP = "[]", "map[string]"
Obj = dict[str, Any]


class Field(NamedTuple):
    type: str  # Go-style: "string", "[]Container", "map[string]string", "PodSpec"
    description: str
    required: bool


@cache
def _schema() -> Obj:
    return json.loads(SCHEMA_FILE.read_text())


def kind_type(kind: str) -> str | None:
    """The schema type of a served kind (`Event` → `Event`), or None."""
    return _schema()["kinds"].get(kind)


def type_description(type_name: str) -> str:
    """A type's own description (what `kubectl explain` prints under a field's), or ""."""
    return str(_schema().get("descriptions", {}).get(type_name, ""))


@cache
def fields_of(type_name: str) -> dict[str, Field] | None:
    """A struct type's fields by JSON name, or None for a primitive, list, map or unknown type."""
    raw = _schema()["types"].get(type_name)
    if raw is None:
        return None
    return {name: Field(entry[0], entry[1], len(entry) > 2) for name, entry in raw.items()}


def unknown_fields(kind: str, obj: Any, prune: bool = False) -> list[str]:
    """Paths (as kube-apiserver's strict decoder writes them: `spec.containers[0].imagee`) of the
    fields of `obj` that its kind does not have; `prune` also removes them from `obj`."""
    found: list[str] = []
    type_name = kind_type(kind)
    if type_name is not None:
        _walk(type_name, obj, "", found, prune)
    return found


def _walk(type_name: str, value: Any, path: str, found: list[str], prune: bool) -> None:
    if type_name.startswith(LIST):
        if isinstance(value, list):
            for index, item in enumerate(value):
                _walk(type_name[len(LIST) :], item, f"{path}[{index}]", found, prune)
        return
    if type_name.startswith(MAP):
        if isinstance(value, dict):
            for key, item in value.items():
                _walk(type_name[len(MAP) :], item, f"{path}.{key}" if path else str(key), found, prune)
        return
    fields = fields_of(type_name)
    if fields is None or not isinstance(value, dict):
        return
    for key in list(value):
        where = f"{path}.{key}" if path else str(key)
        field = fields.get(key)
        if field is None:
            found.append(where)
            if prune:
                del value[key]
        else:
            _walk(field.type, value[key], where, found, prune)
