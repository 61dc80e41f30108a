"""The cluster store — what the API server and etcd are to Kubernetes.

Every write runs in one transaction: it bumps the cluster's resourceVersion, stamps the object with
it, appends the change to the watch log, and (after commit) publishes it to everyone watching.
A write that names a stale resourceVersion is refused with `Conflict`, so two people editing at once
never lose an update.
"""

from __future__ import annotations

import copy
import secrets
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, connection, transaction

from . import rows
from .models import Change, Cluster, KubeObject
from .publish import publish_change
from .scheduling_queue import requeue_after

__all__ = [
    "CLUSTER_SCOPED",
    "AlreadyExists",
    "Conflict",
    "Forbidden",
    "LogGap",
    "NotFound",
    "StoreError",
    "changes_since",
    "create",
    "delete",
    "get",
    "list_objects",
    "mark_deleted",
    "now_rfc3339",
    "oldest_logged",
    "patch",
    "replace",
]

CLUSTER_SCOPED = {
    "Node",
    "Namespace",
    "PriorityClass",
    "RuntimeClass",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "DeviceClass",
    "ResourceSlice",
}
CHANGE_LOG_LIMIT = 20_000
# kinds whose metadata.generation counts spec changes (the registries' PrepareForUpdate)
GENERATION_KINDS = frozenset({"Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "PodDisruptionBudget"})


class StoreError(Exception):
    """A write the store refused; `reason` and `code` follow Kubernetes' Status."""

    reason = "BadRequest"
    code = 400


class NotFound(StoreError):
    reason = "NotFound"
    code = 404


class AlreadyExists(StoreError):
    reason = "AlreadyExists"
    code = 409


class Forbidden(StoreError):
    reason = "Forbidden"
    code = 403


class Conflict(StoreError):
    reason = "Conflict"
    code = 409


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def resource_name(kind: str) -> str:
    """The plural, lower-case resource name kubectl prints in errors ("pods", "nodes")."""
    irregular = {
        "PriorityClass": "priorityclasses",
        "Namespace": "namespaces",
        "Endpoints": "endpoints",
        "StorageClass": "storageclasses",
        "DeviceClass": "deviceclasses",
        "CSIStorageCapacity": "csistoragecapacities",
    }
    return irregular.get(kind, kind.lower() + "s")


def _namespace_of(kind: str, body: dict[str, Any]) -> str:
    if kind in CLUSTER_SCOPED:
        return ""
    return body.get("metadata", {}).get("namespace") or "default"


def _row(cluster: Cluster, kind: str, namespace: str, name: str, lock: bool = False) -> KubeObject:
    row = rows.find_object(cluster, kind, namespace, name, lock)
    if row is None:
        raise NotFound(f'{resource_name(kind)} "{name}" not found')
    return row


def _bump(cluster: Cluster) -> int:
    """The cluster's next resourceVersion, taken in one statement (UPDATE … RETURNING: SQLite 3.35+,
    PostgreSQL); the row stays locked until the write's transaction ends."""
    table = connection.ops.quote_name(Cluster._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET resource_version = resource_version + 1 WHERE id = %s RETURNING resource_version",
            [cluster.pk],
        )
        rv = int(cursor.fetchone()[0])
    cluster.resource_version = rv
    return rv


def _log(
    cluster: Cluster,
    rv: int,
    change_type: str,
    row: KubeObject,
    body: dict[str, Any],
    component: str,
    previous: dict[str, Any] | None = None,
    encoded: Any = None,
) -> None:
    """Append the change to the watch log (`encoded`: its body as the row's write adapted it),
    requeue what it may help, publish it once committed."""
    change = Change(
        cluster_id=cluster.pk,
        resource_version=rv,
        type=change_type,
        kind=row.kind,
        namespace=row.namespace,
        name=row.name,
        body=body,
        component=component,
    )
    rows.insert_change(change, encoded)
    if rv % 1000 == 0:
        Change.objects.filter(cluster=cluster, resource_version__lte=rv - CHANGE_LOG_LIMIT).delete()
    requeue_after(cluster, change_type, row, previous)
    message = change.to_dict()
    transaction.on_commit(lambda: publish_change(cluster.pk, message))


def _copy_json(value: Any) -> Any:
    """A deep copy of decoded JSON (dicts, lists and immutable scalars): a stored body, a third of
    `copy.deepcopy`'s time."""
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


def _index(row: KubeObject) -> None:
    """Copy the fields the scheduling queue sorts and filters on out of a pod's body."""
    if row.kind == "Pod":
        spec = row.body.get("spec", {})
        row.node_name = spec.get("nodeName") or ""
        row.priority = int(spec.get("priority") or 0)


def _check_version(row: KubeObject, expected: str | None) -> None:
    if expected and str(row.resource_version) != str(expected):
        raise Conflict(
            f'Operation cannot be fulfilled on {resource_name(row.kind)} "{row.name}": the object has been '
            "modified; please apply your changes to the latest version and try again"
        )


def create(cluster: Cluster, body: dict[str, Any], component: str, dry_run: bool = False) -> dict[str, Any]:
    """Store a new object (already validated and defaulted); returns it with its resourceVersion.

    `dry_run`: the object as it would be stored (name generated, uid and creationTimestamp set, no
    resourceVersion — as kube-apiserver's dry-run storage answers), with nothing written."""
    body = copy.deepcopy(body)
    kind = body["kind"]
    meta = body.setdefault("metadata", {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + _suffix()
    name = meta.get("name")
    if not name:
        raise StoreError("metadata.name: Required value: name or generateName is required")
    namespace = _namespace_of(kind, body)
    if kind not in CLUSTER_SCOPED:
        meta["namespace"] = namespace
    meta.setdefault("uid", str(uuid.uuid4()))
    meta.setdefault("creationTimestamp", now_rfc3339())
    if kind in GENERATION_KINDS:
        meta["generation"] = 1
    if kind == "Service":
        from .service_ips import allocate_cluster_ip

        try:
            allocate_cluster_ip(cluster, body)
        except ValueError as exc:
            raise StoreError(str(exc)) from None
    if dry_run:
        if KubeObject.objects.filter(cluster=cluster, kind=kind, namespace=namespace, name=name).exists():
            raise AlreadyExists(f'{resource_name(kind)} "{name}" already exists')
        return body
    try:
        with transaction.atomic():
            rv = _bump(cluster)
            meta["resourceVersion"] = str(rv)
            row = KubeObject(
                cluster=cluster,
                kind=kind,
                namespace=namespace,
                name=name,
                uid=meta["uid"],
                resource_version=rv,
                body=body,
                queue_ts=time.time(),
            )
            _index(row)
            encoded = rows.insert_object(row)
            _log(cluster, rv, "ADDED", row, body, component, encoded=encoded)
    except IntegrityError:
        # the savepoint rolled the bump back: forget it in memory too
        cluster.resource_version = (
            Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
        )
        raise AlreadyExists(f'{resource_name(kind)} "{name}" already exists') from None
    return body


def replace(cluster: Cluster, body: dict[str, Any], component: str, expected_rv: str | None = None) -> dict[str, Any]:
    """Replace an object; `expected_rv` (or the body's own resourceVersion) must be current."""
    kind = body["kind"]
    meta = body.get("metadata", {})
    expected = expected_rv if expected_rv is not None else meta.get("resourceVersion")

    def swap(current: dict[str, Any]) -> None:
        keep = {k: current["metadata"][k] for k in ("uid", "creationTimestamp") if k in current["metadata"]}
        current.clear()
        current.update(copy.deepcopy(body))
        current["metadata"].update(keep)

    return patch(cluster, kind, _namespace_of(kind, body), meta["name"], swap, component, expected)


def patch(
    cluster: Cluster,
    kind: str,
    namespace: str,
    name: str,
    mutate: Callable[[dict[str, Any]], None],
    component: str,
    expected_rv: str | None = None,
) -> dict[str, Any]:
    """Read-modify-write one object in a transaction; a no-op mutation writes nothing."""
    namespace = "" if kind in CLUSTER_SCOPED else (namespace or "default")
    with transaction.atomic():
        row = _row(cluster, kind, namespace, name, lock=True)
        _check_version(row, expected_rv)
        body = _copy_json(row.body)
        mutate(body)
        if body == row.body:
            return body
        if _finalized(kind, row.body, body):
            # the last finalizer of an object being deleted is gone: the API server removes it
            rv = _bump(cluster)
            body["metadata"]["resourceVersion"] = str(rv)
            rows.delete_object(row)
            _log(cluster, rv, "DELETED", row, body, component)
            return body
        if kind in GENERATION_KINDS and body.get("spec") != row.body.get("spec"):
            body["metadata"]["generation"] = int(row.body["metadata"].get("generation") or 1) + 1
        rv = _bump(cluster)
        body["metadata"]["resourceVersion"] = str(rv)
        previous = row.body
        row.body = body
        row.resource_version = rv
        _index(row)
        encoded = rows.save_object(row)
        _log(cluster, rv, "MODIFIED", row, body, component, previous, encoded)
    return body


def _finalized(kind: str, before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether a write removed the last `metadata.finalizers` entry of an object marked for deletion
    (a pod's deletionTimestamp is its graceful termination instead: the kubelet removes it)."""
    meta = after.get("metadata") or {}
    return (
        kind != "Pod"
        and bool(meta.get("deletionTimestamp"))
        and not meta.get("finalizers")
        and bool((before.get("metadata") or {}).get("finalizers"))
    )


def mark_deleted(cluster: Cluster, kind: str, namespace: str, name: str, component: str) -> dict[str, Any]:
    """A delete of an object with finalizers: it stays, with `deletionTimestamp` (and a grace period
    of 0), until its finalizers are removed (`patch` then removes it)."""

    def mark(body: dict[str, Any]) -> None:
        meta = body["metadata"]
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = now_rfc3339()
            meta["deletionGracePeriodSeconds"] = 0

    return patch(cluster, kind, namespace, name, mark, component)


def delete(
    cluster: Cluster, kind: str, namespace: str, name: str, component: str, expected_rv: str | None = None
) -> dict[str, Any]:
    """Remove an object; returns its last state."""
    namespace = "" if kind in CLUSTER_SCOPED else (namespace or "default")
    with transaction.atomic():
        row = _row(cluster, kind, namespace, name, lock=True)
        _check_version(row, expected_rv)
        rv = _bump(cluster)
        body = _copy_json(row.body)
        body["metadata"]["resourceVersion"] = str(rv)
        rows.delete_object(row)
        _log(cluster, rv, "DELETED", row, body, component)
    return body


class LogGap(Exception):
    """The watch log cannot serve the changes after `since`: they were pruned (`since` < `current`)
    or `since` is newer than the cluster (`since` > `current`)."""

    def __init__(self, since: int, current: int) -> None:
        super().__init__(f"no watch log from {since} (the cluster is at {current})")
        self.since = since
        self.current = current

    @property
    def too_large(self) -> bool:
        return self.since > self.current


def changes_since(cluster: Cluster, since: int, kind: str | None = None, before: int | None = None) -> list[Change]:
    """The changes after resourceVersion `since` (of `kind`, before `before`), in order: the one reader
    of the watch log, for the browser's stream and the Kubernetes watch alike. Raises `LogGap`."""
    current = int(Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get())
    if since > current or not log_reaches_back_to(cluster, since, current):
        raise LogGap(since, current)
    if since == current:  # nothing after it yet (an idle stream's heartbeat): no need to look
        return []
    changes = Change.objects.filter(cluster=cluster, resource_version__gt=since)
    if kind is not None:
        changes = changes.filter(kind=kind)
    if before is not None:
        changes = changes.filter(resource_version__lt=before)
    return list(changes.order_by("resource_version"))


def oldest_logged(cluster: Cluster) -> int | None:
    """The resourceVersion of the oldest change the watch log still holds."""
    return (
        Change.objects.filter(cluster=cluster)
        .order_by("resource_version")
        .values_list("resource_version", flat=True)
        .first()
    )


def log_reaches_back_to(cluster: Cluster, since: int, current: int) -> bool:
    """Whether the watch log still holds every change after `since` (it is pruned from the front)."""
    if since >= current:
        return True
    oldest = oldest_logged(cluster)
    return oldest is not None and oldest <= since + 1


def get(cluster: Cluster, kind: str, namespace: str, name: str) -> dict[str, Any]:
    namespace = "" if kind in CLUSTER_SCOPED else (namespace or "default")
    return _row(cluster, kind, namespace, name).body


def list_objects(cluster: Cluster, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
    query = KubeObject.objects.filter(cluster=cluster, kind=kind)
    if namespace is not None and kind not in CLUSTER_SCOPED:
        query = query.filter(namespace=namespace)
    return [row.body for row in query.order_by("namespace", "name")]


def list_rows(cluster: Cluster, kinds: Iterable[str]) -> list[KubeObject]:
    return list(KubeObject.objects.filter(cluster=cluster, kind__in=list(kinds)).order_by("kind", "namespace", "name"))


def _suffix() -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(secrets.choice(alphabet) for _ in range(5))
