"""`metadata.managedFields`, as kube-apiserver's structured-merge-diff keeps them: each field manager's
Apply entry records the fields of the object it applied, each Update entry (create, replace, patch)
the fields that write set or changed (FieldsV1: `f:<field>`, associative list items as
`k:{"name":"web"}`, set items as `v:"x"`). A server-side apply that would change a field another
manager owns is refused with 409 Conflict (`Apply failed with 1 conflict: conflict with
"kubectl-client-side-apply" using apps/v1: .spec.replicas`) unless forced, which takes the field
over (fieldmanager/internal/conflict.go, structured-merge-diff's merge.Updater)."""

from __future__ import annotations

import json
from typing import Any

from .options import invalid_option
from .patch import MERGE_KEYS, MERGE_PRIMITIVES
from .status import ApiError

__all__ = ["applied", "check_manager", "fields_v1", "updated"]

Obj = dict[str, Any]
IDENTITY = {"apiVersion", "kind"}
MAX_MANAGER_BYTES = 128  # apimachinery ValidateFieldManager
IDENTITY_META = {"name", "namespace", "managedFields"}
# metadata the server sets: never owned by a manager
SERVER_META = {
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
}
Path = tuple[str, ...]
ITEM = "."  # a list item's own presence


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


# --- field sets -----------------------------------------------------------------------------


