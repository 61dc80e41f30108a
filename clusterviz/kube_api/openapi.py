"""The minimal OpenAPI v3 documents `kubectl create/apply -f` needs (spec §4.2).

With `--validate=strict` (the default) kubectl looks for a PATCH operation carrying the manifest's
`x-kubernetes-group-version-kind` and a `fieldValidation` query parameter; finding one, it leaves
validation to the server. The index's `serverRelativeURL`s are resolved against the host, so they
carry the endpoint's path prefix (`/k8s/<slug>`).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from .patch import MERGE_KEYS, MERGE_PRIMITIVES
from .resources import GROUPS, RESOURCES, Resource
from .schema import LIST, MAP, PRIMITIVES, Schema

__all__ = ["V2_PROTOBUF", "group_document", "index", "v2_document"]


SCHEMA_PREFIX = "io.k8s.api.core.v1"


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _manifest_kinds(group: str) -> list[Resource]:
    return [r for r in RESOURCES if r.group == group and not r.synthetic and r.allows("patch")]


def _schema_name(type_name: str, res: Resource | None = None) -> str:
    """Upstream-style component names (kubectl explain shows the part after the last dot)."""
    if "." in type_name:  # kept under its package (a bare name two packages share: schema_build.RENAMED)
        return f"io.k8s.api.{type_name}"
    if res is None:
        return f"{SCHEMA_PREFIX}.{type_name}"
    package = f"io.k8s.api.{res.group.split('.')[0] or 'core'}.{res.version}"
    return f"{package}.{type_name}"


def _type_schema(go_type: str, names: dict[str, str]) -> dict[str, Any]:
    """The OpenAPI schema of a field type (`[]Container`, `map[string]string`, `PodSpec`, `string`)."""
    if go_type.startswith(LIST):
        return {"type": "array", "items": _type_schema(go_type[len(LIST) :], names)}
    if go_type.startswith(MAP):
        return {"type": "object", "additionalProperties": _type_schema(go_type[len(MAP) :], names)}
    if go_type == "Time":
        return {"type": "string", "format": "date-time"}
    if go_type == "Object":
        return {"type": "object"}
    if go_type in PRIMITIVES:
        return {"type": go_type}
    return {"allOf": [{"$ref": f"#/components/schemas/{names[go_type]}"}]}


def _referenced(schema: Schema, type_name: str, seen: set[str]) -> None:
    if type_name in seen:
        return
    fields = schema.fields_of(type_name)
    if fields is None:
        return
    seen.add(type_name)
    for field in fields.values():
        inner = field.type
        while inner.startswith((LIST, MAP)):
            inner = inner[len(LIST) :] if inner.startswith(LIST) else inner[len(MAP) :]
        _referenced(schema, inner, seen)


# Fields of type intstr.IntOrString (the schema of the Python client calls them `object`): OpenAPI
# refers them to apimachinery's IntOrString schema, `kubectl explain` prints <IntOrString>.
INT_OR_STRING = frozenset(
    {
        ("RollingUpdateDeployment", "maxSurge"),
        ("RollingUpdateDeployment", "maxUnavailable"),
        ("RollingUpdateDaemonSet", "maxSurge"),
        ("RollingUpdateDaemonSet", "maxUnavailable"),
        ("RollingUpdateStatefulSetStrategy", "maxUnavailable"),
        ("ServicePort", "targetPort"),
        ("HTTPGetAction", "port"),
        ("TCPSocketAction", "port"),
        ("PodDisruptionBudgetSpec", "minAvailable"),
        ("PodDisruptionBudgetSpec", "maxUnavailable"),
    }
)
INT_OR_STRING_SCHEMA = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
INT_OR_STRING_DESCRIPTION = (
    "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and "
    "unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field "
    "that can accept a name or number."
)


def _components(kinds: list[Resource], schema: Schema) -> dict[str, Any]:
    """`components.schemas` of a group-version document: its kinds and every type they reach, each
    with its own description and its fields' (what `kubectl explain` prints), required fields and
    the strategic merge patch keys kubectl's `apply` reads."""
    roots = {schema.kind_type(res.kind): res for res in kinds}
    reached: set[str] = set()
    for root in roots:
        if root is not None:
            _referenced(schema, root, reached)
    names = {t: _schema_name(t, roots.get(t)) for t in sorted(reached)}
    schemas: dict[str, Any] = {}
    for type_name, schema_name in names.items():
        fields = schema.fields_of(type_name) or {}
        properties: dict[str, Any] = {}
        for json_name, field in fields.items():
            if (type_name, json_name) in INT_OR_STRING:
                prop: dict[str, Any] = {"allOf": [{"$ref": f"#/components/schemas/{INT_OR_STRING_SCHEMA}"}]}
                schemas[INT_OR_STRING_SCHEMA] = {  # kube-openapi's v3 definition: no `type` of its own
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                    "format": "int-or-string",
                    "description": INT_OR_STRING_DESCRIPTION,
                }
            else:
                prop = _type_schema(field.type, names)
            if field.description:
                prop["description"] = field.description
            if field.type.startswith(LIST) and json_name in MERGE_KEYS:
                prop["x-kubernetes-patch-merge-key"] = MERGE_KEYS[json_name]
                prop["x-kubernetes-patch-strategy"] = "merge"
            elif field.type.startswith(LIST) and json_name in MERGE_PRIMITIVES:
                prop["x-kubernetes-patch-strategy"] = "merge"
            properties[json_name] = prop
        component: dict[str, Any] = {"type": "object", "properties": properties}
        description = schema.type_description(type_name)
        if description:
            component["description"] = description
        res = roots.get(type_name)
        if res is not None:
            gvk = {"group": res.group, "kind": res.kind, "version": res.version}
            component["x-kubernetes-group-version-kind"] = [gvk]
        required = [name for name, field in fields.items() if field.required]
        if required:
            component["required"] = required
        schemas[schema_name] = component
    return schemas


