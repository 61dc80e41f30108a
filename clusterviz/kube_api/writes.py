"""What kubectl's writes do to the cluster: the same admission (validation.admit), store and service
calls as the browser's actions, with component "kubectl" — plus the API-server rules a real
server applies on top (status is reset on create and kept on update, pod specs are mostly
immutable, identity fields are the server's).

All functions are synchronous (run them with sync_to_async) and raise ApiError, store errors or
InputError; the caller turns those into Status responses.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from scheduler_core.api.loading import InputError
from scheduler_core.api.validation import replicas_error

from .. import services, store
from ..admission import admission_context
from ..admission_plugins import admit_new
from ..models import Cluster
from ..node_registration import register_node
from ..taints import stamp_no_execute
from ..update_validation import SERVER_METADATA, admit_update
from ..validation import admit
from .fields import FieldValidation, check_apply
from .managed import applied, apply_owned, check_manager, updated
from .patch import APPLY, MERGE, STRATEGIC, apply_patch
from .present import scale_of
from .reads import namespace_exists
from .resources import Resource
from .served import served_schema
from .status import ADMIT_SOURCE, ApiError, already_exists, invalid

__all__ = ["COMPONENT", "create", "delete", "patch", "replace", "update_scale"]

COMPONENT = "kubectl"
Obj = dict[str, Any]

STATUS_RESET_ON_CREATE = (
    "Pod",
    "Deployment",
    "ReplicaSet",
    "Namespace",
    "DaemonSet",
    "StatefulSet",
    "Job",
    "Service",
    "PodDisruptionBudget",
    "ResourceClaim",
    "ResourceQuota",
    "PersistentVolume",  # persistentvolume strategy PrepareForCreate: the status is the controller's
)


def _admit(cluster: Cluster, res: Resource, body: Obj, name: str) -> Obj:
    try:
        return admit(body, ADMIT_SOURCE, None, *admission_context(cluster))
    except InputError as exc:
        raise invalid(res, name, str(exc)) from None


def _object_of(res: Resource, body: Any) -> Obj:
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", f"the body of the request must be a {res.kind} object")
    kind = body.get("kind") or res.kind
    if kind != res.kind:
        raise ApiError(
            400,
            "BadRequest",
            f"the kind of the object ({kind}) does not match the resource of the request ({res.qualified})",
        )
    api_version = body.get("apiVersion") or res.api_version
    if api_version != res.api_version:
        raise ApiError(
            400,
            "BadRequest",
            f"the API version in the data ({api_version}) does not match the expected API version ({res.api_version})",
        )
    meta = body.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise ApiError(400, "BadRequest", "metadata: must be an object")
    return {**body, "kind": res.kind, "apiVersion": res.api_version, "metadata": dict(meta or {})}


def _place(res: Resource, meta: Obj, namespace: str) -> None:
    """The object's namespace comes from the URL (a different one in the body is an error)."""
    if not res.namespaced:
        meta.pop("namespace", None)
        return
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise ApiError(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
        )
    meta["namespace"] = namespace


def create(
    cluster: Cluster,
    res: Resource,
    namespace: str,
    body: Any,
    dry_run: bool = False,
    fields: FieldValidation | None = None,
    duplicates: Sequence[str] = (),
    apply_manager: str | None = None,
    manager: str | None = None,
) -> Obj:
    """POST: a new object, admitted like the browser's; 201 with what was stored (`apply_manager`:
    created by that field manager's server-side apply; `manager`: the field manager of a plain create)."""
    body = copy.deepcopy(body)
    if fields is not None:
        fields.decoded(res, body, list(duplicates))
    obj = _object_of(res, body)
    meta = obj["metadata"]
    _place(res, meta, namespace)
    for key in SERVER_METADATA:
        meta.pop(key, None)
    if res.kind in STATUS_RESET_ON_CREATE:
        obj.pop("status", None)
    name = meta.get("name") or meta.get("generateName") or ""
    if not name:
        raise invalid(res, "", "metadata.name: Required value: name or generateName is required")
    if res.namespaced:
        _check_namespace(cluster, res, namespace, name)
    admitted = register_node(_admit(cluster, res, obj, name))
    admitted = admit_new(cluster, admitted)  # the plugins that read other objects (LimitRanger, …)
    if apply_manager is not None:
        admitted["metadata"]["managedFields"] = applied([], apply_manager, res.api_version, body, store.now_rfc3339())
    elif manager:
        owned = updated([], manager, res.api_version, None, admitted, store.now_rfc3339())
        if owned:
            admitted["metadata"]["managedFields"] = owned
    try:
        return store.create(cluster, admitted, COMPONENT, dry_run)
    except store.AlreadyExists:
        raise already_exists(res, admitted["metadata"].get("name", name)) from None


