"""PATCH bodies: JSON merge patch (RFC 7386, `kubectl label`), strategic merge patch (`kubectl taint`,
`cordon`, client-side `apply`), JSON patch (RFC 6902, `kubectl patch --type=json`) and server-side
apply (`application/apply-patch+yaml`, here a strategic merge of the applied object).

Strategic merge: maps merge recursively and `null` deletes; lists with a merge key (from the
Kubernetes Go struct tags, by field name) merge element-wise by that key and honour the
`$patch: delete|replace`, `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and
`$retainKeys` directives; every other list (tolerations, taints, args, ...) is replaced whole.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import jsonpointer

from scheduler_core.api.limits import MAX_DEPTH
from scheduler_core.api.loading import InputError, load_yaml_documents

from .json_patch_errors import failure_reason
from .status import ApiError

__all__ = [
    "APPLY",
    "JSON_PATCH",
    "MERGE",
    "STRATEGIC",
    "apply_patch",
    "json_merge_patch",
    "json_patch",
    "parse_body",
    "parse_body_fields",
    "strategic_merge_patch",
]

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
PATCH_TYPES = (MERGE, STRATEGIC, JSON_PATCH, APPLY)

# patchMergeKey of the list fields (k8s.io/api core/v1, apps/v1, meta/v1 struct tags)
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "schedulingGates": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "conditions": "type",
    "addresses": "type",
    "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey",
    "hostAliases": "ip",
    "podIPs": "ip",
    "hostIPs": "ip",
}
# lists of scalars merged by value (patchStrategy:"merge" without a key)
MERGE_PRIMITIVES = frozenset({"finalizers"})

Json = Any


def parse_body(raw: bytes, content_type: str) -> Json:
    """The request body as JSON (YAML for apply patches); 400 BadRequest when it does not parse."""
    return parse_body_fields(raw, content_type)[0]


def parse_body_fields(raw: bytes, content_type: str) -> tuple[Json, list[str]]:
    """The body and the paths of its duplicate fields (`metadata.name`: a JSON object naming a key
    twice; the last value wins, as in Go). YAML bodies refuse duplicates outright."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "BadRequest", "the request body is not valid UTF-8") from None
    repeated: dict[int, tuple[dict[str, Json], list[str]]] = {}  # the dict is held: its id stays unique

    def pairs(items: list[tuple[str, Json]]) -> dict[str, Json]:
        obj: dict[str, Json] = {}
        for key, value in items:
            if key in obj:
                repeated.setdefault(id(obj), (obj, []))[1].append(key)
            obj[key] = value
        return obj

    try:
        if content_type == APPLY:
            documents = load_yaml_documents(text, "body")  # bounded: depth, nodes, aliases, duplicate keys
            if len(documents) > 1:
                raise ApiError(400, "BadRequest", "error decoding YAML: the body holds more than one document")
            return (documents[0].data if documents else None), []
        value = json.loads(text, object_pairs_hook=pairs)
    except (json.JSONDecodeError, InputError) as exc:
        raise ApiError(400, "BadRequest", f"error decoding patch: {exc}") from None
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ApiError(400, "BadRequest", f"error decoding patch: {exc}") from None
    if _depth(value) > MAX_DEPTH:
        raise _too_deep()
    return value, (_duplicate_paths(value, repeated) if repeated else [])


