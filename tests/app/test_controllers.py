"""The control loops through the real store: scheduler, Deployment/ReplicaSet controllers, kubelet,
taint manager. Driven by `runner.reconcile` (or one controller step at a time)."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace
from typing import Any

import pytest

from clusterviz import services, store
from clusterviz.controllers import kubelet, scheduler, taint_manager
from clusterviz.controllers.runner import reconcile, step_once
from clusterviz.models import Change, Cluster, SchedulingCycle
from tests.app import (
    condition,
    create,
    deployment_yaml,
    events,
    node_yaml,
    pod,
    pod_yaml,
    priority_class_yaml,
    queue_state,
)

SAFE = "[bcdfghjklmnpqrstvwxz2456789]"


@pytest.fixture
def cluster(db: None) -> Cluster:
    return services.create_cluster("controllers-test")


def _cycles(cluster: Cluster) -> list[SchedulingCycle]:
    return list(SchedulingCycle.objects.filter(cluster=cluster).order_by("number"))


def _pod_changes(cluster: Cluster, name: str) -> list[Change]:
    return list(Change.objects.filter(cluster=cluster, kind="Pod", name=name).order_by("resource_version"))


# --- the scheduler -----------------------------------------------------------------------------


def test_queue_order_is_priority_then_time(cluster: Cluster) -> None:
    create(cluster, priority_class_yaml("high", 1000), priority_class_yaml("mid", 500))
    create(cluster, pod_yaml("low-a"), pod_yaml("high-a", priorityClassName="high"), pod_yaml("low-b"))
    create(cluster, pod_yaml("mid-a", priorityClassName="mid"), pod_yaml("high-b", priorityClassName="high"))
    create(cluster, node_yaml("node01", cpu="8"))
    reconcile(cluster)
    assert [(c.number, c.pod) for c in _cycles(cluster)] == [
        (1, "default/high-a"),
        (2, "default/high-b"),
        (3, "default/mid-a"),
        (4, "default/low-a"),
        (5, "default/low-b"),
    ]


def test_bind_writes_node_name_condition_and_the_scheduled_event(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("x"))
    assert scheduler.schedule_next(cluster) is True
    body = pod(cluster, "x")
    assert body["spec"]["nodeName"] == "node01"
    scheduled = condition(body, "PodScheduled")
    assert scheduled is not None
    assert scheduled["status"] == "True"
    assert "reason" not in scheduled
    assert [(e["type"], e["reason"], e["message"], e["source"], e["count"]) for e in events(cluster, "x")] == [
        ("Normal", "Scheduled", "Successfully assigned default/x to node01", {"component": "default-scheduler"}, 1)
    ]
    event = events(cluster, "x")[0]
    assert event["involvedObject"]["uid"] == body["metadata"]["uid"]
    assert event["involvedObject"]["kind"] == "Pod"
    assert event["metadata"]["namespace"] == "default"
    # the bind is one write by the scheduler
    bind = _pod_changes(cluster, "x")[-1]
    assert (bind.type, bind.component) == ("MODIFIED", "default-scheduler")
    assert scheduler.schedule_next(cluster) is False  # the queue is empty


def test_a_pod_created_with_node_name_is_not_scheduled(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("pinned", nodeName="node01"))
    reconcile(cluster)
    assert _cycles(cluster) == []
    assert events(cluster, "pinned", "Scheduled") == []
    assert pod(cluster, "pinned")["status"]["phase"] == "Running"
    assert [e["reason"] for e in events(cluster, "pinned")] == ["Pulling", "Pulled", "Created", "Started"]


def test_a_pod_for_another_scheduler_is_left_alone(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("other", schedulerName="my-scheduler"))
    reconcile(cluster)
    assert _cycles(cluster) == []
    assert "nodeName" not in pod(cluster, "other")["spec"]


# Messages as v1.34 prints them (see /work/shared/kube-scheduler-semantics.md errata 1 and 2): the
# DynamicResources PostFilter adds "no new claims to deallocate", and a request above the node's total
# allocatable is UnschedulableAndUnresolvable, so preemption is "not helpful" there.
UNSCHEDULABLE_CASES = [
    pytest.param(
        {"nodeSelector": {"disk": "ssd"}},
        None,
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. no new claims to "
        "deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="node-selector",
    ),
    pytest.param(
        {"cpu": "3"},
        None,
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="above-allocatable",
    ),
    pytest.param(
        {"cpu": "1500m"},
        pod_yaml("hog", cpu="1500m", nodeName="node01"),
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        id="insufficient-cpu-no-victims",
    ),
    pytest.param(
        {},
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node01"}, "spec": {"taints": '
        '[{"key": "qqq", "value": "value1", "effect": "NoSchedule"}]}}',
        "0/1 nodes are available: 1 node(s) had untolerated taint {qqq: value1}. no new claims to "
        "deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="untolerated-taint",
    ),
]


@pytest.mark.parametrize(("spec", "other", "message"), UNSCHEDULABLE_CASES)
def test_an_unschedulable_pod_gets_the_condition_and_event_and_is_parked(
    cluster: Cluster, spec: dict[str, Any], other: str | None, message: str
) -> None:
    if other is not None and '"Node"' in other:
        create(cluster, other)
    else:
        create(cluster, node_yaml("node01"), *([other] if other else []))
    reconcile(cluster)
    create(cluster, pod_yaml("x", **spec))
    reconcile(cluster)
    body = pod(cluster, "x")
    assert "nodeName" not in body["spec"]
    scheduled = condition(body, "PodScheduled")
    assert scheduled is not None
    assert (scheduled["status"], scheduled["reason"], scheduled["message"]) == ("False", "Unschedulable", message)
    assert [(e["type"], e["reason"], e["message"], e["count"]) for e in events(cluster, "x")] == [
        ("Warning", "FailedScheduling", message, 1)
    ]
    assert queue_state(cluster, "x") == "unschedulable"
    # parked: more reconciling does not retry it
    reconcile(cluster)
    assert len(_cycles(cluster)) == 1
    assert scheduler.schedule_next(cluster) is False


def test_no_nodes(cluster: Cluster) -> None:
    create(cluster, pod_yaml("x"))
    reconcile(cluster)
    scheduled = condition(pod(cluster, "x"), "PodScheduled")
    assert scheduled is not None
    # schedule_one.go: ErrNoNodesAvailable
    assert scheduled["message"] == "no nodes available to schedule pods"


def _add_node(cluster: Cluster) -> None:
    create(cluster, node_yaml("node02", cpu="8", labels={"disk": "ssd"}))


RETRY_CASES = [
    pytest.param({"nodeSelector": {"disk": "ssd"}}, None, _add_node, "node02", id="node-added"),
    pytest.param(
        {"nodeSelector": {"disk": "ssd"}},
        None,
        lambda c: services.set_label(c, "node01", "disk", "ssd", "kubectl"),
        "node01",
        id="node-labelled",
    ),
    pytest.param(
        {},
        lambda c: services.set_taint(c, "node01", "qqq", "value1", "NoSchedule", "kubectl"),
        lambda c: services.set_taint(c, "node01", "qqq", "", "NoSchedule", "kubectl", remove=True),
        "node01",
        id="node-untainted",
    ),
    pytest.param(
        {},
        lambda c: services.set_cordon(c, "node01", True, "kubectl"),
        lambda c: services.set_cordon(c, "node01", False, "kubectl"),
        "node01",
        id="node-uncordoned",
    ),
    pytest.param(
        {"cpu": "1500m"},
        lambda c: create(c, pod_yaml("hog", cpu="1500m", nodeName="node01")),
        lambda c: services.delete_object(c, "Pod", "default", "hog", "kubectl"),
        "node01",
        id="pod-removed",
    ),
]


@pytest.mark.parametrize(("spec", "before", "trigger", "node"), RETRY_CASES)
def test_a_parked_pod_is_retried_and_scheduled_when_the_cluster_changes(
    cluster: Cluster, spec: dict[str, Any], before: Any, trigger: Any, node: str
) -> None:
    create(cluster, node_yaml("node01"))
    if before is not None:
        before(cluster)
    reconcile(cluster)
    create(cluster, pod_yaml("x", **spec))
    reconcile(cluster)
    assert queue_state(cluster, "x") == "unschedulable"
    trigger(cluster)
    reconcile(cluster)
    body = pod(cluster, "x")
    assert body["spec"]["nodeName"] == node
    assert body["status"]["phase"] == "Running"
    assert condition(body, "PodScheduled")["status"] == "True"  # type: ignore[index]
    assert [e["message"] for e in events(cluster, "x", "Scheduled")] == [f"Successfully assigned default/x to {node}"]
    assert [c.scheduled for c in _cycles(cluster) if c.pod == "default/x"] == [False, True]


def test_the_failed_scheduling_event_counts_repeats(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("x", nodeSelector={"disk": "ssd"}))
    reconcile(cluster)
    services.set_label(cluster, "node01", "unrelated", "yes", "kubectl")  # a node change: retried, in vain
    reconcile(cluster)
    failed = events(cluster, "x", "FailedScheduling")
    assert len(failed) == 1
    assert failed[0]["count"] == 2
    assert failed[0]["firstTimestamp"] <= failed[0]["lastTimestamp"]
    # a different verdict is a different event
    create(cluster, node_yaml("node02"))
    reconcile(cluster)
    failed = events(cluster, "x", "FailedScheduling")
    assert [(e["message"].split(":")[0], e["count"]) for e in failed] == [
        ("0/1 nodes are available", 2),
        ("0/2 nodes are available", 1),
    ]


def test_preemption_evicts_a_lower_priority_victim_and_binds_to_the_nominated_node(cluster: Cluster) -> None:
    create(cluster, priority_class_yaml("high", 1000), node_yaml("node01", cpu="1"), pod_yaml("victim", cpu="800m"))
    reconcile(cluster)
    assert pod(cluster, "victim")["status"]["phase"] == "Running"
    victim_uid = pod(cluster, "victim")["metadata"]["uid"]
    create(cluster, pod_yaml("vip", cpu="800m", priorityClassName="high"))
    reconcile(cluster)

    # the victim: DisruptionTarget, the Preempted event, then gone
    with pytest.raises(store.NotFound):
        pod(cluster, "victim")
    history = _pod_changes(cluster, "victim")
    marked = [c for c in history if condition(c.body, "DisruptionTarget")]
    assert marked, "the victim never got the DisruptionTarget condition"
    # PreemptPod: the condition first, then a graceful delete (Terminating), then its kubelet stops it
    assert "deletionTimestamp" not in marked[0].body["metadata"]
    assert [(c.type, c.body["metadata"].get("deletionTimestamp") is not None) for c in marked[1:]] == [
        ("MODIFIED", True),
        ("DELETED", True),
    ]
    assert (history[-1].type, history[-1].component) == ("DELETED", "kubelet")
    target = condition(marked[0].body, "DisruptionTarget")
    assert target is not None
    assert (target["status"], target["reason"], target["message"]) == (
        "True",
        "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod",
    )
    vip = pod(cluster, "vip")
    preempted = events(cluster, "victim", "Preempted")
    assert [(e["type"], e["message"]) for e in preempted] == [
        ("Normal", f"Preempted by pod {vip['metadata']['uid']} on node node01")
    ]
    assert preempted[0]["involvedObject"]["uid"] == victim_uid
    # the preemptor: nominated, then bound to that node
    nominated = [c.body["status"].get("nominatedNodeName") for c in _pod_changes(cluster, "vip")]
    assert "node01" in nominated
    assert vip["spec"]["nodeName"] == "node01"
    assert "nominatedNodeName" not in vip["status"]
    assert vip["status"]["phase"] == "Running"
    failed = events(cluster, "vip", "FailedScheduling")
    assert len(failed) == 1
    assert failed[0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert [(c.pod, c.scheduled, c.node) for c in _cycles(cluster)] == [
        ("default/victim", True, "node01"),
        ("default/vip", False, ""),
        ("default/vip", True, "node01"),
    ]


def test_an_equal_priority_pod_does_not_preempt(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="1"), pod_yaml("first", cpu="800m"))
    reconcile(cluster)
    create(cluster, pod_yaml("second", cpu="800m"))
    reconcile(cluster)
    assert pod(cluster, "first")["status"]["phase"] == "Running"
    assert "nominatedNodeName" not in pod(cluster, "second")["status"]
    assert events(cluster, reason="Preempted") == []


def test_scheduling_gates_keep_a_pod_pending_until_removed(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("gated", schedulingGates=[{"name": "example.com/wait"}]))
    reconcile(cluster)
    assert queue_state(cluster, "gated") == "gated"
    assert _cycles(cluster) == []
    assert condition(pod(cluster, "gated"), "PodScheduled")["reason"] == "SchedulingGated"  # type: ignore[index]
    services.set_label(cluster, "node01", "a", "b", "kubectl")  # node changes do not ungate it
    reconcile(cluster)
    assert _cycles(cluster) == []

    def ungate(body: dict[str, Any]) -> None:
        body["spec"].pop("schedulingGates")

    store.patch(cluster, "Pod", "default", "gated", ungate, "kubectl")
    reconcile(cluster)
    body = pod(cluster, "gated")
    assert body["spec"]["nodeName"] == "node01"
    assert condition(body, "PodScheduled")["status"] == "True"  # type: ignore[index]
    assert [c.pod for c in _cycles(cluster)] == ["default/gated"]


def test_scheduling_cycles_are_kept_with_their_events(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), node_yaml("node02", cpu="4"), pod_yaml("a"), pod_yaml("b", cpu="3"))
    reconcile(cluster)
    cycles = _cycles(cluster)
    assert [(c.number, c.pod, c.scheduled, c.node) for c in cycles] == [
        (1, "default/a", True, cycles[0].node),
        (2, "default/b", True, "node02"),
    ]
    assert cycles[1].message == "Successfully assigned default/b to node02"
    for cycle in cycles:
        assert cycle.events, "a cycle without events"
        assert [e["seq"] for e in cycle.events] == list(range(1, len(cycle.events) + 1))
        assert {e["cycle"] for e in cycle.events} == {cycle.number}
        assert cycle.resource_version > 0
    data = cycles[1].to_dict()
    assert data["cycle"] == 2
    assert data["node"] == "node02"
    assert data["events"] == cycles[1].events
    cluster.refresh_from_db()
    assert cluster.cycle == 2


def test_cycle_numbers_stay_unique_with_a_stale_cluster_object(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("a"))
    stale = Cluster.objects.get(pk=cluster.pk)
    reconcile(cluster)
    create(cluster, pod_yaml("b"))
    reconcile(stale)  # another process's (older) view of the same cluster
    assert [c.number for c in _cycles(cluster)] == [1, 2]


# --- Deployment and ReplicaSet controllers -----------------------------------------------------


def _replica_sets(cluster: Cluster) -> list[dict[str, Any]]:
    return store.list_objects(cluster, "ReplicaSet")


def test_a_deployment_makes_a_replica_set_that_makes_pods(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="4"), deployment_yaml("myapp", 3))
    reconcile(cluster)
    deployment = store.get(cluster, "Deployment", "default", "myapp")
    [rs] = _replica_sets(cluster)
    name = rs["metadata"]["name"]
    assert re.fullmatch(rf"myapp-{SAFE}{{1,10}}", name), name
    pod_hash = name.removeprefix("myapp-")
    assert rs["metadata"]["labels"] == {"app": "myapp", "pod-template-hash": pod_hash}
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "myapp", "pod-template-hash": pod_hash}}
    assert rs["spec"]["replicas"] == 3
    [owner] = rs["metadata"]["ownerReferences"]
    assert owner == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "myapp",
        "uid": deployment["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    pods = store.list_objects(cluster, "Pod")
    assert len(pods) == 3
    for body in pods:
        assert re.fullmatch(rf"{name}-{SAFE}{{5}}", body["metadata"]["name"]), body["metadata"]["name"]
        assert body["metadata"]["generateName"] == f"{name}-"
        assert body["metadata"]["labels"] == {"app": "myapp", "pod-template-hash": pod_hash}
        assert body["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
        assert body["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
        assert body["status"]["phase"] == "Running"
    assert rs["status"] == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
    }
    counts = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "observedGeneration")
    assert {k: deployment["status"][k] for k in counts} == {
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
    }
    assert [(c["type"], c["status"]) for c in deployment["status"]["conditions"]] == [
        ("Available", "True"),
        ("Progressing", "True"),
    ]
    assert [e["message"] for e in events(cluster, "myapp", "ScalingReplicaSet")] == [
        f"Scaled up replica set {name} from 0 to 3"
    ]
    assert sorted(e["message"] for e in events(cluster, name, "SuccessfulCreate")) == sorted(
        f"Created pod: {p['metadata']['name']}" for p in pods
    )
    # as upstream's: `kubectl describe rs` shows them From replicaset-controller (the pods' writer too)
    assert {e["source"]["component"] for e in events(cluster, name, "SuccessfulCreate")} == {"replicaset-controller"}


def test_scaling_a_deployment_up_and_down(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="4"), deployment_yaml("myapp", 3))
    reconcile(cluster)
    [rs] = _replica_sets(cluster)
    name = rs["metadata"]["name"]
    services.scale(cluster, "Deployment", "default", "myapp", 5, "kubectl")
    reconcile(cluster)
    assert len(store.list_objects(cluster, "Pod")) == 5
    assert store.get(cluster, "Deployment", "default", "myapp")["status"]["readyReplicas"] == 5
    assert store.get(cluster, "ReplicaSet", "default", name)["status"]["replicas"] == 5
    services.scale(cluster, "Deployment", "default", "myapp", 1, "kubectl")
    reconcile(cluster)
    assert len(store.list_objects(cluster, "Pod")) == 1
    rs = store.get(cluster, "ReplicaSet", "default", name)
    assert (rs["spec"]["replicas"], rs["status"]["replicas"], rs["status"]["readyReplicas"]) == (1, 1, 1)
    status = store.get(cluster, "Deployment", "default", "myapp")["status"]
    assert {k: status[k] for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")} == {
        "replicas": 1,
        "updatedReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
    }
    assert [e["message"] for e in events(cluster, "myapp", "ScalingReplicaSet")] == [
        f"Scaled up replica set {name} from 0 to 3",
        f"Scaled up replica set {name} from 3 to 5",
        f"Scaled down replica set {name} from 5 to 1",
    ]
    assert len(events(cluster, name, "SuccessfulDelete")) == 4
    # the scaled-down pods were running: they were stopped by their kubelet, not dropped
    killed = [c for c in Change.objects.filter(cluster=cluster, kind="Pod", type="DELETED")]
    assert [c.component for c in killed] == ["kubelet"] * 4
    assert len(_replica_sets(cluster)) == 1


def test_scale_down_removes_unscheduled_pods_first(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="1"), deployment_yaml("myapp", 3, cpu="400m"))
    reconcile(cluster)
    pods = store.list_objects(cluster, "Pod")
    pending = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
    assert len(pending) == 1
    services.scale(cluster, "Deployment", "default", "myapp", 2, "kubectl")
    reconcile(cluster)
    names = [p["metadata"]["name"] for p in store.list_objects(cluster, "Pod")]
    assert pending[0] not in names
    assert len(names) == 2


def test_ready_counts_only_running_pods(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="1"), deployment_yaml("myapp", 3, cpu="400m"))
    reconcile(cluster)
    [rs] = _replica_sets(cluster)
    assert (rs["status"]["replicas"], rs["status"]["readyReplicas"]) == (3, 2)
    deployment = store.get(cluster, "Deployment", "default", "myapp")
    assert (deployment["status"]["replicas"], deployment["status"]["availableReplicas"]) == (3, 2)


def test_a_changed_template_rolls_to_a_new_replica_set(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="4"), deployment_yaml("myapp", 2))
    reconcile(cluster)
    [old] = _replica_sets(cluster)

    def new_image(body: dict[str, Any]) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["image"] = "soscscs/myapp:v2"

    store.patch(cluster, "Deployment", "default", "myapp", new_image, "kubectl")
    reconcile(cluster)
    by_name = {rs["metadata"]["name"]: rs for rs in _replica_sets(cluster)}
    assert len(by_name) == 2
    assert by_name[old["metadata"]["name"]]["spec"]["replicas"] == 0
    [new] = [rs for n, rs in by_name.items() if n != old["metadata"]["name"]]
    assert new["spec"]["replicas"] == 2
    images = {p["spec"]["containers"][0]["image"] for p in store.list_objects(cluster, "Pod")}
    assert images == {"soscscs/myapp:v2"}


def test_deleting_a_deployments_pod_gets_it_replaced(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="4"), deployment_yaml("myapp", 2))
    reconcile(cluster)
    victim = store.list_objects(cluster, "Pod")[0]["metadata"]["name"]
    services.delete_object(cluster, "Pod", "default", victim, "kubectl")
    reconcile(cluster)
    names = [p["metadata"]["name"] for p in store.list_objects(cluster, "Pod")]
    assert victim not in names
    assert len(names) == 2


# --- the kubelet ---------------------------------------------------------------------------------


def test_kubelet_runs_a_bound_pod_with_the_container_events(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("web"))
    scheduler.schedule_next(cluster)
    assert pod(cluster, "web")["status"]["phase"] == "Pending"
    assert kubelet.step(cluster) is True
    creating = pod(cluster, "web")
    assert creating["status"]["phase"] == "Pending"
    [status] = creating["status"]["containerStatuses"]
    assert status["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert status["ready"] is False
    assert re.fullmatch(r"192\.168\.\d+\.\d+", creating["status"]["hostIP"])
    assert kubelet.step(cluster) is True
    running = pod(cluster, "web")
    assert running["status"]["phase"] == "Running"
    [status] = running["status"]["containerStatuses"]
    assert "running" in status["state"]
    assert status["ready"] is True
    assert re.fullmatch(r"10\.244\.\d+\.\d+", running["status"]["podIP"])
    assert {c["type"]: c["status"] for c in running["status"]["conditions"]} == {
        "PodScheduled": "True",
        "Initialized": "True",
        "ContainersReady": "True",
        "Ready": "True",
    }
    assert kubelet.step(cluster) is False
    assert [(e["reason"], e["message"], e["source"]) for e in events(cluster, "web")] == [
        ("Scheduled", "Successfully assigned default/web to node01", {"component": "default-scheduler"}),
        ("Pulling", 'Pulling image "nginx:1.27"', {"component": "kubelet", "host": "node01"}),
        (
            "Pulled",
            'Successfully pulled image "nginx:1.27" in 1.204s (1.204s including waiting)',
            {"component": "kubelet", "host": "node01"},
        ),
        ("Created", "Created container: app", {"component": "kubelet", "host": "node01"}),
        ("Started", "Started container app", {"component": "kubelet", "host": "node01"}),
    ]


def test_pods_on_a_deleted_node_are_garbage_collected(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("web"))
    reconcile(cluster)
    services.delete_object(cluster, "Node", "", "node01", "kubectl")
    reconcile(cluster)
    assert store.list_objects(cluster, "Pod") == []
    assert Change.objects.filter(cluster=cluster, kind="Pod", type="DELETED").get().component == "pod-garbage-collector"


def test_step_once_names_the_controller_that_acted(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), deployment_yaml("myapp", 1))
    actors = []
    while True:
        actor, _ = step_once(cluster)
        if actor is None:
            break
        actors.append(actor)
    assert actors[0] == "deployment-controller"
    assert actors.index("replicaset-controller") < actors.index("scheduler")
    assert "scheduler" in actors
    assert actors.index("scheduler") < actors.index("kubelet")
    assert reconcile(cluster) == 0


# --- the taint manager ---------------------------------------------------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """The taint manager's clock, moved by hand (`clock.now += 61`)."""
    fake = SimpleNamespace(now=time.time())
    monkeypatch.setattr(taint_manager, "time", SimpleNamespace(time=lambda: fake.now))
    return fake


