"""The workload controllers through the real store (store in, store out): DaemonSet, StatefulSet,
Job, Deployment rollouts, Services/Endpoints and the paced kubelet. Driven by `runner.reconcile`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clusterviz import services, store
from clusterviz.controllers import statefulset
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster
from tests.app import changes, create, events, node_yaml

Obj = dict[str, Any]


@pytest.fixture
def cluster(db: None) -> Cluster:
    return services.create_cluster("workloads-test")


def _template(name: str, **spec: Any) -> Obj:
    return {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": name, "image": "nginx:1.27"}], **spec},
    }


def daemonset_yaml(name: str, **spec: Any) -> str:
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": _template(name, **spec)},
        }
    )


def _pods(cluster: Cluster, prefix: str = "") -> list[Obj]:
    return [p for p in store.list_objects(cluster, "Pod") if p["metadata"]["name"].startswith(prefix)]


TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


# --- DaemonSet --------------------------------------------------------------------------------


def test_daemonset_runs_one_pod_per_tolerated_node_and_says_why_it_skips(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), node_yaml("node02"), node_yaml("node03", taints=TAINT))
    create(cluster, daemonset_yaml("agent"))
    reconcile(cluster)
    pods = _pods(cluster, "agent-")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node01", "node02"]
    assert all(p["status"]["phase"] == "Running" for p in pods)
    pod = pods[0]
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [pod["spec"]["nodeName"]]}]}
        ]
    }
    keys = [(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]]
    assert keys == [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
    ds = store.get(cluster, "DaemonSet", "default", "agent")
    assert {k: ds["status"][k] for k in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady")} == {
        "desiredNumberScheduled": 2,
        "currentNumberScheduled": 2,
        "numberReady": 2,
    }
    skipped = events(cluster, "agent", "NodeNotEligible")
    assert [e["message"] for e in skipped] == ["node03: node(s) had untolerated taint {dedicated: gpu}"]


def test_daemonset_follows_taints_labels_and_new_nodes(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), node_yaml("node02"))
    create(cluster, daemonset_yaml("agent", nodeSelector={"disk": "ssd"}))
    reconcile(cluster)
    assert _pods(cluster, "agent-") == []
    services.set_label(cluster, "node01", "disk", "ssd", "kubectl")
    create(cluster, node_yaml("node03", labels={"disk": "ssd"}))
    reconcile(cluster)
    assert sorted(p["spec"]["nodeName"] for p in _pods(cluster, "agent-")) == ["node01", "node03"]
    # an untolerated NoExecute taint evicts the daemon pod; a NoSchedule one would keep it
    services.set_taint(cluster, "node03", "maintenance", "now", "NoExecute", "kubectl")
    reconcile(cluster)
    assert [p["spec"]["nodeName"] for p in _pods(cluster, "agent-")] == ["node01"]


def test_daemonset_tolerating_the_taint_runs_there_and_hostnetwork_adds_network_toleration(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", taints=TAINT))
    tolerations = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    create(cluster, daemonset_yaml("agent", tolerations=tolerations, hostNetwork=True))
    reconcile(cluster)
    [pod] = _pods(cluster, "agent-")
    assert pod["spec"]["nodeName"] == "node01"
    keys = [t["key"] for t in pod["spec"]["tolerations"]]
    assert keys[0] == "dedicated"
    assert keys[-1] == "node.kubernetes.io/network-unavailable"


# --- StatefulSet ------------------------------------------------------------------------------


def statefulset_yaml(name: str, replicas: int, claims: bool = False, **extra: Any) -> str:
    spec: Obj = {
        "replicas": replicas,
        "serviceName": name,
        "selector": {"matchLabels": {"app": name}},
        "template": _template(name),
        **extra,
    }
    if claims:
        spec["volumeClaimTemplates"] = [
            {
                "metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
        ]
    return json.dumps({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": spec})


def _pod_log(cluster: Cluster, prefix: str) -> list[tuple[str, str, str]]:
    """(change type, pod, phase) of every pod change, in order."""
    return [
        (c.type, c.name, c.body.get("status", {}).get("phase", ""))
        for c in changes(cluster)
        if c.kind == "Pod" and c.name.startswith(prefix)
    ]


def test_statefulset_creates_in_order_each_after_the_previous_is_ready(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), node_yaml("node02"))
    create(cluster, statefulset_yaml("web", 3))
    assert statefulset.sync_stateful_sets(cluster) is True
    assert [p["metadata"]["name"] for p in _pods(cluster, "web-")] == ["web-0"]
    statefulset.sync_stateful_sets(cluster)  # its status
    assert statefulset.sync_stateful_sets(cluster) is False  # web-0 is not Running and Ready yet
    assert len(_pods(cluster, "web-")) == 1
    reconcile(cluster)
    pods = _pods(cluster, "web-")
    assert [p["metadata"]["name"] for p in pods] == ["web-0", "web-1", "web-2"]
    assert [p["spec"]["hostname"] for p in pods] == ["web-0", "web-1", "web-2"]
    assert {p["spec"]["subdomain"] for p in pods} == {"web"}
    assert [p["metadata"]["labels"]["apps.kubernetes.io/pod-index"] for p in pods] == ["0", "1", "2"]
    log = _pod_log(cluster, "web-")
    added = [i for i, (kind, _, _) in enumerate(log) if kind == "ADDED"]
    running = {name: i for i, (kind, name, phase) in enumerate(log) if phase == "Running" and kind == "MODIFIED"}
    assert added[1] > running["web-0"]
    assert added[2] > running["web-1"]
    sts = store.get(cluster, "StatefulSet", "default", "web")
    assert sts["status"]["readyReplicas"] == 3
    messages = [e["message"] for e in events(cluster, "web", "SuccessfulCreate")]
    assert messages == [f"create Pod web-{i} in StatefulSet web successful" for i in range(3)]

    services.scale(cluster, "StatefulSet", "default", "web", 1, "kubectl")
    reconcile(cluster)
    assert [p["metadata"]["name"] for p in _pods(cluster, "web-")] == ["web-0"]
    deleted = [name for kind, name, _ in _pod_log(cluster, "web-") if kind == "DELETED"]
    assert deleted == ["web-2", "web-1"]


def test_statefulset_volume_claim_templates_make_one_claim_per_pod(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"))
    create(cluster, statefulset_yaml("db", 2, claims=True, podManagementPolicy="Parallel"))
    for _ in range(4):
        statefulset.sync_stateful_sets(cluster)
    claims = store.list_objects(cluster, "PersistentVolumeClaim")
    assert [c["metadata"]["name"] for c in claims] == ["www-db-0", "www-db-1"]
    assert claims[0]["metadata"]["labels"] == {"app": "db"}
    assert claims[0]["status"]["phase"] == "Pending"
    pods = _pods(cluster, "db-")
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1"]  # Parallel: no waiting
    volume = {"name": "www", "persistentVolumeClaim": {"claimName": "www-db-1"}}
    assert volume in pods[1]["spec"]["volumes"]
