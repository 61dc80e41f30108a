"""The statements every write and every control-loop step runs, as SQL built once per database vendor.

The ORM compiles each statement anew on every call: about half a millisecond to find one object by
its name, which SQLite then answers in 15 µs. A presenter's action with its control-loop follow-ups
makes some 20 such statements (`python bench/control_loop_cpu.py --queries N`), so compiling them was
most of the server's CPU under load. These are the same statements the ORM wrote (the same columns,
conditions and order), with values adapted by the backend as the ORM adapts them (`adapt_json_value`);
everything else stays with the ORM.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import connection
from django.db.models import JSONField, Model

from .models import Change, Cluster, KubeObject

__all__ = [
    "activate_parked",
    "delete_object",
    "find_cluster",
    "find_object",
    "insert_change",
    "insert_object",
    "next_cycle",
    "parked_pods",
    "queued_pods",
    "save_object",
]


@functools.cache
def _statements(vendor: str) -> dict[str, Any]:
    """The SQL of each statement for `vendor` (quoted names, `%s` placeholders)."""
    q = connection.ops.quote_name
    fields = KubeObject._meta.concrete_fields
    columns = ", ".join(q(f.column) for f in fields)
    objects, changes = q(KubeObject._meta.db_table), q(Change._meta.db_table)
    by_name = f"{q('cluster_id')} = %s AND {q('kind')} = %s AND {q('namespace')} = %s AND {q('name')} = %s"
    pods = f"{q('cluster_id')} = %s AND {q('kind')} = 'Pod'"
    inserted = [f for f in fields if not f.primary_key]
    change_fields = [f for f in Change._meta.concrete_fields if not f.primary_key]
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    return {
        "object_reader": _Reader(KubeObject),
        "cluster_reader": _Reader(Cluster),
        "next_cycle": (
            f"UPDATE {q(Cluster._meta.db_table)} SET {q('cycle')} = {q('cycle')} + 1 WHERE {q('id')} = %s "
            f"RETURNING {q('cycle')}"
        ),
        "cluster": (
            f"SELECT {', '.join(q(f.column) for f in Cluster._meta.concrete_fields)} "
            f"FROM {q(Cluster._meta.db_table)} WHERE {q('id')} = %s"
        ),
        "inserted": [(f.attname, isinstance(f, JSONField)) for f in inserted],
        "change_fields": [(f.attname, isinstance(f, JSONField)) for f in change_fields],
        "find": f"SELECT {columns} FROM {objects} WHERE {by_name}",
        "find_locked": f"SELECT {columns} FROM {objects} WHERE {by_name}{lock}",
        "insert": (
            f"INSERT INTO {objects} ({', '.join(q(f.column) for f in inserted)}) "
            f"VALUES ({', '.join(['%s'] * len(inserted))}) RETURNING {q('id')}"
        ),
        "save": (
            f"UPDATE {objects} SET {q('body')} = %s, {q('resource_version')} = %s, {q('node_name')} = %s, "
            f"{q('priority')} = %s WHERE {q('id')} = %s"
        ),
        "delete": f"DELETE FROM {objects} WHERE {q('id')} = %s",
        "change": (
            f"INSERT INTO {changes} ({', '.join(q(f.column) for f in change_fields)}) "
            f"VALUES ({', '.join(['%s'] * len(change_fields))})"
        ),
        # scheduling_queue: unbound pods of the active queue (and parked leftovers), in queue order
        "queued": (
            f"SELECT {columns} FROM {objects} WHERE {pods} AND {q('node_name')} = '' AND "
            f"({q('queue_state')} = '' OR ({q('queue_state')} = 'unschedulable' AND {q('queue_ts')} < %s)) "
            f"ORDER BY {q('priority')} DESC, {q('queue_ts')} ASC, {q('id')} ASC"
        ),
        "parked": f"SELECT {columns} FROM {objects} WHERE {pods} AND {q('queue_state')} = 'unschedulable'",
        "activate_parked": (
            f"UPDATE {objects} SET {q('queue_state')} = '', {q('queue_ts')} = %s WHERE {pods} "
            f"AND {q('queue_state')} = 'unschedulable'"
        ),
    }


def _sql() -> dict[str, Any]:
    return _statements(connection.vendor)


def _json(value: Any) -> Any:
    """A JSON column's value as the backend takes it (text for SQLite, Jsonb for PostgreSQL)."""
    return connection.ops.adapt_json_value(value, None)