def _tolerate(seconds: int | None = None) -> list[dict[str, Any]]:
    toleration: dict[str, Any] = {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    return [toleration]


def test_the_taint_manager_evicts_a_non_tolerating_pod_at_once(cluster: Cluster, clock: SimpleNamespace) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("plain"), pod_yaml("forever", tolerations=_tolerate()))
    reconcile(cluster)
    services.set_taint(cluster, "node01", "maintenance", "", "NoExecute", "kubectl")
    reconcile(cluster)
    with pytest.raises(store.NotFound):
        pod(cluster, "plain")
    marked = [c.body for c in _pod_changes(cluster, "plain") if c.body["metadata"].get("deletionTimestamp")]
    assert marked, "the pod was not marked for deletion first"
    target = condition(marked[0], "DisruptionTarget")
    assert target is not None
    assert (target["reason"], target["message"]) == (
        "DeletionByTaintManager",
        "Taint manager: deleting due to NoExecute taint",
    )
    assert [(e["reason"], e["message"]) for e in events(cluster, "plain", "TaintManagerEviction")] == [
        ("TaintManagerEviction", "Marking for deletion Pod default/plain")
    ]
    assert events(cluster, "plain", "Killing")
    # tolerated without a limit: stays, whatever the time
    clock.now += 10 * 365 * 86400
    reconcile(cluster)
    assert pod(cluster, "forever")["status"]["phase"] == "Running"


