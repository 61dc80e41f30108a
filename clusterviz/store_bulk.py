"""Bulk writes to the cluster store: many objects in one transaction, as a controller at scale writes.

Each object still gets its own resourceVersion and watch-log row, exactly as one `store.create` or
`store.patch` after the other would give it (the versions are taken as one block); the rows go in
with `bulk_create` / `bulk_update`, and the changes are published after the commit as batched
`watch.batch` messages (`publish.publish_changes`) instead of one message per change.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, models, transaction

from . import store
from .models import Change, Cluster, KubeObject
from .publish import publish_changes
from .scheduling_queue import GATED, requeue_after

__all__ = ["batch_pods", "clone", "create_many", "insert_rows", "patch_many"]

Mutation = Callable[[dict[str, Any]], None]


def batch_pods() -> int:
    """The most pods one control-loop step schedules or starts at the instant pace (`CLUSTERVIZ_BATCH_PODS`)."""
    return max(1, int(getattr(settings, "CLUSTERVIZ_BATCH_PODS", 1000)))


def clone(body: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a JSON body (a JSON round trip: several times faster than `copy.deepcopy`)."""
    return json.loads(json.dumps(body))


class Prepared:
    """Field values as the database takes them, each JSON body encoded once: a pod's body goes into
    its row and its watch-log row (`get_db_prep_save` through the `connection` proxy costs an
    asgiref lookup per value: the real connection is looked up once)."""

    def __init__(self) -> None:
        self.connection = connections[DEFAULT_DB_ALIAS]
        self._json: dict[int, tuple[Any, Any]] = {}  # id(body) → (body, its database value)

    def value(self, field: models.Field[Any, Any], raw: Any) -> Any:
        if isinstance(field, models.JSONField) and raw is not None:
            known = self._json.get(id(raw))
            if known is None or known[0] is not raw:
                known = self._json[id(raw)] = (raw, field.get_db_prep_save(raw, self.connection))
            return known[1]
        return field.get_db_prep_save(raw, self.connection)


