"""The minimal OpenAPI v3 documents `kubectl create/apply -f` needs (spec §4.2).

With `--validate=strict` (the default) kubectl looks for a PATCH operation carrying the manifest's
`x-kubernetes-group-version-kind` and a `fieldValidation` query parameter; finding one, it leaves
validation to the server. The index's `serverRelativeURL`s are resolved against the host, so they
carry the endpoint's path prefix (`/k8s/<slug>`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .resources import GROUPS, RESOURCES, Resource

__all__ = ["V2_PROTOBUF", "group_document", "index", "v2_document"]


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _manifest_kinds(group: str) -> list[Resource]:
    return [r for r in RESOURCES if r.group == group and not r.synthetic and r.allows("patch")]


def group_document(group: str, version: str) -> dict[str, Any] | None:
    """`/openapi/v3/api/v1`, `/openapi/v3/apis/<g>/<v>`: one PATCH operation per kind; None if not served."""
    if GROUPS.get(group) != version:
        return None
    paths: dict[str, Any] = {}
    for res in _manifest_kinds(group):
        scope = "/namespaces/{namespace}" if res.namespaced else ""
        path = f"/{_gv_path(group, version)}{scope}/{res.plural}/{{name}}"
        paths[path] = {
            "patch": {
                "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}],
                "x-kubernetes-group-version-kind": {"group": res.group, "version": res.version, "kind": res.kind},
            }
        }
    return {"openapi": "3.0.0", "info": {"title": "clusterviz", "version": "v1.32.4"}, "paths": paths}


def _hash(document: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:32].upper()


def index(prefix: str) -> dict[str, Any]:
    """`/openapi/v3`: where each group-version's document is, with `prefix` (e.g. `/k8s/demo`) in front."""
    paths: dict[str, Any] = {}
    for group, version in GROUPS.items():
        document = group_document(group, version)
        if document is None or not document["paths"]:
            continue
        gv = _gv_path(group, version)
        paths[gv] = {"serverRelativeURL": f"{prefix}/openapi/v3/{gv}?hash={_hash(document)}"}
    return {"paths": paths}


V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"  # what kubectl asks for
V2_PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"  # "@" breaks Go's mime parser


def v2_document(accept: str) -> tuple[bytes, str]:
    """`/openapi/v2` with no definitions: kubectl validates `kind: List` manifests client-side against it
    (OpenAPI v3 is never consulted for v1/List), and skips every kind it finds no schema for; `apply`
    then falls back to its compiled-in patch metadata. Protobuf (a Document with only `swagger: "2.0"`,
    field 1) when asked for, else JSON."""
    if V2_PROTOBUF in accept or "protobuf" in accept:
        return b"\n\x032.0", V2_PROTOBUF_TYPE
    body = {"swagger": "2.0", "info": {"title": "clusterviz", "version": "v1.32.4"}, "paths": {}, "definitions": {}}
    return json.dumps(body).encode(), "application/json"