def test_toleration_seconds_delay_the_eviction(cluster: Cluster, clock: SimpleNamespace) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("patient", tolerations=_tolerate(60)))
    reconcile(cluster)
    services.set_taint(cluster, "node01", "maintenance", "", "NoExecute", "kubectl")
    reconcile(cluster)
    acted, deadline = taint_manager.step(cluster)
    assert acted is False
    assert deadline is not None
    assert 55 <= deadline - clock.now <= 61
    clock.now += 30
    reconcile(cluster)
    assert "deletionTimestamp" not in pod(cluster, "patient")["metadata"]
    clock.now += 31
    reconcile(cluster)
    with pytest.raises(store.NotFound):
        pod(cluster, "patient")
    assert len(events(cluster, "patient", "TaintManagerEviction")) == 1


def test_toleration_seconds_count_from_when_the_pod_arrived(cluster: Cluster, clock: SimpleNamespace) -> None:
    """tainteviction processPodOnNode: a pod that lands on an already tainted node gets its full
    tolerationSeconds from then on (the timer starts when the controller sees the pod)."""
    create(cluster, node_yaml("node01"))
    services.set_taint(cluster, "node01", "maintenance", "", "NoExecute", "kubectl")

    def age_taint(body: dict[str, Any]) -> None:
        body["spec"]["taints"][0]["timeAdded"] = "2020-01-01T00:00:00Z"

    store.patch(cluster, "Node", "", "node01", age_taint, "kubectl")
    create(cluster, pod_yaml("late", tolerations=_tolerate(60)))
    reconcile(cluster)
    assert pod(cluster, "late")["status"]["phase"] == "Running"
    clock.now += 61
    reconcile(cluster)
    with pytest.raises(store.NotFound):
        pod(cluster, "late")