def group_document(group: str, version: str, schema: Schema, git_version: str) -> dict[str, Any] | None:
    """`/openapi/v3/api/v1`, `/openapi/v3/apis/<g>/<v>` of a cluster at release `schema`: one PATCH
    operation per kind and the kinds' schemas; None if not served."""
    if GROUPS.get(group) != version:
        return None
    return _group_document(group, version, schema, git_version)


@cache
def _group_document(group: str, version: str, schema: Schema, git_version: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    kinds = [res for res in RESOURCES if res.group == group]
    manifest_kinds = _manifest_kinds(group)
    for res in kinds:
        scope = "/namespaces/{namespace}" if res.namespaced else ""
        path = f"/{_gv_path(group, version)}{scope}/{res.plural}/{{name}}"
        gvk = {"group": res.group, "version": res.version, "kind": res.kind}
        # kubectl explain finds a resource's kind by its path; --validate=strict by the PATCH's parameter
        paths[path] = {"get": {"x-kubernetes-group-version-kind": gvk}}
        if res in manifest_kinds:
            paths[path]["patch"] = {
                "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
                "x-kubernetes-group-version-kind": gvk,
            }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": git_version},
        "paths": paths,
        "components": {"schemas": _components(kinds, schema)},
    }


def _hash(document: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:32].upper()


def index(prefix: str, schema: Schema, git_version: str) -> dict[str, Any]:
    """`/openapi/v3`: where each group-version's document is, with `prefix` (e.g. `/k8s/demo`) in front;
    the hashes are the documents' of the cluster's release (kubectl caches a document by its URL)."""
    paths: dict[str, Any] = {}
    for group, version in GROUPS.items():
        gv = _gv_path(group, version)
        digest = _document_hash(group, version, schema, git_version)
        paths[gv] = {"serverRelativeURL": f"{prefix}/openapi/v3/{gv}?hash={digest}"}
    return {"paths": paths}


@cache
def _document_hash(group: str, version: str, schema: Schema, git_version: str) -> str:
    return _hash(_group_document(group, version, schema, git_version))


V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what kubectl asks for
V2_PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"  # "@" breaks Go's mime parser


def v2_document(accept: str, git_version: str) -> tuple[bytes, str]:
    """`/openapi/v2` with no definitions: kubectl validates `kind: List` manifests client-side against it
    (OpenAPI v3 is never consulted for v1/List), and skips every kind it finds no schema for; `apply`
    then falls back to its compiled-in patch metadata. Protobuf (a Document with only `swagger: "2.0"`,
    field 1) when asked for, else JSON."""
    if V2_PROTOBUF in accept or "protobuf" in accept:
        return b"\n\x032.0", V2_PROTOBUF_TYPE
    body = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": git_version}, "paths": {}, "definitions": {}}
    return json.dumps(body).encode(), "application/json"