def _check_namespace(cluster: Cluster, res: Resource, namespace: str, name: str) -> None:
    """NamespaceLifecycle admission: no new object in a namespace that does not exist, or that is
    being terminated."""
    if not namespace_exists(cluster, namespace):
        raise ApiError(
            404, "NotFound", f'namespaces "{namespace}" not found', {"name": namespace, "kind": "namespaces"}
        )
    try:
        ns = store.get(cluster, "Namespace", "", namespace)
    except store.NotFound:
        return
    if ns["metadata"].get("deletionTimestamp"):
        details: dict[str, Any] = {"name": name, "kind": res.plural}
        if res.group:
            details["group"] = res.group
        details["causes"] = [
            {
                "reason": "NamespaceTerminating",
                "message": f"namespace {namespace} is being terminated",
                "field": "metadata.namespace",
            }
        ]
        raise ApiError(
            403,
            "Forbidden",
            f'{res.qualified} "{name}" is forbidden: unable to create new content in namespace {namespace} '
            "because it is being terminated",
            details,
        )


# --- updates --------------------------------------------------------------------------------


def _updated(cluster: Cluster, res: Resource, current: Obj, wanted: Any, subresource: str | None) -> Obj:
    """The object to store when `current` is updated to `wanted` (main resource or /status)."""
    name = current["metadata"]["name"]
    obj = _object_of(res, wanted)
    meta = obj["metadata"]
    requested = meta.get("managedFields")
    if meta.get("name", name) != name:
        raise ApiError(
            400,
            "BadRequest",
            f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})",
        )
    meta["name"] = name
    _place(res, meta, current["metadata"].get("namespace", ""))
    if subresource == "status":
        # the status subresource changes status only
        obj = {**copy.deepcopy(current), "status": obj.get("status") or {}}
    elif "status" in current:
        obj["status"] = copy.deepcopy(current["status"])
    else:
        obj.pop("status", None)
    for key in SERVER_METADATA:
        if key == "uid" and obj["metadata"].get("uid") and subresource is None:
            continue  # an update may leave the uid out, not change it (update_validation)
        obj["metadata"].pop(key, None)
        if key in current["metadata"] and key != "managedFields":
            obj["metadata"][key] = current["metadata"][key]
    admitted = _admit(cluster, res, obj, name)
    if res.kind == "Node":
        stamp_no_execute(current.get("spec", {}).get("taints", []), admitted.get("spec", {}).get("taints", []))
    if subresource != "status" and "status" in current:
        admitted["status"] = copy.deepcopy(current["status"])  # admission must not touch it either
    if subresource is None:
        admit_update(res.kind, current, admitted)
    kept = current["metadata"].get("managedFields") or []
    if isinstance(requested, list) and requested != kept and all(isinstance(e, dict) for e in requested):
        kept = requested  # a write that sets managedFields replaces them (kubectl's migration to apply)
    if kept:  # set after admission, which prunes
        admitted["metadata"]["managedFields"] = copy.deepcopy(kept)
    return admitted


def _track(res: Resource, manager: str | None, current: Obj, new: Obj, subresource: str | None) -> Obj:
    """`new` with the Update entry of `manager` for what it set or changed in `current`."""
    if not manager or subresource is not None:
        return new
    entries = new["metadata"].get("managedFields") or []
    owned = updated(entries, manager, res.api_version, current, new, store.now_rfc3339())
    if owned:
        new["metadata"]["managedFields"] = owned
    else:
        new["metadata"].pop("managedFields", None)
    return new


