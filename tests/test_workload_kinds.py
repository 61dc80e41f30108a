"""Every workload kind the scheduler sees through pods, read from a real `kubectl get ... -o json` dump.

Upstream: pkg/scheduler/framework/plugins/helper/spread.go `DefaultSelector` (Services, RCs, RSs and
StatefulSets; a Deployment, Job or DaemonSet adds nothing) and spread_test.go `TestGetPodServices`;
the DaemonSet controller's per-node `matchFields` affinity (pkg/controller/daemon/util
`ReplaceDaemonSetPodNodeNameNodeAffinity`) and its tolerations (`AddOrUpdateDaemonPodTolerations`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.__main__ import main
from scheduler_core.api.loading import InputError, load_cluster
from scheduler_core.api.objects import Pod
from scheduler_core.api.workloads import WorkloadIndex, WorkloadRef
from scheduler_core.explain import build_table, explain, format_text, result_to_json
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.pod_topology_spread.common import default_selector

DS_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def owner(kind: str, name: str, api_version: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"{name}-uid", "controller": True}


def workload(kind: str, name: str, selector: dict[str, Any], api_version: str = "apps/v1", **meta: Any) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "test", "uid": f"{name}-uid", **meta},
        "spec": {"selector": selector, "template": {"metadata": {}, "spec": {"containers": []}}},
        "status": {"replicas": 1, "observedGeneration": 3},
    }


def kubectl_dump() -> dict[str, Any]:
    """What `kubectl get ds,sts,jobs,rs,deploy,svc,pdb -A -o json` prints: one List of mixed kinds
    with the fields real objects carry (managedFields, status, annotations)."""
    managed = [{"manager": "kube-controller-manager", "operation": "Update", "time": "2025-01-01T00:00:00Z"}]
    return {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [
            workload("DaemonSet", "agent", {"matchLabels": {"app": "agent"}}, managedFields=managed),
            workload("StatefulSet", "db", {"matchLabels": {"app": "db"}}),
            workload("Job", "pi", {"matchLabels": {"batch.kubernetes.io/controller-uid": "pi-uid"}}, "batch/v1"),
            workload("Deployment", "web", {"matchLabels": {"app": "web"}}),
            workload(
                "ReplicaSet",
                "web-5d8f",
                {"matchLabels": {"app": "web", "pod-template-hash": "5d8f"}},
                ownerReferences=[owner("Deployment", "web")],
                annotations={"deployment.kubernetes.io/revision": "2"},
            ),
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web", "namespace": "test"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], "clusterIP": "10.0.0.1"},
                "status": {"loadBalancer": {}},
            },
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "web", "namespace": "test", "generation": 1},
                "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "web"}}},
                "status": {"disruptionsAllowed": 1, "currentHealthy": 4, "desiredHealthy": 3, "expectedPods": 4},
            },
        ],
    }


def pod_of(name: str, labels: dict[str, str], *owners: dict[str, Any], **spec: Any) -> Pod:
    return Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": "test", "labels": labels, "ownerReferences": list(owners)},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
        }
    )


def test_a_kubectl_dump_of_every_kind_loads() -> None:
    cluster = load_cluster(json.dumps(kubectl_dump()), "dump.json")
    assert sorted(w.kind for w in cluster.workloads) == [
        "DaemonSet",
        "Deployment",
        "Job",
        "ReplicaSet",
        "Service",
        "StatefulSet",
    ]
    assert [p.spec.max_unavailable for p in cluster.pdbs] == ["25%"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("minAvailable", "150%", "must be less than or equal to 100%"),
        ("minAvailable", "half", "a valid percent string"),
        ("maxUnavailable", -1, "must be greater than or equal to 0"),
    ],
)
def test_bad_pdb_is_refused_with_its_location(field: str, value: Any, message: str) -> None:
    dump = kubectl_dump()
    dump["items"][-1]["spec"] = {field: value, "selector": {}}
    with pytest.raises(InputError, match=message) as caught:
        load_cluster(json.dumps(dump, indent=1), "dump.json")
    assert f"items[6].spec.{field}" in str(caught.value)


def test_pdb_with_both_budgets_is_refused() -> None:
    dump = kubectl_dump()
    dump["items"][-1]["spec"]["minAvailable"] = 1
    with pytest.raises(InputError, match="minAvailable and maxUnavailable cannot be both set"):
        load_cluster(json.dumps(dump), "dump.json")


def test_owner_chain_up_to_the_workload() -> None:
    index = WorkloadIndex(load_cluster(json.dumps(kubectl_dump()), "dump.json").workloads)
    web = pod_of("web-5d8f-x", {"app": "web"}, owner("ReplicaSet", "web-5d8f"))
    assert index.owner_chain(web.metadata) == [
        WorkloadRef("ReplicaSet", "test", "web-5d8f"),
        WorkloadRef("Deployment", "test", "web"),
    ]
    job = pod_of("pi-abc", {}, owner("Job", "pi", "batch/v1"))
    assert index.workload_of(job.metadata) == WorkloadRef("Job", "test", "pi")
    orphan_owner = pod_of("x", {}, owner("ReplicaSet", "gone"))
    assert index.workload_of(orphan_owner.metadata) == WorkloadRef("ReplicaSet", "test", "gone")
    assert index.workload_of(pod_of("bare", {}).metadata) is None


# --- DefaultSelector ----------------------------------------------------------------------------


def _selector_of(pod: Pod, extra: list[dict[str, Any]] = ()) -> list[tuple[str, str, list[str]]]:  # type: ignore[assignment]
    dump = kubectl_dump()
    dump["items"].extend(extra)
    table = build_table(load_cluster(json.dumps(dump), "dump.json"))
    selector = default_selector(PodInfo.of(pod), table)
    return [(r.key, r.operator, sorted(r.values)) for r in selector.requirements]


GET_POD_SERVICES = [
    pytest.param(i, [("app", "In", [f"test-{i}"])] if i < 3 else [], id=f"GetPodServices for pod-{i}") for i in range(5)
]


@pytest.mark.parametrize(("i", "expected"), GET_POD_SERVICES)
def test_get_pod_services(i: int, expected: list[tuple[str, str, list[str]]]) -> None:
    """spread_test.go TestGetPodServices: services test-0..2 select app=test-i; pods 3 and 4 match none."""
    services = [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"service-{k}", "namespace": "test"},
         "spec": {"selector": {"app": f"test-{k}"}}}
        for k in range(3)
    ]  # fmt: skip
    pod = pod_of(f"test-pod-{i}", {"app": f"test-{i}", "label": f"label-{i}"})
    assert _selector_of(pod, services) == expected


def test_default_selector_by_owner_kind() -> None:
    """DefaultSelector adds the controller's selector for ReplicaSets and StatefulSets only."""
    rs = pod_of("w", {"app": "web", "pod-template-hash": "5d8f"}, owner("ReplicaSet", "web-5d8f"))
    assert _selector_of(rs) == [
        ("app", "In", ["web"]),  # the Service
        ("app", "In", ["web"]),  # the ReplicaSet's matchLabels, in key order
        ("pod-template-hash", "In", ["5d8f"]),
    ]
    assert _selector_of(pod_of("db-0", {"app": "db"}, owner("StatefulSet", "db"))) == [("app", "In", ["db"])]
    assert _selector_of(pod_of("a", {"app": "agent"}, owner("DaemonSet", "agent"))) == []
    job_pod = pod_of("pi-x", {"batch.kubernetes.io/controller-uid": "pi-uid"}, owner("Job", "pi", "batch/v1"))
    assert _selector_of(job_pod) == []


