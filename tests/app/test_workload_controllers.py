"""The workload controllers through the real store (store in, store out): DaemonSet, StatefulSet,
Job, Deployment rollouts, Services/Endpoints and the paced kubelet. Driven by `runner.reconcile`."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from clusterviz import services, store
from clusterviz.controllers import deployment, kubelet, statefulset
from clusterviz.controllers.runner import reconcile, step_once
from clusterviz.lessons import load_lesson
from clusterviz.models import Cluster, SchedulingCycle
from scheduler_core.api.loading import InputError
from tests.app import changes, create, deployment_yaml, events, node_yaml, pod_yaml

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


def test_daemonset_compares_tolerations_once_the_release_turns_the_gate_on(cluster: Cluster) -> None:
    """KEP-5471: the DaemonSet controller matches `Gt` tolerations as the scheduler does, under the
    cluster's TaintTolerationComparisonOperators; switching it on wakes the idle controller (a
    controller-manager restarted with the gate), and the tier-50 node gets its daemon pod."""
    from clusterviz.cluster_versions import set_version
    from scheduler_core.versions import get_version

    set_version(cluster, get_version("1.35"))
    tier = [{"key": "tier", "value": "50", "effect": "NoSchedule"}]
    create(cluster, node_yaml("node01", taints=tier), node_yaml("node02", taints=[{**tier[0], "value": "5"}]))
    tolerations = [{"key": "tier", "operator": "Gt", "value": "10"}]
    create(cluster, daemonset_yaml("agent", tolerations=tolerations))
    reconcile(cluster)
    assert _pods(cluster, "agent-") == []  # the gate is off by default: Gt tolerates nothing
    set_version(cluster, get_version("1.35", "TaintTolerationComparisonOperators=true"))
    reconcile(cluster)
    assert [p["spec"]["nodeName"] for p in _pods(cluster, "agent-")] == ["node01"]
    # and the taint manager evicts by the same rule: a NoExecute tier taint the pod's Gt tolerates
    services.set_taint(cluster, "node01", "tier", "50", "NoExecute", "kubectl")
    reconcile(cluster)
    assert [p["spec"]["nodeName"] for p in _pods(cluster, "agent-")] == ["node01"]


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
    assert statefulset.sync_stateful_sets(cluster) is True  # its ControllerRevision first
    (revision,) = store.list_objects(cluster, "ControllerRevision", "default")
    assert (revision["revision"], revision["metadata"]["ownerReferences"][0]["name"]) == (1, "web")
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
    for _ in range(5):  # its ControllerRevision, then two claims and two pods
        statefulset.sync_stateful_sets(cluster)
    claims = store.list_objects(cluster, "PersistentVolumeClaim")
    assert [c["metadata"]["name"] for c in claims] == ["www-db-0", "www-db-1"]
    assert claims[0]["metadata"]["labels"] == {"app": "db"}
    assert claims[0]["status"]["phase"] == "Pending"
    pods = _pods(cluster, "db-")
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1"]  # Parallel: no waiting
    volume = {"name": "www", "persistentVolumeClaim": {"claimName": "www-db-1"}}
    assert volume in pods[1]["spec"]["volumes"]


# --- Job and the simulated run time -----------------------------------------------------------


def settle(cluster: Cluster, done: Callable[[], bool], timeout: float = 20.0) -> None:
    """Reconcile, then wait for the runner's next timed deadline, until `done()` (or fail)."""
    limit = time.monotonic() + timeout
    while not done():
        reconcile(cluster)
        if done():
            return
        actor, deadline = step_once(cluster)
        if actor is not None:
            continue  # a deadline passed meanwhile
        assert deadline is not None, "nothing left to wait for"
        assert time.monotonic() < limit, "not settled in time"
        time.sleep(max(0.0, min(deadline - time.time(), limit - time.monotonic())) + 0.01)


def job_yaml(name: str, completions: int | None, parallelism: int | None, run_seconds: str = "0") -> str:
    template = _template(name, restartPolicy="Never")
    template["metadata"]["annotations"] = {"clusterviz.io/run-seconds": run_seconds}
    spec: Obj = {"template": template}
    if completions is not None:
        spec["completions"] = completions
    if parallelism is not None:
        spec["parallelism"] = parallelism
    return json.dumps({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec})


