"""The served kinds' schemas per Kubernetes release (kube_schema.json, generated at build time by
schema_build.py from each release's official Kubernetes client models): which fields each type has,
their types and descriptions. Field validation (`fields.py`), decoding (`decoding.py`) and the OpenAPI
documents (`openapi.py`) read the schema of the cluster's release (`schema_of(cluster minor)`)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["LIST", "MAP", "PRIMITIVES", "Field", "Schema", "newest_schema", "releases", "schema_of"]

SCHEMA_FILE = Path(__file__).with_name("kube_schema.json")
PRIMITIVES = ("string", "integer", "boolean", "number", "Time", "Object")
LIST, MAP = "[]", "map[string]"
Obj = dict[str, Any]


class Field(NamedTuple):
    type: str  # Go-style: "string", "[]Container", "map[string]string", "PodSpec"
    description: str
    required: bool


@cache
def _file() -> Obj:
    return json.loads(SCHEMA_FILE.read_text())


@cache
def releases() -> tuple[int, ...]:
    """The minors whose schema the file holds (34, 35, …)."""
    return (int(_file()["base"]), *sorted(int(minor) for minor in _file()["releases"]))


class Schema:
    """One release's kinds, types and descriptions (the base release with that release's changes)."""

    def __init__(self, minor: int, source: str, kinds: Obj, types: Obj, descriptions: Obj) -> None:
        self.minor, self.source, self.kinds, self.types, self.descriptions = minor, source, kinds, types, descriptions
        self._fields: dict[str, dict[str, Field] | None] = {}

    def kind_type(self, kind: str) -> str | None:
        """The schema type of a served kind (`Event` → `Event`), or None."""
        return self.kinds.get(kind)

    def type_description(self, type_name: str) -> str:
        """A type's own description (what `kubectl explain` prints under a field's), or ""."""
        return str(self.descriptions.get(type_name, ""))

    def fields_of(self, type_name: str) -> dict[str, Field] | None:
        """A struct type's fields by JSON name, or None for a primitive, list, map or unknown type."""
        if type_name not in self._fields:
            raw = self.types.get(type_name)
            self._fields[type_name] = (
                None if raw is None else {name: Field(e[0], e[1], len(e) > 2) for name, e in raw.items()}
            )
        return self._fields[type_name]

    def unknown_fields(self, kind: str, obj: Any, prune: bool = False) -> list[str]:
        """Paths (as kube-apiserver's strict decoder writes them: `spec.containers[0].imagee`) of the
        fields of `obj` that its kind does not have in this release; `prune` also removes them."""
        found: list[str] = []
        type_name = self.kind_type(kind)
        if type_name is not None:
            self._walk(type_name, obj, "", found, prune)
        return found

    def _walk(self, type_name: str, value: Any, path: str, found: list[str], prune: bool) -> None:
        if type_name.startswith(LIST):
            if isinstance(value, list):
                for index, item in enumerate(value):
                    self._walk(type_name[len(LIST) :], item, f"{path}[{index}]", found, prune)
            return
        if type_name.startswith(MAP):
            if isinstance(value, dict):
                for key, item in value.items():
                    self._walk(type_name[len(MAP) :], item, f"{path}.{key}" if path else str(key), found, prune)
            return
        fields = self.fields_of(type_name)
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
                self._walk(field.type, value[key], where, found, prune)


def schema_of(minor: int) -> Schema:
    """The schema of release 1.<minor> (a minor the file lacks — the app only serves 1.34 to 1.37 —
    gets the nearest release below it, or the base release)."""
    known = [m for m in releases() if m <= minor] or [releases()[0]]
    return _release(known[-1])


def newest_schema() -> Schema:
    """The newest release's schema: it knows every type the older releases have."""
    return schema_of(releases()[-1])


@cache
def _release(minor: int) -> Schema:
    """The base release's schema with release `minor`'s changes applied."""
    data = _file()
    base = int(data["base"])
    if minor == base:
        return Schema(base, data["source"], data["kinds"], data["types"], data["descriptions"])
    delta = data["releases"][str(minor)]
    types = {name: dict(fields) for name, fields in data["types"].items() if name not in delta["removed_types"]}
    for name, fields in delta["types"].items():
        types.setdefault(name, {}).update(fields)
    for name, gone in delta["removed_fields"].items():
        for field in gone:
            types[name].pop(field, None)
    descriptions = {k: v for k, v in data["descriptions"].items() if k not in delta["removed_descriptions"]}
    descriptions.update(delta["descriptions"])
    return Schema(minor, delta["source"], data["kinds"], types, descriptions)