def test_the_first_matching_toleration_decides(cluster: Cluster, clock: SimpleNamespace) -> None:
    """v1helper.GetMatchingTolerations takes, per taint, the first toleration that tolerates it;
    getMinTolerationTime then takes the smallest tolerationSeconds among those (none: forever)."""
    limited_first = [
        {"key": "maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
        {"operator": "Exists"},
    ]
    forever_first = list(reversed(limited_first))
    create(
        cluster,
        node_yaml("node01"),
        pod_yaml("limited-first", tolerations=limited_first),
        pod_yaml("forever-first", tolerations=forever_first),
    )
    reconcile(cluster)
    services.set_taint(cluster, "node01", "maintenance", "", "NoExecute", "kubectl")
    clock.now += 61
    reconcile(cluster)
    names = [p["metadata"]["name"] for p in store.list_objects(cluster, "Pod")]
    assert names == ["forever-first"]


def test_removing_the_taint_cancels_a_pending_eviction(cluster: Cluster, clock: SimpleNamespace) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("patient", tolerations=_tolerate(60)))
    reconcile(cluster)
    services.set_taint(cluster, "node01", "maintenance", "", "NoExecute", "kubectl")
    reconcile(cluster)
    services.set_taint(cluster, "node01", "maintenance", "", "NoExecute", "kubectl", remove=True)
    clock.now += 120
    reconcile(cluster)
    assert pod(cluster, "patient")["status"]["phase"] == "Running"