def _values(obj: Any, fields: list[tuple[str, bool]], body: Any = None) -> list[Any]:
    """The values of `fields` of a model instance, as the backend takes them (`body`: the `body`
    column's, already adapted)."""
    return [
        (body if attname == "body" and body is not None else _json(getattr(obj, attname)))
        if is_json
        else getattr(obj, attname)
        for attname, is_json in fields
    ]


class _Reader:
    """Model instances from rows of all its concrete columns, converted as the ORM converts them
    (the backend's and each field's `from_db_value`: JSON decoded, SQLite's text datetimes parsed)."""

    def __init__(self, model: type[Model]) -> None:
        self.model = model
        table = model._meta.db_table
        self.attnames = [f.attname for f in model._meta.concrete_fields]
        self.converters: list[tuple[int, list[Any], Any]] = []
        for i, f in enumerate(model._meta.concrete_fields):
            column = f.get_col(table)
            found = connection.ops.get_db_converters(column) + f.get_db_converters(connection)
            if found:
                self.converters.append((i, found, column))

    def read(self, rows: list[tuple[Any, ...]]) -> list[Any]:
        out = []
        for row in rows:
            values = list(row)
            for i, converters, column in self.converters:
                for convert in converters:
                    values[i] = convert(values[i], column, connection)
            out.append(self.model.from_db(connection.alias, self.attnames, values))
        return out


def _select(statement: str, params: list[Any], reader: str = "object_reader") -> list[Any]:
    sql = _sql()
    with connection.cursor() as cursor:
        cursor.execute(sql[statement], params)
        return sql[reader].read(cursor.fetchall())  # type: ignore[no-any-return]


def find_cluster(pk: int) -> Cluster:
    """`Cluster.objects.get(pk=pk)`."""
    found = _select("cluster", [pk], "cluster_reader")
    if not found:
        raise Cluster.DoesNotExist(f"cluster {pk} is gone")
    return found[0]  # type: ignore[no-any-return]


def next_cycle(cluster: Cluster) -> int:
    """Count one more scheduling cycle of the cluster, in the database (another process, or a stale
    Cluster object, may have run cycles too); returns its number."""
    with connection.cursor() as cursor:
        cursor.execute(_sql()["next_cycle"], [cluster.pk])
        cluster.cycle = int(cursor.fetchone()[0])
    return cluster.cycle


def find_object(cluster: Cluster, kind: str, namespace: str, name: str, lock: bool = False) -> KubeObject | None:
    """The row of one object (locked for the transaction where the database locks rows), or None."""
    rows = _select("find_locked" if lock else "find", [cluster.pk, kind, namespace, name])
    return rows[0] if rows else None


def insert_object(row: KubeObject) -> Any:
    """INSERT a new row (sets its id); IntegrityError when the name is taken. Returns the body as the
    backend took it (for `insert_change`: the body is encoded once)."""
    body = _json(row.body)
    with connection.cursor() as cursor:
        cursor.execute(_sql()["insert"], _values(row, _sql()["inserted"], body))
        row.pk = cursor.fetchone()[0]
    row._state.adding = False
    row._state.db = connection.alias
    return body


def save_object(row: KubeObject) -> Any:
    """UPDATE a row's body, resourceVersion and the columns indexed from the body; returns the body
    as the backend took it."""
    body = _json(row.body)
    with connection.cursor() as cursor:
        cursor.execute(_sql()["save"], [body, row.resource_version, row.node_name, row.priority, row.pk])
    return body


def delete_object(row: KubeObject) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_sql()["delete"], [row.pk])


def insert_change(change: Change, body: Any = None) -> None:
    """Append a change to the watch log (`body`: its body as `insert_object` or `save_object` returned
    it, when it is the row's)."""
    with connection.cursor() as cursor:
        cursor.execute(_sql()["change"], _values(change, _sql()["change_fields"], body))


def queued_pods(cluster: Cluster, leftover_before: float) -> list[KubeObject]:
    """Unbound pods of the active queue, and parked ones since before `leftover_before`, in queue order."""
    return _select("queued", [cluster.pk, leftover_before])


def parked_pods(cluster: Cluster) -> list[KubeObject]:
    return _select("parked", [cluster.pk])


def activate_parked(cluster: Cluster, now: float) -> None:
    """Every parked pod back to the active queue, with a fresh queue timestamp."""
    with connection.cursor() as cursor:
        cursor.execute(_sql()["activate_parked"], [now, cluster.pk])