def _write(
    cluster: Cluster,
    res: Resource,
    namespace: str,
    name: str,
    change: Callable[[Obj], Obj],
    expected_rv: str | None,
    dry_run: bool,
) -> Obj:
    """Apply `change` to the current object under the store's row lock (read-modify-write)."""
    if dry_run:  # the update as it would be stored, with the current resourceVersion: nothing written
        current = store.get(cluster, res.kind, namespace, name)
        if expected_rv and str(expected_rv) != current["metadata"].get("resourceVersion"):
            raise store.Conflict(f'{res.qualified} "{name}": the object has been modified')
        return change(copy.deepcopy(current))

    def mutate(body: Obj) -> None:
        new = change(copy.deepcopy(body))
        body.clear()
        body.update(new)

    before = copy.deepcopy(store.get(cluster, res.kind, namespace, name))
    after = store.patch(cluster, res.kind, namespace, name, mutate, COMPONENT, expected_rv)
    if res.kind == "Node":
        was = bool(before.get("spec", {}).get("unschedulable"))
        now = bool(after.get("spec", {}).get("unschedulable"))
        if was != now:  # the node controller's unschedulable taint follows spec.unschedulable
            after = services.set_cordon(cluster, name, now, COMPONENT)
    return after


def _cordon_request(res: Resource, content_type: str, doc: Any) -> bool | None:
    """`kubectl cordon/uncordon`'s patch ({"spec":{"unschedulable":true|null}}) → True/False, else None."""
    if res.kind != "Node" or content_type not in (MERGE, STRATEGIC) or not isinstance(doc, dict):
        return None
    if list(doc) != ["spec"] or not isinstance(doc["spec"], dict) or list(doc["spec"]) != ["unschedulable"]:
        return None
    value = doc["spec"]["unschedulable"]
    if value not in (True, False, None):
        return None
    return bool(value)


def _expected_version(doc: Any) -> str | None:
    """A resourceVersion in a merge/strategic patch is a precondition (`kubectl label --resource-version`)."""
    if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict):
        rv = doc["metadata"].get("resourceVersion")
        return str(rv) if rv else None
    return None


def patch(
    cluster: Cluster,
    res: Resource,
    namespace: str,
    name: str,
    content_type: str,
    doc: Any,
    subresource: str | None = None,
    dry_run: bool = False,
    fields: FieldValidation | None = None,
    manager: str | None = None,
    force: bool = False,
) -> tuple[Obj, bool]:
    """PATCH: returns (the stored object, whether it was created — server-side apply of a new object).
    `manager` owns what the patch sets; a server-side apply's conflicts are refused unless `force`."""
    if content_type == APPLY:
        manager = check_manager(manager, doc)
        check_apply(res, namespace, name, doc, served_schema(cluster))
    if not dry_run:
        _materialize(cluster, res, name, False)
    try:
        store.get(cluster, res.kind, namespace, name)
    except store.NotFound:
        if content_type == APPLY and subresource is None:
            if isinstance(doc, dict):
                doc = {**doc, "metadata": {**(doc.get("metadata") or {}), "name": name}}
            return create(cluster, res, namespace, doc, dry_run, apply_manager=manager), True
        raise
    cordon = _cordon_request(res, content_type, doc)
    if cordon is not None and subresource is None and not dry_run:
        return services.set_cordon(cluster, name, cordon, COMPONENT), False

    def change(current: Obj) -> Obj:
        patched = apply_patch(content_type, {**current, "kind": res.kind, "apiVersion": res.api_version}, doc)
        if fields is not None and content_type != APPLY and isinstance(patched, dict):
            fields.patched(res, content_type, doc, current, patched)
        result = _updated(cluster, res, current, patched, subresource)
        if content_type == APPLY and manager is not None and isinstance(doc, dict):
            entries = current["metadata"].get("managedFields") or []
            now = store.now_rfc3339()
            result["metadata"]["managedFields"] = apply_owned(
                entries, manager, res.api_version, doc, current, force, now
            )
            return result
        return _track(res, manager, current, result, subresource)

    expected = _expected_version(doc) if content_type != APPLY else None
    return _write(cluster, res, namespace, name, change, expected, dry_run), False