def insert_rows(
    model: type[models.Model], rows: Sequence[models.Model | dict[str, Any]], prepared: Prepared | None = None
) -> None:
    """INSERT the rows (model instances, or dicts of field values: the others take their defaults)
    in one `executemany` (Django's `bulk_create` compiles every value of every row into one
    statement: most of a 1,000-pod batch's time)."""
    prepared = prepared or Prepared()
    ops = prepared.connection.ops
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    defaults = {f.attname: f.get_default() for f in fields}
    table = ops.quote_name(model._meta.db_table)
    columns = ", ".join(ops.quote_name(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    values = []
    for row in rows:
        if isinstance(row, dict):
            values.append([prepared.value(f, row.get(f.attname, defaults[f.attname])) for f in fields])
        else:
            values.append([prepared.value(f, getattr(row, f.attname)) for f in fields])
    with prepared.connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)


def _update(model: type[models.Model], rows: Sequence[models.Model], names: Sequence[str], prepared: Prepared) -> None:
    """UPDATE the `names` fields of the rows by primary key, in one `executemany` (not `bulk_update`'s
    CASE expression per field and row)."""
    ops = prepared.connection.ops
    fields = [model._meta.get_field(name) for name in names]
    table = ops.quote_name(model._meta.db_table)
    assignments = ", ".join(f"{ops.quote_name(f.column)} = %s" for f in fields)  # type: ignore[union-attr]
    pk = ops.quote_name(model._meta.pk.column)  # type: ignore[union-attr]
    values = [[*(prepared.value(f, getattr(row, f.attname)) for f in fields), row.pk] for row in rows]  # type: ignore[union-attr, arg-type]
    with prepared.connection.cursor() as cursor:
        cursor.executemany(f"UPDATE {table} SET {assignments} WHERE {pk} = %s", values)


def _bump_by(cluster: Cluster, count: int) -> int:
    """Take `count` resourceVersions in one statement; returns the first (the row stays locked)."""
    table = connection.ops.quote_name(Cluster._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET resource_version = resource_version + %s WHERE id = %s RETURNING resource_version",
            [count, cluster.pk],
        )
        last = int(cursor.fetchone()[0])
    cluster.resource_version = last
    return last - count + 1


def _log_many(
    cluster: Cluster,
    written: Sequence[tuple[str, KubeObject, dict[str, Any] | None]],
    component: str,
    prepared: Prepared,
) -> list[dict[str, Any]]:
    """The watch-log rows of `written` (change type, row, previous body), the queue's bookkeeping,
    and the batched publication after commit; returns the changes as the stream sends them."""
    changes = [
        {
            "cluster_id": cluster.pk,
            "resource_version": row.resource_version,
            "type": change_type,
            "kind": row.kind,
            "namespace": row.namespace,
            "name": row.name,
            "body": row.body,
            "component": component,
        }
        for change_type, row, _ in written
    ]
    insert_rows(Change, changes, prepared)
    first, last = changes[0]["resource_version"], changes[-1]["resource_version"]
    if last // 1000 > (first - 1) // 1000:  # crossed a multiple of 1000, as store._log prunes
        Change.objects.filter(cluster=cluster, resource_version__lte=last - store.CHANGE_LOG_LIMIT).delete()
    _requeue_many(cluster, written)
    messages = [  # as Change.to_dict gives them
        {
            "event": change["type"],
            "kind": change["kind"],
            "object": change["body"],
            "resourceVersion": str(change["resource_version"]),
            "component": component,
        }
        for change in changes
    ]
    # the bodies as encoded for the database (SQLite: JSON text), reused for the stream
    texts = [prepared.value(Change._meta.get_field("body"), change["body"]) for change in changes]
    encoded = [text if isinstance(text, str) else None for text in texts]
    transaction.on_commit(lambda: publish_changes(cluster.pk, messages, encoded))
    return messages


def _requeue_many(cluster: Cluster, written: Sequence[tuple[str, KubeObject, dict[str, Any] | None]]) -> None:
    """`requeue_after` for each write, each distinct effect once: a bulk bind requeues the parked
    pods that depend on other pods once, not once per bound pod."""
    seen: set[tuple[str, str, bool, bool]] = set()
    for change_type, row, previous in written:
        was_bound = bool((previous or {}).get("spec", {}).get("nodeName"))
        key = (change_type, row.kind, bool(row.node_name), was_bound)
        if key in seen and row.queue_state != GATED:
            continue
        seen.add(key)
        requeue_after(cluster, change_type, row, previous)


def create_many(cluster: Cluster, bodies: Sequence[dict[str, Any]], component: str) -> list[dict[str, Any]]:
    """Store new objects (validated and defaulted) in one transaction; returns them as stored.

    Equivalent to `store.create` of each in turn; a name already taken (a generated name that
    collides) falls back to creating them one by one, so that only that one is refused."""
    if not bodies:
        return []
    prepared: list[dict[str, Any]] = []
    for body in bodies:
        body = clone(body)
        kind = body["kind"]
        meta = body.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + store._suffix()
        if not meta.get("name") or kind == "Service":  # a Service's cluster IP is allocated one by one
            return [store.create(cluster, b, component) for b in bodies]
        if kind not in store.CLUSTER_SCOPED:
            meta["namespace"] = store._namespace_of(kind, body)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", store.now_rfc3339())
        if kind in store.GENERATION_KINDS:
            meta["generation"] = 1
        prepared.append(body)
    try:
        with transaction.atomic():
            rv = _bump_by(cluster, len(prepared))
            now = time.time()
            rows = []
            for i, body in enumerate(prepared):
                body["metadata"]["resourceVersion"] = str(rv + i)
                row = KubeObject(
                    cluster=cluster,
                    kind=body["kind"],
                    namespace=store._namespace_of(body["kind"], body),
                    name=body["metadata"]["name"],
                    uid=body["metadata"]["uid"],
                    resource_version=rv + i,
                    body=body,
                    queue_ts=now + i * 1e-6,  # the queue keeps their order
                )
                store._index(row)
                rows.append(row)
            values = Prepared()
            insert_rows(KubeObject, rows, values)
            _log_many(cluster, [("ADDED", row, None) for row in rows], component, values)
    except IntegrityError:
        cluster.resource_version = (
            Cluster.objects.filter(pk=cluster.pk).values_list("resource_version", flat=True).get()
        )
        created = []
        for body in bodies:
            try:
                created.append(store.create(cluster, body, component))
            except store.AlreadyExists:
                continue
        return created
    return prepared


def patch_many(
    cluster: Cluster, kind: str, targets: Sequence[tuple[str, str, Mutation]], component: str
) -> list[dict[str, Any]]:
    """Read-modify-write objects of one kind in one transaction, in the order given; returns the
    bodies written. An object gone meanwhile, or a mutation that changes nothing, writes nothing
    (as `store.patch`, without its NotFound)."""
    if not targets:
        return []
    keys = [("" if kind in store.CLUSTER_SCOPED else (namespace or "default"), name) for namespace, name, _ in targets]
    wanted = set(keys)
    names = sorted({name for _, name in keys})
    with transaction.atomic():
        found: dict[tuple[str, str], KubeObject] = {}
        for start in range(0, len(names), 500):  # within every database's limit of query parameters
            query = KubeObject.objects.select_for_update().filter(
                cluster=cluster, kind=kind, name__in=names[start : start + 500]
            )
            found.update({(row.namespace, row.name): row for row in query if (row.namespace, row.name) in wanted})
        changed: list[tuple[KubeObject, dict[str, Any], dict[str, Any]]] = []
        for (namespace, name), (_, _, mutate) in zip(keys, targets, strict=True):
            row = found.get((namespace, name))
            if row is None:
                continue
            body = clone(row.body)
            mutate(body)
            if body == row.body:
                continue
            if kind in store.GENERATION_KINDS and body.get("spec") != row.body.get("spec"):
                body["metadata"]["generation"] = int(row.body["metadata"].get("generation") or 1) + 1
            changed.append((row, body, row.body))
        if not changed:
            return []
        rv = _bump_by(cluster, len(changed))
        for i, (row, body, _) in enumerate(changed):
            body["metadata"]["resourceVersion"] = str(rv + i)
            row.body = body
            row.resource_version = rv + i
            store._index(row)
        values = Prepared()
        _update(
            KubeObject, [row for row, _, _ in changed], ["body", "resource_version", "node_name", "priority"], values
        )
        _log_many(cluster, [("MODIFIED", row, previous) for row, _, previous in changed], component, values)
    return [body for _, body, _ in changed]
