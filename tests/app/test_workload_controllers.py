"""The workload controllers through the real store (store in, store out): DaemonSet, StatefulSet,
Job, Deployment rollouts, Services/Endpoints and the paced kubelet. Driven by `runner.reconcile`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clusterviz import services, store
from clusterviz.controllers.runner import reconcile
from clusterviz.models import Cluster
from tests.app import create, events, node_yaml

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