def _job(cluster: Cluster, name: str) -> Obj:
    return store.get(cluster, "Job", "default", name)


def _complete(job: Obj) -> bool:
    return any(c["type"] == "Complete" for c in job.get("status", {}).get("conditions", []))


def test_job_runs_completions_with_parallelism_and_completes(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), node_yaml("node02"))
    [job] = create(cluster, job_yaml("pi", completions=5, parallelism=2, run_seconds="0.5"))
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["backoffLimit"] == 6
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "pi"
    settle(cluster, lambda: _complete(_job(cluster, "pi")))
    job = _job(cluster, "pi")
    assert job["status"]["succeeded"] == 5
    assert "active" not in job["status"]
    assert [(c["type"], c["reason"]) for c in job["status"]["conditions"]] == [
        ("SuccessCriteriaMet", "CompletionsReached"),
        ("Complete", "CompletionsReached"),
    ]
    assert job["status"]["completionTime"] >= job["status"]["startTime"]
    pods = _pods(cluster, "pi-")
    assert len(pods) == 5
    assert {p["status"]["phase"] for p in pods} == {"Succeeded"}
    terminated = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert [e["message"] for e in events(cluster, "pi", "Completed")] == ["Job completed"]
    # the log never had more than two pods active at once
    active: set[str] = set()
    peak = 0
    for change in changes(cluster):
        if change.kind == "Pod" and change.name.startswith("pi-"):
            if change.body.get("status", {}).get("phase") in ("Pending", "Running"):
                active.add(change.name)
            else:
                active.discard(change.name)
            peak = max(peak, len(active))
    assert peak == 2


