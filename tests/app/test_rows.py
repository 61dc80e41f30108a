"""The store's statements as SQL (clusterviz/rows.py) read and write what the ORM reads and writes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.db.models import Q

from clusterviz import rows, services, store
from clusterviz.models import Change, Cluster, KubeObject
from clusterviz.scheduling_queue import MAX_PARKED_SECONDS, UNSCHEDULABLE, active_unbound_pods

from .servers import Processes, django_script, prepare_cluster, server_env, start_postgres


def _fields(obj: Any) -> dict[str, Any]:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def _pod(name: str, priority: int = 0, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}], "priority": priority}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"ü": "ß"}}, "spec": spec}


@pytest.mark.django_db
def test_rows_are_read_as_the_orm_reads_them() -> None:
    cluster = services.create_cluster("rows")
    cluster.presenter_view = {"tab": "why", "cycle": 3}
    cluster.save()
    store.create(cluster, _pod("a", priority=5), "test")
    found = rows.find_object(cluster, "Pod", "default", "a")
    expected = KubeObject.objects.get(cluster=cluster, kind="Pod", name="a")
    assert found is not None and _fields(found) == _fields(expected)
    assert found.body["metadata"]["labels"] == {"ü": "ß"}  # decoded JSON, not text
    assert rows.find_object(cluster, "Pod", "default", "missing") is None
    assert rows.find_object(cluster, "Pod", "other", "a") is None
    read = rows.find_cluster(cluster.pk)
    orm = Cluster.objects.get(pk=cluster.pk)
    assert _fields(read) == _fields(orm)
    assert type(read.created_at) is type(orm.created_at) and read.created_at.tzinfo is not None
    with pytest.raises(Cluster.DoesNotExist):
        rows.find_cluster(cluster.pk + 1000)


@pytest.mark.django_db
def test_writes_land_as_the_orm_would_store_them() -> None:
    cluster = services.create_cluster("rows")
    body = store.create(cluster, _pod("a"), "test")
    row = KubeObject.objects.get(cluster=cluster, name="a")
    assert row.body == body and row.resource_version == int(body["metadata"]["resourceVersion"])
    store.patch(cluster, "Pod", "default", "a", lambda b: b["spec"].update(nodeName="n1", priority=7), "test")
    row.refresh_from_db()
    assert (row.node_name, row.priority, row.body["spec"]["nodeName"]) == ("n1", 7, "n1")
    change = Change.objects.filter(cluster=cluster).order_by("resource_version").last()
    assert change is not None and (change.type, change.body) == ("MODIFIED", row.body)
    store.delete(cluster, "Pod", "default", "a", "test")
    assert not KubeObject.objects.filter(cluster=cluster, name="a").exists()
    with pytest.raises(IntegrityError), transaction.atomic():  # the unique name, as the ORM's insert
        first = KubeObject(cluster=cluster, kind="Pod", namespace="default", name="b", uid="1", resource_version=1)
        first.body = {}
        rows.insert_object(first)
        second = KubeObject(cluster=cluster, kind="Pod", namespace="default", name="b", uid="2", resource_version=2)
        second.body = {}
        rows.insert_object(second)


@pytest.mark.django_db
def test_the_queue_reads_in_the_orms_order() -> None:
    cluster = services.create_cluster("rows")
    for name, priority in (("low", 0), ("high", 10), ("mid", 5), ("low2", 0)):
        store.create(cluster, _pod(name, priority), "test")
    store.create(cluster, _pod("bound", 100, node="n1"), "test")
    stale = time.time() - MAX_PARKED_SECONDS - 1
    KubeObject.objects.filter(name="mid").update(queue_state=UNSCHEDULABLE, queue_ts=stale)
    KubeObject.objects.filter(name="low2").update(queue_state=UNSCHEDULABLE, queue_ts=time.time())
    orm = list(
        KubeObject.objects.filter(cluster=cluster, kind="Pod", node_name="")
        .filter(Q(queue_state="") | Q(queue_state=UNSCHEDULABLE, queue_ts__lt=time.time() - MAX_PARKED_SECONDS))
        .order_by("-priority", "queue_ts", "id")
    )
    assert [r.name for r in rows.queued_pods(cluster, time.time() - MAX_PARKED_SECONDS)] == [r.name for r in orm]
    assert [r.name for r in orm] == ["high", "mid", "low"]
    assert [r.name for r in rows.parked_pods(cluster)] == ["mid", "low2"]
    assert [r.name for r in active_unbound_pods(cluster)] == ["high", "mid", "low"]  # the leftover flushed
    assert KubeObject.objects.get(name="mid").queue_state == ""
    rows.activate_parked(cluster, time.time())
    assert not KubeObject.objects.filter(cluster=cluster, queue_state=UNSCHEDULABLE).exists()


@pytest.mark.slow
def test_the_statements_on_postgresql(processes: Processes, tmp_path: Path) -> None:
    """The same statements on PostgreSQL (jsonb, FOR UPDATE, RETURNING), compared with the ORM there."""
    env = server_env(start_postgres(processes))
    prepare_cluster(env, "pg")
    out = django_script(
        env,
        "from django.db import transaction\n"
        "from clusterviz import rows, store\n"
        "from clusterviz.models import Change, Cluster, KubeObject\n"
        "c = Cluster.objects.get(slug='pg')\n"
        "fields = lambda o: {f.attname: getattr(o, f.attname) for f in type(o)._meta.concrete_fields}\n"
        "pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p', 'labels': {'ü': 'ß'}},"
        " 'spec': {'containers': [{'name': 'c', 'image': 'nginx'}]}}\n"
        "store.create(c, pod, 'test')\n"
        "store.patch(c, 'Pod', 'default', 'p', lambda b: b['spec'].update(nodeName='n1'), 'test')\n"
        "with transaction.atomic():\n"
        "    found = rows.find_object(c, 'Pod', 'default', 'p', lock=True)\n"
        "orm = KubeObject.objects.get(cluster=c, name='p')\n"
        "assert fields(found) == fields(orm), (fields(found), fields(orm))\n"
        "assert orm.node_name == 'n1' and orm.body['metadata']['labels'] == {'ü': 'ß'}\n"
        "assert fields(rows.find_cluster(c.pk)) == fields(Cluster.objects.get(pk=c.pk))\n"
        "last = Change.objects.filter(cluster=c).order_by('resource_version').last()\n"
        "assert last.body == orm.body, last.body\n"
        "store.delete(c, 'Pod', 'default', 'p', 'test')\n"
        "assert not KubeObject.objects.filter(cluster=c, name='p').exists()\n"
        "print('ok')\n",
    )
    assert out.strip().endswith("ok"), out
