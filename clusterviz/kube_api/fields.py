"""Field validation as kube-apiserver does it, against the schema of the cluster's release
(`fieldValidation=Strict|Warn|Ignore`; kubectl
sends Strict, the server's default is Warn): an unknown or duplicate field is refused with upstream's
text (Strict), reported in a `Warning` header (Warn) or dropped (Ignore) — never silently kept.

The texts, by verb (k8s.io/apiserver endpoints/handlers create.go, update.go, patch.go and the
managedfields structured-merge manager):
- create, update: `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.x"`
- merge and JSON patch: `strict decoding error: unknown field "spec.x"`
- strategic merge patch: 422 ` "" is invalid: patch: Invalid value: "map[...]": strict decoding error: ...`
- server-side apply (whatever the directive): `failed to create typed patch object (ns/name; /v1,
  Kind=Pod): .spec.x: field not declared in schema` (upstream sends this as a 500; here a 400).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .decoding import type_error
from .options import OPTIONS_KIND, invalid_option
from .patch import MERGE_KEYS, STRATEGIC
from .resources import Resource
from .schema import Schema
from .status import ApiError

__all__ = ["FieldValidation", "check_apply", "go_value"]

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
DIRECTIVES = ("", IGNORE, STRICT, WARN)  # as upstream lists them (sorted)
Obj = dict[str, Any]


def go_value(value: Any) -> str:
    """How Go's `%+v` prints a decoded JSON value (`map[a:1 b:[x y]]`, keys sorted)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{go_value(value[key])}" for key in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(item) for item in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


@dataclass
class FieldValidation:
    """The directive of one write request, and the warnings it produced."""

    schema: Schema
    directive: str = WARN
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, method: str, params: Any, schema: Schema) -> FieldValidation:
        value = params.get("fieldValidation", "")
        if value not in DIRECTIVES:
            supported = ", ".join(_go_quote(d) for d in DIRECTIVES)
            detail = f"Unsupported value: {_go_quote(value)}: supported values: {supported}"
            raise invalid_option(OPTIONS_KIND[method], "fieldValidation", detail)
        return cls(schema, value or WARN)

    def _settle(self, problems: list[str], refusal: ApiError | None) -> None:
        if not problems:
            return
        if self.directive == STRICT and refusal is not None:
            raise refusal
        if self.directive == WARN:
            self.warnings.extend(problems)

    def decoded(self, res: Resource, body: Any, duplicates: list[str]) -> None:
        """A create or update body, as sent: unknown fields are reported and dropped from `body`."""
        if not isinstance(body, dict):
            return
        kind = str(body.get("kind") or res.kind)
        version = str(body.get("apiVersion") or res.api_version).rpartition("/")[2]
        error = type_error(res.kind, body, self.schema)  # a decoding error, whatever the directive
        if error:
            raise ApiError(
                400, "BadRequest", f"{kind} in version {_go_quote(version)} cannot be handled as a {res.kind}: {error}"
            )
        problems = [f"duplicate field {_go_quote(p)}" for p in duplicates]
        problems += [f"unknown field {_go_quote(p)}" for p in self.schema.unknown_fields(res.kind, body, prune=True)]
        text = f"{kind} in version {_go_quote(version)} cannot be handled as a {res.kind}: " + _strict(problems)
        self._settle(problems, ApiError(400, "BadRequest", text))

    def patched(self, res: Resource, content_type: str, patch: Any, current: Obj, patched: Obj) -> None:
        """The object a merge, JSON or strategic merge patch made: the fields it added that the kind
        does not have are reported and dropped from `patched` (the stored object's own are kept)."""
        before = set(self.schema.unknown_fields(res.kind, current))
        added = [p for p in self.schema.unknown_fields(res.kind, patched) if p not in before]
        if not added:
            return
        _drop(patched, added)
        problems = [f"unknown field {_go_quote(p)}" for p in added]
        if content_type == STRATEGIC:
            cause = f"Invalid value: {_go_quote(go_value(patch))}: {_strict(problems)}"
            refusal = ApiError(
                422,
                "Invalid",
                f' "" is invalid: patch: {cause}',
                {"causes": [{"reason": "FieldValueInvalid", "message": cause, "field": "patch"}]},
            )
        else:
            refusal = ApiError(400, "BadRequest", _strict(problems))
        self._settle(problems, refusal)


def _strict(problems: list[str]) -> str:
    return "strict decoding error: " + ", ".join(problems)


def _drop(obj: Obj, paths: list[str]) -> None:
    """Remove the fields at `paths` (as unknown_fields writes them) from `obj`."""
    _prune(obj, "", set(paths))


def _prune(value: Any, path: str, wanted: set[str]) -> None:
    if isinstance(value, dict):
        for key in list(value):
            where = f"{path}.{key}" if path else str(key)
            if where in wanted:
                del value[key]
            else:
                _prune(value[key], where, wanted)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _prune(item, f"{path}[{index}]", wanted)


def check_apply(res: Resource, namespace: str, name: str, body: Any, schema: Schema) -> None:
    """Server-side apply converts the applied object to its typed form, which has no room for a
    field the schema lacks: refused whatever the directive."""
    if not isinstance(body, dict):
        return
    paths = schema.unknown_fields(res.kind, body)
    if not paths:
        return
    errors = [f"{_smd_path(body, p)}: field not declared in schema" for p in paths]
    text = errors[0] if len(errors) == 1 else "\n".join(["errors:", *(f"  {e}" for e in errors)])
    group = res.group
    gvk = f"{group}/{res.version}, Kind={res.kind}"
    where = f"{namespace or '<unknown>'}/{name}; {gvk}" if res.namespaced else f"/{name}; {gvk}"
    raise ApiError(400, "BadRequest", f"failed to create typed patch object ({where}): {text}")


def _smd_path(body: Obj, path: str) -> str:
    """`spec.containers[0].imagee` → `.spec.containers[name="web"].imagee` (structured-merge-diff
    names an associative list's items by their key)."""
    out, value, token = "", body, ""
    parts: list[str] = []
    for char in path:
        if char in ".[":
            if token:
                parts.append(token)
            token = "[" if char == "[" else ""
        else:
            token += char
    if token:
        parts.append(token)
    last_key = ""
    for part in parts:
        if part.startswith("[") and part.endswith("]") and part[1:-1].isdigit():
            index = int(part[1:-1])
            item = value[index] if isinstance(value, list) and index < len(value) else None
            key = MERGE_KEYS.get(last_key)
            if key and isinstance(item, dict) and key in item:
                out += f"[{key}={_go_quote(str(item[key]))}]"
            else:
                out += part
            value = item
        else:
            out += "." + part
            value = value.get(part) if isinstance(value, dict) else None
            last_key = part
    return out
