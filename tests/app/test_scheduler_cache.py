"""The scheduler cache (clusterviz/scheduler_cache.py) stays exactly what a fresh read of the store
gives, whatever sequence of changes it follows, and rebuilds itself when it cannot follow."""

from __future__ import annotations

import contextlib
import gc
import itertools
import linecache
import logging
import sys
import threading
import time
from typing import Any

import pytest
import yaml
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.cluster_dump import dump_json
from clusterviz import imports, scheduler_cache, services, store
from clusterviz.adapters import snapshot
from clusterviz.controllers import scheduler
from clusterviz.models import Change, Cluster, KubeObject
from scheduler_core.api.loading import load_cluster
from tests import big_cluster
from tests.table_digest import digest

pytestmark = pytest.mark.django_db

NODES = ("n1", "n2", "n3", "n10")
PODS = ("a", "b", "c", "d", "e")
NAMESPACES = ("default", "team")
_slugs = itertools.count()


def assert_consistent(cluster: Cluster) -> scheduler_cache.SchedulerCache:
    cache = scheduler_cache.synced(cluster)
    fresh = snapshot(cluster)
    assert digest(cache.table()) == digest(fresh.table())
    assert {key: info.pod for key, info in cache.pods.items()} == {k: i.pod for k, i in fresh.pod_infos.items()}
    assert sorted(cache.priority_classes) == sorted(pc.metadata.name for pc in fresh.objects.priority_classes)
    # the extras `explain.build_table` attaches: the volume plugins' listers and the budgets
    expected = fresh.table()
    assert cache.table().volumes == expected.volumes
    assert cache.table().pdbs == expected.pdbs
    assert cache.rv == Cluster.objects.get(pk=cluster.pk).resource_version
    # every stored object as the controllers list it: each kind in the order its rows were created
    stored: dict[str, list[tuple[str, str, int, dict[str, Any]]]] = {}
    for row in KubeObject.objects.filter(cluster=cluster).order_by("id"):
        stored.setdefault(row.kind, []).append((row.namespace, row.name, row.resource_version, row.body))
    listed = {
        kind: [(e.namespace, e.name, e.resource_version, e.body) for e in cache.listed(kind)]
        for kind in cache.entries
        if cache.entries[kind]
    }
    assert listed == stored
    return cache


def create(cluster: Cluster, body: dict[str, Any]) -> None:
    with contextlib.suppress(store.AlreadyExists):
        services.create_from_yaml(cluster, yaml.safe_dump(body), "kubectl")


def node_body(name: str, zone: int, cpu: int, gpu: bool) -> dict[str, Any]:
    allocatable = {"cpu": str(cpu), "memory": "8Gi", "pods": "10"}
    if gpu:
        allocatable["example.com/gpu"] = "2"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"zone": f"z{zone}"}},
        "status": {"allocatable": allocatable, "images": [{"names": [f"img:{zone}"], "sizeBytes": 1000}]},
    }


def pod_body(name: str, namespace: str, node: str | None, app: int, port: bool, affinity: bool) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "img:1", "resources": {"requests": {"cpu": "100m"}}}
    if port:
        container["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spec: dict[str, Any] = {"containers": [container]}
    if node:
        spec["nodeName"] = node
    if affinity:
        term = {"labelSelector": {"matchLabels": {"app": str(app)}}, "topologyKey": "zone"}
        spec["affinity"] = {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": term}]
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": str(app)}},
        "spec": spec,
    }


def put(cluster: Cluster, body: dict[str, Any]) -> None:
    """A kind only the scheduler reads, stored as the API stores it (no admission of the app's own)."""
    with contextlib.suppress(store.AlreadyExists):
        store.create(cluster, body, "kubectl")


CLAIMS = ("data0", "data1")


def claim_body(name: str, volume: str | None, storage_class: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": storage_class,
        "resources": {"requests": {"storage": "1Gi"}},
    }
    if volume:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        spec["volumeName"] = volume
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Bound" if volume else "Pending"},
    }


def volume_body(name: str, node: str, zone: int) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": [f"z{zone}"]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": f"z{zone}"}},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "local": {"path": f"/mnt/{node}"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
        "status": {"phase": "Available"},
    }


def storage_class_body(binding: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": binding,
    }