def test_job_whose_pods_exit_non_zero_fails_at_its_backoff_limit(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"))
    body = json.loads(job_yaml("crash", completions=1, parallelism=1, run_seconds="0.2"))
    body["spec"]["backoffLimit"] = 1
    body["spec"]["template"]["metadata"]["annotations"]["clusterviz.io/exit-code"] = "3"
    create(cluster, json.dumps(body))

    def failed() -> bool:
        return any(c["type"] == "Failed" for c in _job(cluster, "crash").get("status", {}).get("conditions", []))

    settle(cluster, failed)
    job = _job(cluster, "crash")
    assert job["status"]["failed"] == 2  # backoffLimit 1: the second failure ends the Job
    assert [(c["type"], c["reason"]) for c in job["status"]["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded"),
        ("Failed", "BackoffLimitExceeded"),
    ]
    pods = _pods(cluster, "crash-")
    assert {p["status"]["phase"] for p in pods} == {"Failed"}
    terminated = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    ready = next(c for c in pods[0]["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodFailed")


def test_job_pod_template_must_not_restart_always(cluster: Cluster) -> None:
    body = json.loads(job_yaml("bad", 1, 1))
    body["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    with pytest.raises(InputError, match=r'spec.template.spec.restartPolicy: Unsupported value: "Always"'):
        create(cluster, json.dumps(body))
    assert store.list_objects(cluster, "Job") == []


# --- Deployment rollouts ----------------------------------------------------------------------


def _set_image(cluster: Cluster, name: str, image: str) -> None:
    def change(body: Obj) -> None:
        body["spec"]["template"]["spec"]["containers"][0]["image"] = image

    store.patch(cluster, "Deployment", "default", name, change, "kubectl")


def _replica_sets(cluster: Cluster) -> dict[str, Obj]:
    return {
        rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs for rs in store.list_objects(cluster, "ReplicaSet")
    }


def test_deployment_rolls_out_a_new_revision_within_surge_and_unavailable_and_undoes(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01", cpu="8"), node_yaml("node02", cpu="8"), deployment_yaml("web", 4))
    reconcile(cluster)
    web = store.get(cluster, "Deployment", "default", "web")
    assert web["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert web["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    conditions = {c["type"]: (c["status"], c["reason"]) for c in web["status"]["conditions"]}
    assert conditions == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }
    assert web["status"]["observedGeneration"] == web["metadata"]["generation"] == 1
    start = len(changes(cluster))
    pods = {p["metadata"]["name"]: p["status"]["phase"] for p in _pods(cluster, "web-")}

    _set_image(cluster, "web", "soscscs/myapp:v2")
    reconcile(cluster)
    sets = _replica_sets(cluster)
    assert sets["soscscs/myapp:v2"]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert sets["soscscs/myapp:v2"]["spec"]["replicas"] == 4
    assert sets["soscscs/myapp:v1"]["spec"]["replicas"] == 0
    web = store.get(cluster, "Deployment", "default", "web")
    assert web["metadata"]["generation"] == 2
    assert web["status"]["updatedReplicas"] == 4
    # maxSurge 1 and maxUnavailable 1 of 4: never more than 5 pods, never fewer than 3 running
    for change in changes(cluster)[start:]:
        if change.kind != "Pod":
            continue
        if change.type == "DELETED":
            pods.pop(change.name, None)
        else:
            terminating = bool(change.body["metadata"].get("deletionTimestamp"))
            pods[change.name] = "Terminating" if terminating else change.body.get("status", {}).get("phase", "")
        assert len([p for p in pods.values() if p != "Terminating"]) <= 5
        assert len([p for p in pods.values() if p == "Running"]) >= 3

    # rollout undo: kubectl puts the previous ReplicaSet's template back
    previous = copy.deepcopy(sets["soscscs/myapp:v1"]["spec"]["template"])
    del previous["metadata"]["labels"]["pod-template-hash"]

    def undo(body: Obj) -> None:
        body["spec"]["template"] = previous

    store.patch(cluster, "Deployment", "default", "web", undo, "kubectl")
    reconcile(cluster)
    sets = _replica_sets(cluster)
    assert len(sets) == 2
    revived = sets["soscscs/myapp:v1"]["metadata"]["annotations"]
    assert revived["deployment.kubernetes.io/revision"] == "3"
    assert revived["deployment.kubernetes.io/revision-history"] == "1"
    assert sets["soscscs/myapp:v1"]["spec"]["replicas"] == 4
    web = store.get(cluster, "Deployment", "default", "web")
    assert web["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert {p["spec"]["containers"][0]["image"] for p in _pods(cluster, "web-")} == {"soscscs/myapp:v1"}


def test_recreate_stops_every_old_pod_before_starting_new_ones(cluster: Cluster) -> None:
    body = json.loads(deployment_yaml("web", 2))
    body["spec"]["strategy"] = {"type": "Recreate"}
    create(cluster, node_yaml("node01", cpu="8"), json.dumps(body))
    reconcile(cluster)
    start = len(changes(cluster))
    _set_image(cluster, "web", "soscscs/myapp:v2")
    reconcile(cluster)
    log = [(c.type, c.body["spec"]["containers"][0]["image"]) for c in changes(cluster)[start:] if c.kind == "Pod"]
    last_old_delete = max(i for i, (kind, image) in enumerate(log) if kind == "DELETED" and image.endswith("v1"))
    first_new = min(i for i, (kind, image) in enumerate(log) if kind == "ADDED" and image.endswith("v2"))
    assert last_old_delete < first_new


# --- Services, endpoints and the kinds stored as they are -------------------------------------


def service_yaml(name: str, selector: dict[str, str], **spec: Any) -> str:
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": selector, "ports": [{"port": 80, "targetPort": "http"}], **spec},
    }
    return json.dumps(body)


def test_service_gets_a_cluster_ip_and_endpoints_of_ready_pods(cluster: Cluster) -> None:
    web = json.loads(deployment_yaml("web", 2))
    web["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 8080}]
    create(cluster, node_yaml("node01", cpu="8"), json.dumps(web))
    [svc] = create(cluster, service_yaml("web", {"app": "web"}))
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["clusterIP"].startswith("10.")
    assert svc["spec"]["clusterIPs"] == [svc["spec"]["clusterIP"]]
    assert svc["spec"]["ports"] == [{"port": 80, "targetPort": "http", "protocol": "TCP"}]
    [other] = create(cluster, service_yaml("other", {"app": "none"}))
    assert other["spec"]["clusterIP"] != svc["spec"]["clusterIP"]
    reconcile(cluster)
    endpoints = store.get(cluster, "Endpoints", "default", "web")
    [subset] = endpoints["subsets"]
    ips = sorted(p["status"]["podIP"] for p in _pods(cluster, "web-"))
    assert [a["ip"] for a in subset["addresses"]] == ips
    assert subset["ports"] == [{"port": 8080, "protocol": "TCP"}]
    assert "subsets" not in store.get(cluster, "Endpoints", "default", "other")
    [slice_] = [s for s in store.list_objects(cluster, "EndpointSlice") if s["metadata"]["name"].startswith("web-")]
    assert slice_["metadata"]["labels"]["kubernetes.io/service-name"] == "web"
    assert sorted(e["addresses"][0] for e in slice_["endpoints"]) == ips
    assert all(e["conditions"]["ready"] for e in slice_["endpoints"])
    # scaling down removes the address; deleting the Service removes its endpoints
    services.scale(cluster, "Deployment", "default", "web", 1, "kubectl")
    reconcile(cluster)
    assert len(store.get(cluster, "Endpoints", "default", "web")["subsets"][0]["addresses"]) == 1
    services.delete_object(cluster, "Service", "default", "web", "kubectl")
    reconcile(cluster)
    assert [e["metadata"]["name"] for e in store.list_objects(cluster, "Endpoints")] == ["other"]
    assert [
        s["metadata"]["name"] for s in store.list_objects(cluster, "EndpointSlice") if "web" in s["metadata"]["name"]
    ] == []


def test_a_requested_cluster_ip_must_be_free_and_in_range(cluster: Cluster) -> None:
    create(cluster, service_yaml("a", {"app": "a"}, clusterIP="10.96.0.10"))
    with pytest.raises(store.StoreError, match="provided IP is already allocated"):
        create(cluster, service_yaml("b", {"app": "b"}, clusterIP="10.96.0.10"))
    with pytest.raises(store.StoreError, match="is not in the valid range"):
        create(cluster, service_yaml("c", {"app": "c"}, clusterIP="192.168.0.1"))


def test_configmaps_secrets_and_service_accounts_are_stored(cluster: Cluster) -> None:
    create(
        cluster,
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1"}}),
        json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"pw": "hi"}}),
        json.dumps({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}),
    )
    assert store.get(cluster, "ConfigMap", "default", "cfg")["data"] == {"a": "1"}
    secret = store.get(cluster, "Secret", "default", "s")
    assert (secret["type"], secret["data"], "stringData" in secret) == ("Opaque", {"pw": "aGk="}, False)
    assert store.get(cluster, "ServiceAccount", "default", "robot")["metadata"]["name"] == "robot"
    bad = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"}, "data": {"pw": "not base64!"}}
    with pytest.raises(InputError, match="illegal base64 data"):
        create(cluster, json.dumps(bad))


# --- the paced kubelet ------------------------------------------------------------------------


def test_slow_pace_holds_container_creating_and_terminating_for_their_time(cluster: Cluster, settings: Any) -> None:
    settings.CLUSTERVIZ_SLOW_PULL_SECONDS = 4.0
    settings.CLUSTERVIZ_SLOW_STOP_SECONDS = 10.0
    services.set_pace(cluster, "slow")
    create(cluster, node_yaml("node01"), pod_yaml("a", nodeName="node01"), pod_yaml("b", nodeName="node01"))
    assert kubelet.step(cluster) and kubelet.step(cluster)  # both start pulling
    assert kubelet.step(cluster) is False  # nothing is due yet
    a = store.get(cluster, "Pod", "default", "a")
    assert a["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    started = datetime.fromisoformat(a["status"]["startTime"].replace("Z", "+00:00")).timestamp()
    assert kubelet.due_at(cluster, a) == started + 4.0
    assert [e["reason"] for e in events(cluster, "a")] == ["Pulling"]  # Pulled comes when the pull ends
    deadline = kubelet.next_deadline(cluster)
    assert deadline is not None and deadline <= started + 4.0
    # a deletion waits for the grace period, at most the slow stop time
    services.delete_object(cluster, "Pod", "default", "a", "kubectl", grace_seconds=3)
    services.delete_object(cluster, "Pod", "default", "b", "kubectl")
    a, b = store.get(cluster, "Pod", "default", "a"), store.get(cluster, "Pod", "default", "b")
    assert (a["metadata"]["deletionGracePeriodSeconds"], b["metadata"]["deletionGracePeriodSeconds"]) == (3, 30)
    deleted = datetime.fromisoformat(a["metadata"]["deletionTimestamp"].replace("Z", "+00:00")).timestamp()
    assert kubelet.due_at(cluster, a) == deleted + 3
    assert kubelet.due_at(cluster, b) == deleted + 10.0
    assert kubelet.step(cluster) is False
    services.set_pace(cluster, "instant")
    cluster.refresh_from_db()
    assert kubelet.due_at(cluster, a) == 0.0  # no waiting at the other paces


def test_node_port_services_get_a_free_node_port(cluster: Cluster) -> None:
    [first] = create(cluster, service_yaml("a", {"app": "a"}, type="NodePort"))
    [port] = first["spec"]["ports"]
    assert 30000 <= port["nodePort"] <= 32767
    with pytest.raises(store.StoreError, match=r"spec.ports\[0\].nodePort: Invalid value: .*already allocated"):
        body = json.loads(service_yaml("b", {"app": "b"}, type="NodePort"))
        body["spec"]["ports"][0]["nodePort"] = port["nodePort"]
        create(cluster, json.dumps(body))
    [third] = create(cluster, service_yaml("c", {"app": "c"}, type="NodePort"))
    assert third["spec"]["ports"][0]["nodePort"] != port["nodePort"]


def test_daemonset_on_the_demo_cluster_skips_the_tainted_node01(cluster: Cluster) -> None:
    load_lesson(cluster, "demo")
    create(cluster, daemonset_yaml("agent"))
    reconcile(cluster)
    assert sorted(p["spec"]["nodeName"] for p in _pods(cluster, "agent-")) == ["node02", "node03"]
    skipped = events(cluster, "agent", "NodeNotEligible")
    assert [e["message"] for e in skipped] == ["node01: node(s) had untolerated taint {qqq: value1}"]
    # the scheduler's cycles show why too: node01 fails TaintToleration (and the matchFields affinity)
    cycle = SchedulingCycle.objects.filter(cluster=cluster, pod__startswith="default/agent-").first()
    assert cycle is not None
    taints = next(e for e in cycle.events if e.get("plugin") == "TaintToleration" and e["point"] == "Filter")
    # kept in the stream's compact form: node indexes into cycle.started's nodeNames, failures listed
    node01 = cycle.events[0]["nodeNames"].index("node01")
    reasons = [reason for reason, nodes in taints["verdicts"]["$reasons"] if node01 in nodes]
    assert reasons == ["node(s) had untolerated taint {qqq: value1}"]
    # each daemon pod was scheduled: the other nodes failed the matchFields node affinity
    for pod in _pods(cluster, "agent-"):
        scheduled = events(cluster, pod["metadata"]["name"], "Scheduled")
        assert [e["message"] for e in scheduled] == [
            f"Successfully assigned default/{pod['metadata']['name']} to {pod['spec']['nodeName']}"
        ]


# --- PodDisruptionBudget (the disruption controller) -------------------------------------------


def _budget_yaml(name: str, budget: dict[str, Any]) -> str:
    spec = {"selector": {"matchLabels": {"app": name}}, **budget}
    return json.dumps(
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": spec}
    )


def test_a_budget_over_daemon_pods_by_max_unavailable_fails_safe(cluster: Cluster) -> None:
    """DaemonSets have no scale subresource: the controller cannot count the expected pods, so
    nothing may be disrupted (failSafe) and the condition says why (disruption.go)."""
    create(cluster, node_yaml("node01"), node_yaml("node02"), daemonset_yaml("agent"))
    create(cluster, _budget_yaml("agent", {"maxUnavailable": 1}), _budget_yaml("other", {"minAvailable": "50%"}))
    reconcile(cluster)
    status = store.get(cluster, "PodDisruptionBudget", "default", "agent")["status"]
    assert status["disruptionsAllowed"] == 0
    (condition,) = status["conditions"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "SyncFailed",
        "daemonsets.apps does not implement the scale subresource",
    )
    reasons = [(e["reason"], e["message"]) for e in events(cluster) if e["involvedObject"]["name"] == "agent"]
    assert (
        "CalculateExpectedPodCountFailed",
        "Failed to calculate the number of expected pods: daemonsets.apps does not implement the scale subresource",
    ) in reasons
    # a budget that selects no pod: nothing expected, nothing allowed, and its NoPods event
    other = store.get(cluster, "PodDisruptionBudget", "default", "other")["status"]
    assert (other["expectedPods"], other["disruptionsAllowed"], other["observedGeneration"]) == (0, 0, 1)
    assert other["conditions"][0]["reason"] == "InsufficientPods"
    assert any(e["reason"] == "NoPods" for e in events(cluster) if e["involvedObject"]["name"] == "other")


def test_a_budget_by_percentage_counts_the_deployment_scale(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), deployment_yaml("web", 4), _budget_yaml("web", {"minAvailable": "50%"}))
    reconcile(cluster)
    status = store.get(cluster, "PodDisruptionBudget", "default", "web")["status"]
    assert (status["expectedPods"], status["desiredHealthy"], status["currentHealthy"]) == (4, 2, 4)
    assert status["disruptionsAllowed"] == 2
    assert (status["conditions"][0]["status"], status["conditions"][0]["reason"]) == ("True", "SufficientPods")


def test_an_eviction_takes_one_allowed_disruption_and_records_the_pod(cluster: Cluster) -> None:
    """checkAndDecrement: disruptionsAllowed - 1, the pod in disruptedPods, the condition turned
    InsufficientPods at 0 — until the controller sees the pod go (eviction.go, disruption.go)."""
    from clusterviz.kube_api.eviction import evict
    from clusterviz.kube_api.resources import by_kind

    create(cluster, node_yaml("node01"), deployment_yaml("web", 2), _budget_yaml("web", {"maxUnavailable": 1}))
    reconcile(cluster)
    assert store.get(cluster, "PodDisruptionBudget", "default", "web")["status"]["disruptionsAllowed"] == 1
    name = _pods(cluster, "web-")[0]["metadata"]["name"]
    pods = by_kind("Pod")
    assert pods is not None
    evict(cluster, pods, "default", name, {"apiVersion": "policy/v1beta1", "metadata": {"name": name}}, [])
    status = store.get(cluster, "PodDisruptionBudget", "default", "web")["status"]
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == [name]
    assert (status["conditions"][0]["status"], status["conditions"][0]["reason"]) == ("False", "InsufficientPods")
    assert store.get(cluster, "Pod", "default", name)["metadata"]["deletionTimestamp"]  # graceful
    reconcile(cluster)  # the pod goes, its replacement runs: one may be disrupted again
    status = store.get(cluster, "PodDisruptionBudget", "default", "web")["status"]
    assert (status["disruptionsAllowed"], status.get("disruptedPods")) == (1, None)


def _story(cluster: Cluster) -> list[tuple[str, str, str, str]]:
    """What a cluster's controllers wrote, in order, without the random parts of names."""
    return [(c.type, c.kind, c.component, c.name.split("-")[0].split(".")[0]) for c in changes(cluster)]


def _play(cluster: Cluster) -> None:
    create(cluster, node_yaml("node01"), node_yaml("node02"), deployment_yaml("web", 3))
    create(cluster, daemonset_yaml("agent"))
    reconcile(cluster)
    services.scale(cluster, "Deployment", "default", "web", 1, "kubectl")
    reconcile(cluster)
    store.patch(cluster, "Node", "", "node02", lambda b: b["spec"].update(unschedulable=True), "kubectl")
    reconcile(cluster)
    services.delete_object(cluster, "Node", "", "node01", "kubectl")
    reconcile(cluster)


def test_skipping_idle_controllers_writes_exactly_what_running_them_all_writes(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A controller that found nothing to do is skipped until a kind it reads changes: the same
    changes, in the same order, by the same controllers, as when every controller runs every step."""
    from clusterviz.controllers import runner

    # one clock reading for both runs: a status stamped in a new second would be one more write
    monkeypatch.setattr(store, "now_rfc3339", lambda: "2026-01-01T00:00:00Z")
    skipping = services.create_cluster("skipping")
    _play(skipping)
    monkeypatch.setattr(runner, "_run_unless_idle", lambda cache, name, sync, kinds, cluster, version: sync(cluster))
    every = services.create_cluster("every-step")
    _play(every)
    assert len(_story(skipping)) > 30
    assert _story(skipping) == _story(every)


def _conditions(cluster: Cluster, name: str) -> dict[str, tuple[str, str, str]]:
    body = store.get(cluster, "Deployment", "default", name)
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in body["status"]["conditions"]}


def _spec(cluster: Cluster, name: str, **changes: Any) -> None:
    def change(body: Obj) -> None:
        body["spec"].update(changes)

    store.patch(cluster, "Deployment", "default", name, change, "kubectl")


def test_a_paused_deployment_scales_proportionally_and_rolls_only_once_resumed(cluster: Cluster) -> None:
    """pkg/controller/deployment sync.go: paused, no new ReplicaSet and no rollout; a scale is spread
    over the active ReplicaSets in proportion (the docs' proportional-scaling example's arithmetic)."""
    body = json.loads(deployment_yaml("web", 10, cpu="10m"))
    body["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
    create(cluster, node_yaml("node01", cpu="8"), node_yaml("node02", cpu="8"), json.dumps(body))
    reconcile(cluster)
    _set_image(cluster, "web", "soscscs/myapp:v2")
    assert deployment.sync_deployments(cluster)  # the new ReplicaSet, at replicas + maxSurge - 10 = 3
    _spec(cluster, "web", paused=True)
    reconcile(cluster)
    assert _conditions(cluster, "web")["Progressing"] == ("Unknown", "DeploymentPaused", "Deployment is paused")
    sets = _replica_sets(cluster)
    assert (sets["soscscs/myapp:v1"]["spec"]["replicas"], sets["soscscs/myapp:v2"]["spec"]["replicas"]) == (10, 3)

    _spec(cluster, "web", replicas=15)  # 18 allowed, 5 to add: 10*18/13 → +4 to the old, 3*18/13 → +1 to the new
    reconcile(cluster)
    sets = _replica_sets(cluster)
    assert (sets["soscscs/myapp:v1"]["spec"]["replicas"], sets["soscscs/myapp:v2"]["spec"]["replicas"]) == (14, 4)
    assert [e["message"] for e in events(cluster) if e["reason"] == "ScalingReplicaSet"][-2:] == [
        f"Scaled up replica set {sets['soscscs/myapp:v1']['metadata']['name']} from 10 to 14",
        f"Scaled up replica set {sets['soscscs/myapp:v2']['metadata']['name']} from 3 to 4",
    ]
    _set_image(cluster, "web", "soscscs/myapp:v3")  # a template change while paused makes no ReplicaSet
    reconcile(cluster)
    assert set(_replica_sets(cluster)) == {"soscscs/myapp:v1", "soscscs/myapp:v2"}
    assert store.get(cluster, "Deployment", "default", "web")["status"].get("updatedReplicas", 0) == 0

    _spec(cluster, "web", paused=False)
    assert deployment.sync_deployments(cluster)
    assert _conditions(cluster, "web")["Progressing"] == ("Unknown", "DeploymentResumed", "Deployment is resumed")
    reconcile(cluster)
    sets = _replica_sets(cluster)
    assert sets["soscscs/myapp:v3"]["spec"]["replicas"] == 15
    assert sets["soscscs/myapp:v1"]["spec"]["replicas"] == sets["soscscs/myapp:v2"]["spec"]["replicas"] == 0
    assert _conditions(cluster, "web")["Progressing"][:2] == ("True", "NewReplicaSetAvailable")


def test_a_scale_during_a_rollout_is_spread_in_proportion(cluster: Cluster) -> None:
    """isScalingEvent: a rolling Deployment scaled mid-rollout is sync()ed (proportionally) first."""
    body = json.loads(deployment_yaml("web", 10, cpu="10m"))
    body["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
    create(cluster, node_yaml("node01", cpu="8"), node_yaml("node02", cpu="8"), json.dumps(body))
    reconcile(cluster)
    _set_image(cluster, "web", "soscscs/myapp:v2")
    assert deployment.sync_deployments(cluster)  # the new ReplicaSet at 3
    _spec(cluster, "web", replicas=15)
    assert deployment.sync_deployments(cluster)
    sets = _replica_sets(cluster)
    assert (sets["soscscs/myapp:v1"]["spec"]["replicas"], sets["soscscs/myapp:v2"]["spec"]["replicas"]) == (14, 4)
    reconcile(cluster)
    sets = _replica_sets(cluster)
    assert (sets["soscscs/myapp:v1"]["spec"]["replicas"], sets["soscscs/myapp:v2"]["spec"]["replicas"]) == (0, 15)