def replace(
    cluster: Cluster,
    res: Resource,
    namespace: str,
    name: str,
    body: Any,
    subresource: str | None = None,
    dry_run: bool = False,
    fields: FieldValidation | None = None,
    duplicates: Sequence[str] = (),
    manager: str | None = None,
) -> Obj:
    """PUT: the whole object; its metadata.resourceVersion, when given, must be current."""
    body = copy.deepcopy(body)
    if fields is not None:
        fields.decoded(res, body, list(duplicates))
    if not dry_run:
        _materialize(cluster, res, name, False)
    obj = _object_of(res, body)
    expected = obj["metadata"].get("resourceVersion") or None

    def change(current: Obj) -> Obj:
        return _track(res, manager, current, _updated(cluster, res, current, obj, subresource), subresource)

    return _write(cluster, res, namespace, name, change, str(expected) if expected else None, dry_run)


def _materialize(cluster: Cluster, res: Resource, name: str, dry_run: bool) -> Obj | None:
    """A namespace that exists without a stored object (built-in, or holding imported objects) is
    stored before it is changed; a dry run works on it as it would be stored."""
    if res.kind != "Namespace" or store_has(cluster, "Namespace", name) or not namespace_exists(cluster, name):
        return None
    if dry_run:
        return services.namespace_body(name)
    services.ensure_namespace(cluster, name, COMPONENT)
    return None


def store_has(cluster: Cluster, kind: str, name: str) -> bool:
    try:
        store.get(cluster, kind, "", name)
    except store.NotFound:
        return False
    return True


def delete(cluster: Cluster, res: Resource, namespace: str, name: str, options: Obj, dry_run: bool = False) -> Obj:
    """DELETE: as the browser's delete (a bound pod first turns Terminating; owners take their
    dependents along; a namespace turns Terminating); `gracePeriodSeconds: 0` (`--force
    --grace-period=0`) removes a pod at once."""
    would_be = _materialize(cluster, res, name, dry_run)
    if would_be is not None:
        return would_be
    current = store.get(cluster, res.kind, namespace, name)
    if dry_run:
        return _deleted_dry(res, current, options)
    if res.kind == "Pod" and options.get("gracePeriodSeconds") == 0:
        return store.delete(cluster, res.kind, namespace, name, COMPONENT)
    grace = options.get("gracePeriodSeconds")
    grace = grace if isinstance(grace, int) and not isinstance(grace, bool) and grace > 0 else None
    return services.delete_object(cluster, res.kind, namespace, name, COMPONENT, grace)


def _deleted_dry(res: Resource, current: Obj, options: Obj) -> Obj:
    """What a dry-run delete answers: the object, or — for a bound pod deleted gracefully — the
    object as it would turn Terminating (services.delete_object's deletionTimestamp and grace)."""
    meta = current["metadata"]
    graceful = options.get("gracePeriodSeconds") != 0
    if res.kind == "Pod" and graceful and current.get("spec", {}).get("nodeName") and not meta.get("deletionTimestamp"):
        terminating = {**meta, "deletionTimestamp": store.now_rfc3339(), "deletionGracePeriodSeconds": 30}
        return {**current, "metadata": terminating}
    return current


def update_scale(
    cluster: Cluster,
    res: Resource,
    namespace: str,
    name: str,
    content_type: str | None,
    doc: Any,
    dry_run: bool = False,
) -> Obj:
    """PATCH/PUT on `/scale`: the new spec.replicas goes through services.scale; returns the Scale."""
    current = store.get(cluster, res.kind, namespace, name)
    scale = scale_of(res, current)
    wanted = apply_patch(content_type, scale, doc) if content_type else doc
    if not isinstance(wanted, dict):
        raise ApiError(400, "BadRequest", "the body of the request must be a Scale object")
    replicas = (wanted.get("spec") or {}).get("replicas", 0)
    error = replicas_error(replicas)
    if error:
        raise invalid(res, name, f"spec.replicas: {error}", kind="Scale", group="autoscaling")
    expected = (wanted.get("metadata") or {}).get("resourceVersion")
    if expected and str(expected) != current["metadata"].get("resourceVersion"):
        raise store.Conflict("stale scale")
    try:
        if dry_run:
            services.check_scale(res.kind, replicas)
            return {**scale, "spec": {"replicas": replicas}}
        updated = services.scale(cluster, res.kind, namespace, name, replicas, COMPONENT)
    except InputError as exc:
        raise invalid(res, name, str(exc), kind="Scale", group="autoscaling") from None
    return scale_of(res, updated)
