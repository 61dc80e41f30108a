"""The app's scheduler reads every kind scheduler_core reads: volumes (PVC/PV/StorageClass/CSINode),
PodDisruptionBudgets and workloads, stored like any object and followed by the scheduler cache."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from clusterviz import services, store
from clusterviz.adapters import READ_KINDS, snapshot
from clusterviz.controllers import scheduler
from clusterviz.models import Cluster
from scheduler_core.api.loading import KINDS
from scheduler_core.explain import explain

from .conftest import node_yaml

pytestmark = pytest.mark.django_db


def put(cluster: Cluster, body: dict[str, Any]) -> None:
    """Store an object as the API stores it (kinds only the scheduler reads skip the app's admission)."""
    store.create(cluster, body, "kubectl")


def pv(name: str, claim: str, node: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "claimRef": {"namespace": "default", "name": claim},
            "local": {"path": "/mnt/disk"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
        "status": {"phase": "Bound"},
    }


def pvc(name: str, volume: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        # bound as the PV controller leaves it (upstream's binder reads the bind-completed annotation)
        "metadata": {"name": name, "namespace": "default", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "volumeName": volume,
            "resources": {"requests": {"storage": "1Gi"}},
        },
        "status": {"phase": "Bound"},
    }


def claiming_pod(name: str, claim: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
            },
        }
    )


def condition(cluster: Cluster, name: str) -> dict[str, Any]:
    body = store.get(cluster, "Pod", "default", name)
    return next(c for c in body["status"]["conditions"] if c["type"] == "PodScheduled")


def test_the_app_reads_the_kinds_of_the_core_registry() -> None:
    assert tuple(KINDS) == READ_KINDS


def test_a_pod_with_a_bound_claim_lands_on_its_volumes_node(make_cluster: Any) -> None:
    cluster = make_cluster("c1", node_yaml("node01") + "---\n" + node_yaml("node02") + "---\n" + node_yaml("node03"))
    scheduler.schedule_next(cluster)  # the cache exists before the volumes arrive: it follows them
    put(cluster, pv("pv-data", "data", "node02"))
    put(cluster, pvc("data", "pv-data"))
    services.create_from_yaml(cluster, claiming_pod("db", "data"), "kubectl")
    assert scheduler.schedule_next(cluster)
    body = store.get(cluster, "Pod", "default", "db")
    assert body["spec"].get("nodeName") == "node02", condition(cluster, "db")["message"]
    assert condition(cluster, "db")["status"] == "True"


def test_a_missing_claim_gives_upstreams_message(make_cluster: Any) -> None:
    cluster = make_cluster("c1", node_yaml("node01") + "---\n" + node_yaml("node02"))
    services.create_from_yaml(cluster, claiming_pod("db", "nope"), "kubectl")
    assert scheduler.schedule_next(cluster)
    got = condition(cluster, "db")
    assert (got["status"], got["reason"]) == ("False", "Unschedulable")
    # VolumeRestrictions' PreFilter (upstream v1.34 volumerestrictions: `persistentvolumeclaim "nope" not found`).
    # (the PostFilter part is the core's — DynamicResources' "not found" state, as upstream's message ends)
    assert got["message"].startswith('0/2 nodes are available: persistentvolumeclaim "nope" not found. ')
    expected = explain(snapshot(cluster).objects, snapshot(cluster).objects.pods[0]).result
    assert expected is not None and got["message"] == expected.message


def priority_class(name: str, value: int) -> str:
    return f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n---\n"


def bound_pod(name: str, node: str | None, priority: str, labels: dict[str, str]) -> str:
    spec: dict[str, Any] = {
        "priorityClassName": priority,
        "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "300m"}}}],
    }
    if node:
        spec["nodeName"] = node
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}
    return yaml.safe_dump(body) + "---\n"


def test_preemption_in_the_app_honours_a_disruption_budget(make_cluster: Any) -> None:
    """The core's `test_fewest_pdb_violations_is_the_first_criterion`, through the app: node1's only
    victim is the least important but its budget allows no disruption, so node2's is preempted."""
    objects = (
        priority_class("low", 0)
        + priority_class("mid", 100)
        + priority_class("high", 1000)
        + node_yaml("node1", cpu="300m")
        + "---\n"
        + node_yaml("node2", cpu="300m")
        + "---\n"
        + bound_pod("p1", "node1", "low", {"app": "foo"})
        + bound_pod("p2", "node2", "mid", {"app": "bar"})
    )
    cluster = make_cluster("c1", objects)
    scheduler.schedule_next(cluster)  # the cache is built first: the budget comes through the watch log
    put(
        cluster,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "foo"}}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
        },
    )
    services.create_from_yaml(cluster, bound_pod("p", None, "high", {}), "kubectl")
    assert scheduler.schedule_next(cluster)
    body = store.get(cluster, "Pod", "default", "p")
    assert body["status"]["nominatedNodeName"] == "node2"
    victim = store.get(cluster, "Pod", "default", "p2")
    assert victim["metadata"].get("deletionTimestamp") or victim["status"]["conditions"][-1]["type"] == (
        "DisruptionTarget"
    )
    assert not store.get(cluster, "Pod", "default", "p1")["metadata"].get("deletionTimestamp")