# --- DaemonSet pods -----------------------------------------------------------------------------


def daemon_cluster(tmp_path: Path) -> tuple[Path, Path]:
    nodes = [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
         "spec": spec, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for name, spec in (
            ("node-a", {"unschedulable": True,
                        "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}),
            ("node-b", {}),
        )
    ]  # fmt: skip
    dump = kubectl_dump()
    dump["items"].extend(nodes)
    pod = pod_of(
        "agent-x1",
        {"app": "agent"},
        owner("DaemonSet", "agent"),
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}
                    ]
                }
            }
        },
        tolerations=DS_TOLERATIONS,
    )
    (tmp_path / "cluster.json").write_text(json.dumps(dump))
    (tmp_path / "pod.json").write_text(json.dumps(pod.to_dict()))
    return tmp_path / "cluster.json", tmp_path / "pod.json"


def test_daemonset_pod_lands_on_its_cordoned_node_and_explains_the_others(tmp_path: Path) -> None:
    """The DaemonSet tolerations pass NodeUnschedulable on a cordoned node; every other node is left
    out by NodeAffinity's PreFilterResult and the explanation says so."""
    cluster_path, pod_path = daemon_cluster(tmp_path)
    cluster = load_cluster(cluster_path.read_text(), str(cluster_path))
    pod = Pod.model_validate(json.loads(pod_path.read_text()))
    explanation = explain(cluster, pod)
    data = result_to_json(explanation)
    assert data["selectedNode"] == "node-a"
    assert data["workload"] == {"kind": "DaemonSet", "namespace": "test", "name": "agent"}
    assert data["preFilterResult"] == ["node-a"]
    assert data["nodes"]["node-b"]["inPreFilterResult"] is False
    assert data["nodes"]["node-b"]["filter"] == {
        "plugin": "",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"],
    }
    text = format_text(explanation)
    assert "Workload: DaemonSet test/agent" in text
    assert "PreFilter kept only: node-a (a DaemonSet pod names its node in matchFields metadata.name)" in text
    assert "node-b: skipped, not kept by PreFilter: UnschedulableAndUnresolvable" in text


def test_daemonset_pod_without_tolerations_fails_on_the_cordoned_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_path, pod_path = daemon_cluster(tmp_path)
    pod = json.loads(pod_path.read_text())
    pod["spec"]["tolerations"] = []
    pod_path.write_text(json.dumps(pod))
    assert main(["explain", "--cluster", str(cluster_path), "--pod", str(pod_path), "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["message"] == (
        "0/2 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity], 1 node(s) were unschedulable. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