def _duplicate_paths(value: Json, repeated: dict[int, tuple[dict[str, Json], list[str]]]) -> list[str]:
    out: list[str] = []
    stack: list[tuple[Json, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            out.extend(f"{path}.{key}" if path else key for key in repeated.get(id(item), ({}, []))[1])
            stack.extend((child, f"{path}.{key}" if path else key) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in reversed(list(enumerate(item))))
    return out


def _too_deep() -> ApiError:
    return ApiError(400, "BadRequest", f"the request body is nested more than {MAX_DEPTH} levels deep")


def _depth(value: Json) -> int:
    """How deeply lists and maps nest in `value` (iteratively: any depth is measured safely)."""
    deepest = 0
    stack: list[tuple[Json, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


# --- RFC 7386 -----------------------------------------------------------------------------


def json_merge_patch(target: Json, patch: Json) -> Json:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge_patch(result.get(key), value)
    return result


# --- strategic merge patch ----------------------------------------------------------------


def strategic_merge_patch(target: Json, patch: Json) -> Json:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    return _merge_map(target if isinstance(target, dict) else {}, patch)


def _merge_map(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any] | None:
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if not k.startswith("$")}
    result = copy.deepcopy(target)
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = value
        elif key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = [v for v in result[field] if v not in (value or [])]
        elif key.startswith("$"):
            continue
        elif value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            merged = _merge_map(result[key] if isinstance(result.get(key), dict) else {}, value)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(key, result.get(key), value)
        else:
            result[key] = value
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _reorder(field, result[field], order)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(field: str, current: Any, patch: list[Any]) -> list[Any]:
    current = current if isinstance(current, list) else []
    if field in MERGE_PRIMITIVES:
        return [*current, *(v for v in patch if v not in current)]
    key = MERGE_KEYS.get(field)
    if key is None or not all(isinstance(item, dict) for item in patch):
        return copy.deepcopy(patch)
    if any(item.get("$patch") == "replace" for item in patch):
        return [copy.deepcopy(item) for item in patch if "$patch" not in item]
    result = [copy.deepcopy(item) for item in current]
    for item in patch:
        position = next(
            (i for i, old in enumerate(result) if isinstance(old, dict) and key in item and old.get(key) == item[key]),
            None,
        )
        if item.get("$patch") == "delete":
            if position is not None:
                result.pop(position)
            continue
        if position is None:
            merged = _merge_map({}, item)
            if merged is not None:
                result.append(merged)
        else:
            merged = _merge_map(result[position], item)
            if merged is None:
                result.pop(position)
            else:
                result[position] = merged
    return result


def _reorder(field: str, items: list[Any], order: list[Any]) -> list[Any]:
    """`$setElementOrder`: listed elements first in the given order, the others after, as they were."""
    key = MERGE_KEYS.get(field)

    def identity(item: Any) -> Any:
        return item.get(key) if key and isinstance(item, dict) else json.dumps(item, sort_keys=True)

    wanted = [identity(o) for o in order]
    ranked = sorted(
        enumerate(items),
        key=lambda pair: (wanted.index(identity(pair[1])) if identity(pair[1]) in wanted else len(wanted), pair[0]),
    )
    return [item for _, item in ranked]


# --- RFC 6902 -----------------------------------------------------------------------------

# kube-apiserver's maxJSONPatchOperations (endpoints/handlers/patch.go)
MAX_JSON_PATCH_OPERATIONS = 10000
# What kube-apiserver answers for any patch that does not apply (NewGenericServerResponse(422, ...)
# keeps only this text); the library's reason goes in the Status' cause, which kubectl prints.
PATCH_REJECTED = "the server rejected our request due to an error in our request"


def _go_json_type(value: Json) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "array"


def json_patch(target: Json, operations: Json) -> Json:
    """RFC 6902 with the `jsonpatch` library (array indexes must be canonical: "01", "²" and "1\n"
    are refused); a patch that does not decode is 400, one that does not apply 422, as upstream."""
    if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
        bad = operations if not isinstance(operations, list) else next(o for o in operations if not isinstance(o, dict))
        target_type = "jsonpatch.Patch" if not isinstance(operations, list) else "jsonpatch.Operation"
        raise ApiError(
            400, "BadRequest", f"json: cannot unmarshal {_go_json_type(bad)} into Go value of type {target_type}"
        )
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(
            413,
            "RequestEntityTooLarge",
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}",
        )
    try:
        return jsonpatch.JsonPatch(operations).apply(target)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        reason = failure_reason(target, operations, str(exc))
        raise ApiError(
            422,
            "Invalid",
            PATCH_REJECTED,
            {"causes": [{"reason": "FieldValueInvalid", "message": reason, "field": "patch"}]},
        ) from None


def apply_patch(content_type: str, target: Json, patch: Json) -> Json:
    """`target` patched by `patch` of media type `content_type`."""
    if content_type == MERGE:
        return json_merge_patch(target, patch)
    if content_type in (STRATEGIC, APPLY):
        if not isinstance(patch, dict):
            raise ApiError(400, "BadRequest", "a strategic merge patch must be a JSON object")
        return strategic_merge_patch(target, patch)
    if content_type == JSON_PATCH:
        return json_patch(target, patch)
    raise ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {', '.join(PATCH_TYPES)}",
    )