# --- the scheduling queue's events ---------------------------------------------------------------


def _affinity_to(app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def test_binding_a_pod_retries_parked_pods_with_pod_affinity(cluster: Cluster) -> None:
    """InterPodAffinity's queueing hint: an assigned pod added that matches the affinity term."""
    create(cluster, node_yaml("node01"))
    create(cluster, pod_yaml("follower", affinity=_affinity_to("db")), pod_yaml("picky", nodeSelector={"x": "y"}))
    reconcile(cluster)
    assert queue_state(cluster, "follower") == "unschedulable"
    create(cluster, pod_yaml("db", labels={"app": "db"}))
    reconcile(cluster)
    assert pod(cluster, "follower")["spec"]["nodeName"] == "node01"
    # a pod whose verdict does not depend on other pods is not retried by a bind
    assert [c.scheduled for c in _cycles(cluster) if c.pod == "default/picky"] == [False]
    assert queue_state(cluster, "picky") == "unschedulable"


def test_a_pod_created_bound_also_retries_pod_affinity(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), pod_yaml("follower", affinity=_affinity_to("db")))
    reconcile(cluster)
    create(cluster, pod_yaml("db", labels={"app": "db"}, nodeName="node01"))
    reconcile(cluster)
    assert pod(cluster, "follower")["spec"]["nodeName"] == "node01"