def csi_node_body(name: str, count: int) -> dict[str, Any]:
    driver = {"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": count}}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [driver]},
    }


def pdb_body(app: int, allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"pdb{app}", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": str(app)}}},
        "status": {"disruptionsAllowed": allowed},
    }


def service_body(app: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"svc{app}", "namespace": "default"},
        "spec": {"selector": {"app": str(app)}, "ports": [{"port": 80}]},
    }


def statefulset_body(app: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": f"rs{app}", "namespace": "default"},  # the name a ReplicaSet may have, too
        "spec": {
            "replicas": 0,
            "serviceName": f"svc{app}",
            "selector": {"matchLabels": {"app": str(app)}},
            "template": {
                "metadata": {"labels": {"app": str(app)}},
                "spec": {"containers": [{"name": "c", "image": "img:1"}]},
            },
        },
    }


def patch(cluster: Cluster, kind: str, namespace: str, name: str, mutate: Any) -> None:
    with contextlib.suppress(store.NotFound):
        store.patch(cluster, kind, namespace, name, mutate, "kubectl")


def delete(cluster: Cluster, kind: str, namespace: str, name: str) -> None:
    with contextlib.suppress(store.NotFound):
        store.delete(cluster, kind, namespace, name, "kubectl")


def apply(cluster: Cluster, op: tuple[Any, ...]) -> None:
    match op:
        case ("node", name, zone, cpu, gpu):
            create(cluster, node_body(name, zone, cpu, gpu))
        case ("delete-node", name):
            delete(cluster, "Node", "", name)
        case ("relabel", name, zone):
            patch(
                cluster,
                "Node",
                "",
                name,
                lambda b: b["metadata"].setdefault("labels", {}).update(zone=f"z{zone}", extra=str(zone)),
            )
        case ("taint", name, on):
            patch(
                cluster,
                "Node",
                "",
                name,
                lambda b: b["spec"].update(taints=[{"key": "k", "effect": "NoSchedule"}] if on else []),
            )
        case ("resize", name, cpu, gpu):

            def resize(body: dict[str, Any]) -> None:
                alloc = body["status"]["allocatable"]
                alloc["cpu"] = str(cpu)
                if gpu:
                    alloc["example.com/gpu"] = "4"
                else:
                    alloc.pop("example.com/gpu", None)
                body["status"]["images"] = [{"names": [f"img:{cpu}"], "sizeBytes": 5}]

            patch(cluster, "Node", "", name, resize)
        case ("pod", name, namespace, node, app, port, affinity):
            create(cluster, pod_body(name, namespace, node, app, port, affinity))
        case ("delete-pod", name, namespace):
            delete(cluster, "Pod", namespace, name)
        case ("bind", name, namespace, node):
            patch(cluster, "Pod", namespace, name, lambda b: b["spec"].update(nodeName=node))
        case ("phase", name, namespace, phase):
            patch(cluster, "Pod", namespace, name, lambda b: b.setdefault("status", {}).update(phase=phase))
        case ("nominate", name, namespace, node):
            patch(cluster, "Pod", namespace, name, lambda b: b.setdefault("status", {}).update(nominatedNodeName=node))
        case ("terminate", name, namespace):
            patch(
                cluster,
                "Pod",
                namespace,
                name,
                lambda b: b["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z"),
            )
        case ("relabel-pod", name, namespace, app):
            patch(cluster, "Pod", namespace, name, lambda b: b["metadata"]["labels"].update(app=str(app)))
        case ("namespace", labelled):
            ns = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "team", "labels": {"tier": str(labelled)}},
            }
            create(cluster, ns)
            patch(cluster, "Namespace", "", "team", lambda b: b["metadata"].update(labels={"tier": str(labelled)}))
        case ("delete-namespace",):
            delete(cluster, "Namespace", "", "team")
        case ("replicaset", app):
            rs = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": f"rs{app}", "namespace": "default"},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": str(app)}},
                    "template": {
                        "metadata": {"labels": {"app": str(app)}},
                        "spec": {"containers": [{"name": "c", "image": "img:1"}]},
                    },
                },
            }
            create(cluster, rs)
        case ("delete-replicaset", app):
            delete(cluster, "ReplicaSet", "default", f"rs{app}")
        case ("claim", name, volume, storage_class):
            put(cluster, claim_body(name, volume, storage_class))
            patch(
                cluster,
                "PersistentVolumeClaim",
                "default",
                name,
                lambda b: b.update(claim_body(name, volume, storage_class)),
            )
        case ("volume", name, node, zone):
            put(cluster, volume_body(name, node, zone))
            patch(cluster, "PersistentVolume", "", name, lambda b: b.update(volume_body(name, node, zone)))
        case ("storage-class", binding):
            put(cluster, storage_class_body(binding))
            patch(cluster, "StorageClass", "", "local", lambda b: b.update(volumeBindingMode=binding))
        case ("csi-node", name, count):
            put(cluster, csi_node_body(name, count))
            patch(cluster, "CSINode", "", name, lambda b: b.update(csi_node_body(name, count)))
        case ("pdb", app, allowed):
            put(cluster, pdb_body(app, allowed))
            patch(
                cluster,
                "PodDisruptionBudget",
                "default",
                f"pdb{app}",
                lambda b: b.update(status={"disruptionsAllowed": allowed}),
            )
        case ("service", app):
            put(cluster, service_body(app))
        case ("statefulset", app):
            put(cluster, statefulset_body(app))
        case ("claim-pod", name, claim, node):
            body = pod_body(name, "default", node, 0, False, False)
            body["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
            create(cluster, body)
        case ("delete-kind", kind, namespace, name):
            delete(cluster, kind, namespace, name)
        case ("cycle",):
            scheduler.schedule_next(cluster)
        case ("check",):
            assert_consistent(cluster)


nodes = st.sampled_from(NODES)
pods = st.sampled_from(PODS)
namespaces = st.sampled_from(NAMESPACES)
claims = st.sampled_from(CLAIMS)
ops = st.one_of(
    st.tuples(st.just("node"), nodes, st.integers(0, 2), st.integers(1, 4), st.booleans()),
    st.tuples(st.just("delete-node"), nodes),
    st.tuples(st.just("relabel"), nodes, st.integers(0, 3)),
    st.tuples(st.just("taint"), nodes, st.booleans()),
    st.tuples(st.just("resize"), nodes, st.integers(1, 4), st.booleans()),
    st.tuples(
        st.just("pod"), pods, namespaces, st.one_of(st.none(), nodes), st.integers(0, 2), st.booleans(), st.booleans()
    ),
    st.tuples(st.just("delete-pod"), pods, namespaces),
    st.tuples(st.just("bind"), pods, namespaces, nodes),
    st.tuples(st.just("phase"), pods, namespaces, st.sampled_from(["Running", "Succeeded", "Failed"])),
    st.tuples(st.just("nominate"), pods, namespaces, nodes),
    st.tuples(st.just("terminate"), pods, namespaces),
    st.tuples(st.just("relabel-pod"), pods, namespaces, st.integers(0, 2)),
    st.tuples(st.just("namespace"), st.integers(0, 1)),
    st.tuples(st.just("delete-namespace")),
    st.tuples(st.just("replicaset"), st.integers(0, 2)),
    st.tuples(st.just("delete-replicaset"), st.integers(0, 2)),
    st.tuples(st.just("cycle")),
    st.tuples(st.just("check")),
    # the kinds only the scheduler reads: volumes, budgets, Services and StatefulSets
    st.tuples(st.just("claim"), claims, st.one_of(st.none(), st.sampled_from(["pv0", "pv1"])), st.just("local")),
    st.tuples(st.just("volume"), st.sampled_from(["pv0", "pv1"]), nodes, st.integers(0, 2)),
    st.tuples(st.just("storage-class"), st.sampled_from(["Immediate", "WaitForFirstConsumer"])),
    st.tuples(st.just("csi-node"), nodes, st.integers(0, 3)),
    st.tuples(st.just("pdb"), st.integers(0, 2), st.integers(0, 1)),
    st.tuples(st.just("service"), st.integers(0, 2)),
    st.tuples(st.just("statefulset"), st.integers(0, 2)),
    st.tuples(st.just("claim-pod"), pods, claims, st.one_of(st.none(), nodes)),
    st.tuples(
        st.just("delete-kind"),
        st.sampled_from(
            [
                ("PersistentVolumeClaim", "default", "data0"),
                ("PersistentVolume", "", "pv0"),
                ("StorageClass", "", "local"),
                ("CSINode", "", "n1"),
                ("PodDisruptionBudget", "default", "pdb0"),
                ("Service", "default", "svc0"),
                ("StatefulSet", "default", "rs0"),
            ]
        ),
    ).map(lambda op: (op[0], *op[1])),
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(st.lists(ops, min_size=1, max_size=40))
def test_the_cache_equals_a_fresh_snapshot_after_any_changes(changes: list[tuple[Any, ...]]) -> None:
    cluster = services.create_cluster(f"c{next(_slugs)}")
    scheduler_cache.synced(cluster)  # built first, then follows every change
    for op in changes:
        apply(cluster, op)
    assert_consistent(cluster)


def test_pod_changes_do_not_rebuild_the_columns() -> None:
    cluster = services.create_cluster("c1")
    for name in NODES:
        apply(cluster, ("node", name, 0, 4, False))
    cache = assert_consistent(cluster)
    for k in range(20):
        apply(cluster, ("pod", f"p{k}", "default", None, k % 3, False, k % 2 == 0))
        apply(cluster, ("cycle",))
    apply(cluster, ("relabel", "n2", 3))
    apply(cluster, ("delete-pod", "p3", "default"))
    assert assert_consistent(cluster) is cache
    assert cache.table_builds == 1 and cache.generation > 40
    apply(cluster, ("node", "n5", 1, 2, True))  # nodes added and removed in place, too
    apply(cluster, ("delete-node", "n1"))
    apply(cluster, ("node", "n1", 2, 4, False))  # back, with the pods still bound to it
    assert assert_consistent(cluster).table_builds == 1
    for op in (  # the other kinds refresh only what they feed
        ("storage-class", "WaitForFirstConsumer"),
        ("volume", "pv0", "n2", 1),
        ("claim", "data0", None, "local"),
        ("claim-pod", "q", "data0", None),
        ("cycle",),
        ("pdb", 1, 0),
        ("service", 1),
        ("statefulset", 2),
        ("csi-node", "n2", 1),
    ):
        apply(cluster, op)
    assert assert_consistent(cluster).table_builds == 1


def test_a_gap_in_the_watch_log_rebuilds_the_cache() -> None:
    cluster = services.create_cluster("c1")
    apply(cluster, ("node", "n1", 0, 4, False))
    cache = assert_consistent(cluster)
    apply(cluster, ("node", "n2", 0, 4, False))
    Change.objects.filter(cluster=cluster).delete()  # pruned past where the cache stands
    assert assert_consistent(cluster) is not cache


def test_an_import_into_an_emptied_cluster_rebuilds_the_cache() -> None:
    cluster = services.create_cluster("c1")
    apply(cluster, ("node", "n1", 0, 4, False))
    cache = assert_consistent(cluster)
    delete(cluster, "Node", "", "n1")
    assert assert_consistent(cluster) is cache
    imports.run(imports.new_job("c1", "dump.json"), dump_json(5, 2))
    after = assert_consistent(cluster)
    assert after is not cache and after.table().n == 5 and len(after.pods) == 10


def test_forget_and_another_cluster_under_the_same_id_rebuild() -> None:
    cluster = services.create_cluster("c1")
    cache = scheduler_cache.synced(cluster)
    scheduler_cache.forget(cluster.pk)
    assert scheduler_cache.synced(cluster) is not cache
    cache = scheduler_cache.synced(cluster)
    other = Cluster.objects.get(pk=cluster.pk)
    other.created_at = other.created_at.replace(year=2000)  # what a recycled id looks like
    assert scheduler_cache.synced(other) is not cache


def test_pods_keep_the_order_a_fresh_read_gives_them() -> None:
    cluster = services.create_cluster("c1")
    scheduler_cache.synced(cluster)
    apply(cluster, ("node", "n1", 0, 4, False))
    for name, namespace in (("d", "default"), ("b", "team"), ("a", "default"), ("c", "default")):
        apply(cluster, ("pod", name, namespace, "n1", 0, False, False))
    for name in ("e", "a"):
        apply(cluster, ("pod", name, "team", None, 0, False, False))
        apply(cluster, ("nominate", name, "team", "n1"))
    cache = assert_consistent(cluster)
    assert [info.key for info in cache.table().pods[0]] == ["default/a", "default/c", "default/d", "team/b"]
    assert [info.key for info in cache.table().nominated[0]] == ["team/a", "team/e"]


def test_a_what_if_on_the_cache_equals_one_on_a_fresh_read() -> None:
    from scheduler_core.api.loading import load_pod
    from scheduler_core.explain import explain, result_to_json

    cluster = services.create_cluster("c1")
    for k, name in enumerate(NODES):
        apply(cluster, ("node", name, k % 2, 1 + k, k == 2))
    apply(cluster, ("taint", "n2", True))
    for k in range(8):
        apply(cluster, ("pod", f"p{k}", NAMESPACES[k % 2], NODES[k % 4], k % 3, k == 1, k % 2 == 0))
    scheduler_cache.synced(cluster)
    apply(cluster, ("resize", "n3", 1, False))
    apply(cluster, ("delete-pod", "p2", "default"))
    text = yaml.safe_dump(pod_body("what-if", "default", None, 1, True, True))
    fresh = snapshot(cluster)
    expected = result_to_json(explain(fresh.objects, load_pod(text, "pod.yaml", {}, {}), seed=3))
    got = services.explain_pod(cluster, text, seed=3)
    got.pop("events")
    assert got == expected


@pytest.mark.django_db(transaction=True)
def test_the_runner_keeps_a_cache_that_follows_the_log_and_drops_it_when_it_loses_the_lease(
    make_cluster: Any,
) -> None:
    import asyncio

    from clusterviz.controllers.runner import ClusterRunner, acquire_lease, release_lease

    from .conftest import node_yaml

    cluster = make_cluster("c1", node_yaml("n1"))
    runner = ClusterRunner(cluster.pk)
    kept = scheduler_cache.synced(cluster)  # built before this process drives (the stream, a what-if)
    assert acquire_lease(cluster.pk, owner="another-process")
    services.create_from_yaml(cluster, node_yaml("n2"), "kubectl")  # while the other process drives
    release_lease(cluster.pk, owner="another-process")
    asyncio.run(runner._drive())  # takes the lease: no second read of the cluster, the log brings n2
    assert runner.holding
    assert assert_consistent(cluster) is kept and kept.table().names == ["n1", "n2"]
    release_lease(cluster.pk)
    assert acquire_lease(cluster.pk, owner="another-process")
    asyncio.run(runner._drive())  # lost it: the view would go stale while the other one drives
    assert not runner.holding and cluster.pk not in scheduler_cache._caches
    release_lease(cluster.pk, owner="another-process")


def test_objects_read_at_build_and_followed_after_keep_their_creation_order() -> None:
    """A cache built on existing rows lists them, and those created later, as `order_by("id")` does."""
    cluster = services.create_cluster("c-order")
    for name in ("n10", "n1", "n2"):
        apply(cluster, ("node", name, 0, 4, False))
    for name in ("c", "a", "b"):
        apply(cluster, ("pod", name, "default", None, 0, False, False))
    scheduler_cache.forget(cluster.pk)
    assert_consistent(cluster)  # built from the rows
    apply(cluster, ("delete-pod", "c", "default"))
    apply(cluster, ("pod", "d", "default", None, 0, False, False))
    apply(cluster, ("pod", "c", "default", None, 0, False, False))  # back: created last now
    apply(cluster, ("delete-node", "n10"))
    apply(cluster, ("node", "n0", 0, 4, False))
    cache = assert_consistent(cluster)  # followed from the log
    assert [e.name for e in cache.listed("Pod")] == ["a", "b", "d", "c"]
    assert [e.name for e in cache.listed("Node")] == ["n1", "n2", "n0"]


def rich_pod(name: str, node: str) -> dict[str, Any]:
    """A pod as a live cluster's dump has it: what the scheduler's reading drops (`pruning.prune`) included."""
    body = big_cluster.pod_body(7, node)
    body["metadata"]["name"] = name
    body["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}" * 600, "team": "a"}
    body["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    spec = body["spec"]
    spec["serviceAccountName"] = "default"
    spec["initContainers"] = [{"name": "init", "image": "busybox", "command": ["true"], "env": [{"name": "A"}]}]
    spec["containers"][0]["env"] = [{"name": "B", "value": "1"}]
    spec["containers"][0]["volumeMounts"] = [{"name": "config", "mountPath": "/etc/app"}]
    spec["volumes"] = [{"name": "config", "configMap": {"name": "app"}}, {"name": "scratch", "emptyDir": {}}]
    body["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True"})
    return body


def test_the_cache_reads_the_objects_as_the_core_loader_reads_a_snapshot_and_leaves_the_rows_alone() -> None:
    cluster = services.create_cluster("c-rich")
    nodes = [big_cluster.node_body(i) for i in range(3)]
    for body in nodes:
        create(cluster, body)
    for i in range(4):
        create(cluster, big_cluster.pod_body(i, nodes[i % 3]["metadata"]["name"]))
    create(cluster, rich_pod("rich", nodes[0]["metadata"]["name"]))
    stored = {row.name: row.body for row in KubeObject.objects.filter(cluster=cluster)}
    scheduler_cache.forget(cluster.pk)
    cache = assert_consistent(cluster)  # built from the rows, which stay as they were (`listed == stored`)
    assert {e.name: e.body for kind in ("Node", "Pod") for e in cache.listed(kind)} == stored
    loaded = load_cluster(services.snapshot_yaml(cluster), "snapshot.yaml")
    assert len(loaded.nodes) == 3 and len(loaded.pods) == 5
    assert {node.name: node for node in loaded.nodes} == cache.nodes
    assert {pod.key: pod for pod in loaded.pods} == {key: info.pod for key, info in cache.pods.items()}
    rich = cache.pods["default/rich"].pod
    names = [v.name for v in rich.spec.volumes]  # then the ServiceAccount admission plugin's token volume
    assert names[:2] == ["config", "scratch"] and len(names) == 3 and names[2].startswith("kube-api-access-")
    assert "kubectl.kubernetes.io/last-applied-configuration" not in rich.metadata.annotations


@pytest.mark.django_db(transaction=True)
def test_callers_that_come_while_the_cache_is_built_wait_for_that_one_build(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = services.create_cluster("c-once")
    for name in NODES:
        apply(cluster, ("node", name, 0, 4, False))
    scheduler_cache.forget(cluster.pk)
    got: list[scheduler_cache.SchedulerCache] = []

    def demand() -> None:
        try:
            got.append(scheduler_cache.synced(cluster))
        finally:
            connection.close()

    caplog.set_level(logging.INFO, logger="clusterviz.scheduler_cache")
    callers = [threading.Thread(target=demand) for _ in range(3)]
    with scheduler_cache._build_lock(cluster.pk):  # as if a build were under way
        for caller in callers:
            caller.start()
        deadline = time.monotonic() + 30
        while not all(_waits_for_the_build(sys._current_frames().get(caller.ident)) for caller in callers):
            assert time.monotonic() < deadline, "the callers never reached the build"
            time.sleep(0.01)
    for caller in callers:
        caller.join()
    assert scheduler_cache.synced(cluster) is got[0]
    assert len(got) == 3 and got[0] is got[1] is got[2] and got[0].table().n == len(NODES)
    assert len([r for r in caplog.records if "scheduler cache built" in r.getMessage()]) == 1


def _waits_for_the_build(frame: Any) -> bool:
    """Whether a thread stands in `synced`, at the build lock."""
    return (
        frame is not None
        and frame.f_code is scheduler_cache.synced.__code__
        and "_build_lock" in (linecache.getline(frame.f_code.co_filename, frame.f_lineno))
    )


def test_a_large_cluster_is_read_with_the_collector_paused_and_frozen_after(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = services.create_cluster("c-large")
    for name in NODES:
        apply(cluster, ("node", name, 0, 4, False))
    apply(cluster, ("pod", "a", "default", "n1", 0, False, False))
    monkeypatch.setattr(scheduler_cache, "FREEZE_ABOVE", 3)  # "large"
    scheduler_cache.forget(cluster.pk)
    frozen = gc.get_freeze_count()
    try:
        cache = assert_consistent(cluster)
        assert gc.isenabled()  # back on once the build ended
        assert gc.get_freeze_count() > frozen  # the cache (and what else lived then) out of its reach
        apply(cluster, ("pod", "b", "default", "n2", 0, False, False))  # and it follows the log as before
        assert assert_consistent(cluster) is cache
    finally:
        gc.unfreeze()