def _leaves(value: Any, field: str, prefix: Path, out: dict[Path, Any]) -> None:
    """Every owned path of a field's value (as `_members` names them) with the value found there."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _leaves(item, key, (*prefix, f"f:{key}"), out)
        return
    if isinstance(value, list) and value:
        key = MERGE_KEYS.get(field)
        if key and all(isinstance(item, dict) and key in item for item in value):
            for item in value:
                element = (*prefix, "k:" + json.dumps({key: item[key]}, separators=(",", ":")))
                out[(*element, ITEM)] = True
                for k, v in item.items():
                    _leaves(v, k, (*element, f"f:{k}"), out)
            return
        if field in MERGE_PRIMITIVES:
            for item in value:
                out[(*prefix, "v:" + json.dumps(item, separators=(",", ":")))] = True
            return
    out[prefix] = value


def leaves(obj: Obj, status: bool = False) -> dict[Path, Any]:
    """The owned paths of an object with their values (identity and server-set metadata aside;
    status only when `status`)."""
    out: dict[Path, Any] = {}
    for key, value in obj.items():
        if key in IDENTITY or (key == "status" and not status):
            continue
        if key == "metadata" and isinstance(value, dict):
            meta = {k: v for k, v in value.items() if k not in IDENTITY_META and k not in SERVER_META}
            if meta:
                _leaves(meta, "metadata", ("f:metadata",), out)
            continue
        _leaves(value, key, (f"f:{key}",), out)
    return out


def paths_of(fields: Obj, prefix: Path = ()) -> set[Path]:
    """The paths a FieldsV1 tree holds (its leaves, and `.` for list items)."""
    out: set[Path] = set()
    for key, child in fields.items():
        path = (*prefix, key)
        if key == ITEM or not child:
            out.add(path)
        else:
            out |= paths_of(child, path)
    return out


def fields_of_paths(paths: set[Path]) -> Obj:
    """A FieldsV1 tree of `paths` (keys sorted, as the apiserver serializes a fieldpath.Set)."""
    tree: Obj = {}
    for path in sorted(paths):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return tree


def path_text(path: Path) -> str:
    """fieldpath.Path.String(): `.spec.replicas`, `.spec.containers[name="web"].image`, `[="x"]`."""
    text = ""
    for element in path:
        if element == ITEM:
            continue
        kind, _, rest = element.partition(":")
        if kind == "f":
            text += f".{rest}"
        elif kind == "k":
            keys = json.loads(rest)
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        else:
            text += f"[={rest}]"
    return text


def _same(one: Any, other: Any) -> bool:
    if one == other:
        return True
    scalars = (str, int, float)
    return isinstance(one, scalars) and isinstance(other, scalars) and str(one) == str(other)


def _sorted_entries(entries: list[Obj]) -> list[Obj]:
    """sortEncodedManagedFields: by operation (Apply first), time, manager, apiVersion."""
    return sorted(
        entries,
        key=lambda e: (e.get("operation", ""), e.get("time", ""), e.get("manager", ""), e.get("apiVersion", "")),
    )


def _without(entries: list[Obj], taken: set[Path], keep: Obj | None = None) -> list[Obj]:
    """The entries with `taken` removed from every one but `keep`; an entry left empty is dropped."""
    out = []
    for entry in entries:
        if entry is keep:
            out.append(entry)
            continue
        owned = paths_of(entry.get("fieldsV1") or {})
        if not owned & taken:
            out.append(entry)
            continue
        left = owned - taken
        if left:
            out.append({**entry, "fieldsV1": fields_of_paths(left)})
    return out


def _manager_text(entry: Obj) -> str:
    """printManager: `"kubectl-client-side-apply" using apps/v1` for an Update, `"kubectl"` for an Apply."""
    text = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        text += f" with subresource {json.dumps(entry['subresource'])}"
    if entry.get("operation") == "Update":
        text += f" using {entry.get('apiVersion', '')}"
    return text


def conflict_error(conflicts: list[tuple[Obj, Path]]) -> ApiError:
    """NewConflictError: 409 with one FieldManagerConflict cause per conflict."""
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {_manager_text(e)}", "field": path_text(p)}
        for e, p in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {_manager_text(entry)}: {path_text(path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for entry, path in conflicts:
            identity = json.dumps(
                {
                    "manager": entry.get("manager"),
                    "operation": entry.get("operation"),
                    "apiVersion": entry.get("apiVersion"),
                }
            )
            by_manager.setdefault(identity, [_manager_text(entry)]).append(f"- {path_text(path)}")
        lines = []
        for identity in sorted(by_manager):
            header, *paths = by_manager[identity]
            lines += [f"conflicts with {header}:", *paths]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})


def apply_owned(
    current: list[Obj], manager: str, api_version: str, doc: Obj, live: Obj, force: bool, now: str
) -> list[Obj]:
    """The managedFields after `manager` applied `doc` to `live`: 409 when a field it sets to a new
    value is owned by another manager (unless `force`, which takes the field over)."""
    wanted = leaves(doc)
    present = leaves(live)
    conflicts: list[tuple[Obj, Path]] = []
    taken: set[Path] = set()
    for entry in current:
        if entry.get("manager") == manager and entry.get("operation") == "Apply":
            continue
        for path in sorted(paths_of(entry.get("fieldsV1") or {}) & set(wanted)):
            if path[-1] == ITEM or (_same(present.get(path), wanted[path]) and path in present):
                continue
            conflicts.append((entry, path))
            taken.add(path)
    if conflicts and not force:
        raise conflict_error(conflicts)
    return _sorted_entries(applied(_without(current, taken), manager, api_version, doc, now))


def updated(current: list[Obj], manager: str, api_version: str, old: Obj | None, new: Obj, now: str) -> list[Obj]:
    """The managedFields after an Update by `manager` (create: `old` None): it owns every field the
    write set or changed, which no other manager owns any more; removed fields are nobody's."""
    before = leaves(old) if old is not None else {}
    after = leaves(new)
    changed = {path for path, value in after.items() if path not in before or not _same(before[path], value)}
    removed = set(before) - set(after)
    if not changed and not removed:
        return current
    mine = next(
        (
            e
            for e in current
            if e.get("manager") == manager and e.get("operation") == "Update" and e.get("apiVersion") == api_version
        ),
        None,
    )
    others = _without([e for e in current if e is not mine], changed | removed)
    owned = (paths_of(mine.get("fieldsV1") or {}) if mine else set()) - removed | changed
    if not owned:
        return _sorted_entries(others)
    entry = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_of_paths(owned),
    }
    return _sorted_entries([*others, entry])