def test_deleting_an_unbound_pod_does_not_retry_parked_pods(cluster: Cluster) -> None:
    """NodeResourcesFit's hint: only an assigned pod's deletion frees room."""
    create(cluster, node_yaml("node01"), pod_yaml("picky", nodeSelector={"x": "y"}), pod_yaml("other", cpu="5"))
    reconcile(cluster)
    services.delete_object(cluster, "Pod", "default", "other", "kubectl")
    reconcile(cluster)
    assert [c.scheduled for c in _cycles(cluster) if c.pod == "default/picky"] == [False]


def test_a_pod_parked_for_five_minutes_is_retried(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """podMaxInUnschedulablePodsDuration (5m): flushUnschedulablePodsLeftover moves it back."""
    from clusterviz import scheduling_queue

    fake = SimpleNamespace(now=time.time())
    monkeypatch.setattr(scheduling_queue, "time", SimpleNamespace(time=lambda: fake.now))
    create(cluster, node_yaml("node01"), pod_yaml("picky", nodeSelector={"x": "y"}))
    reconcile(cluster)
    fake.now += 299
    reconcile(cluster)
    assert len(_cycles(cluster)) == 1
    fake.now += 2
    reconcile(cluster)
    assert len(_cycles(cluster)) == 2
    assert events(cluster, "picky", "FailedScheduling")[0]["count"] == 2
    assert queue_state(cluster, "picky") == "unschedulable"
