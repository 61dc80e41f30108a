"""The real kubectl on the workload controllers: DaemonSets (tolerated nodes only, and why the tainted
one is skipped), StatefulSets (ordered), Jobs (complete), Deployment rollouts (history, undo,
`wait --for=condition=Available`), Services (`expose`, endpoints), ConfigMaps/Secrets/
ServiceAccounts, and the paced lifecycle (ContainerCreating, Terminating for the grace period)."""

from __future__ import annotations

import sqlite3

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: fluentd:v1
"""

STATEFULSET = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
  selector: {app: web}
  ports:
  - port: 80
    name: http
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
          name: http
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  completions: 3
  parallelism: 2
  template:
    metadata:
      annotations: {clusterviz.io/run-seconds: "1"}
    spec:
      restartPolicy: Never
      containers:
      - name: pi
        image: perl:5.34
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(200)"]
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: myapp
spec:
  replicas: 3
  selector:
    matchLabels: {app: myapp}
  template:
    metadata:
      labels: {app: myapp}
    spec:
      containers:
      - name: myapp
        image: soscscs/myapp:v1
        ports:
        - containerPort: 80
        resources:
          requests: {cpu: 100m}
"""

EXTRAS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: demo, level: "3"}
---
apiVersion: v1
kind: Secret
metadata: {name: password}
stringData: {password: s3cret}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot}
"""


def _pod_changes(cluster: Cluster, prefix: str) -> list[tuple[str, str, str]]:
    """(type, pod, phase) of every logged write to the pods named `prefix*`, in order."""
    import json

    with sqlite3.connect(f"file:{cluster.server.db}?mode=ro", uri=True, timeout=10) as db:
        rows = db.execute(
            "SELECT ch.type, ch.name, ch.body FROM clusterviz_change ch JOIN clusterviz_cluster c "
            "ON ch.cluster_id = c.id WHERE c.slug = ? AND ch.kind = 'Pod' AND ch.name LIKE ? "
            "ORDER BY ch.resource_version",
            (cluster.slug, prefix + "%"),
        ).fetchall()
    return [(str(t), str(n), json.loads(b).get("status", {}).get("phase", "")) for t, n, b in rows]


def _running(cluster: Cluster, prefix: str, count: int) -> dict[str, dict]:
    def ready() -> dict[str, dict] | None:
        pods = {k: v for k, v in cluster.pods().items() if k.startswith(f"default/{prefix}")}
        live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]
        if len(live) == count and all(p["status"].get("phase") == "Running" for p in live):
            return pods
        return None

    return cluster.wait(ready, 20, f"{count} {prefix} pods running")


def test_daemonset_runs_on_the_tolerated_nodes_and_describe_says_why_not_the_tainted_one(cluster: Cluster) -> None:
    cluster.kubectl("taint", "node", "node03", "dedicated=gpu:NoSchedule")
    assert (
        cluster.kubectl("apply", "-f", cluster.write("ds.yaml", DAEMONSET)).stdout == "daemonset.apps/agent created\n"
    )
    pods = _running(cluster, "agent-", 2)
    assert sorted(p["spec"]["nodeName"] for p in pods.values()) == ["node01", "node02"]
    cluster.wait(
        lambda: cluster.kubectl("get", "ds", "agent").rows()[1][1:6] == ["2", "2", "2", "2", "2"], 10, "ds status"
    )
    header, row = cluster.kubectl("get", "ds").rows()
    assert header == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE"]
    assert row[:7] == ["agent", "2", "2", "2", "2", "2", "<none>"]
    status = cluster.kubectl("rollout", "status", "ds/agent", "--timeout=20s", timeout=30).stdout
    assert 'daemon set "agent" successfully rolled out' in status
    described = cluster.kubectl("describe", "ds", "agent").stdout
    assert "Desired Number of Nodes Scheduled: 2" in described
    assert "node03: node(s) had untolerated taint {dedicated: gpu}" in described
    assert "NodeNotEligible" in described
    # the scheduler saw each daemon pod pinned to its node (matchFields), so describe pod shows it
    name = next(k.split("/")[1] for k, p in pods.items() if p["spec"]["nodeName"] == "node01")
    pod_text = cluster.kubectl("get", "pod", name, "-o", "yaml").stdout
    assert "matchFields" in pod_text
    assert "node.kubernetes.io/unschedulable" in pod_text
    # untainting node03 brings a pod there
    cluster.kubectl("taint", "node", "node03", "dedicated=gpu:NoSchedule-")
    pods = _running(cluster, "agent-", 3)
    assert sorted(p["spec"]["nodeName"] for p in pods.values()) == ["node01", "node02", "node03"]


def test_statefulset_scales_up_in_order(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("sts.yaml", STATEFULSET))
    _running(cluster, "web-", 3)
    log = _pod_changes(cluster, "web-")
    added = [name for kind, name, _ in log if kind == "ADDED"]
    assert added == ["web-0", "web-1", "web-2"]
    first_running = {name: i for i, (_, name, phase) in reversed(list(enumerate(log))) if phase == "Running"}
    added_at = {name: i for i, (kind, name, _) in enumerate(log) if kind == "ADDED"}
    assert added_at["web-1"] > first_running["web-0"]
    assert added_at["web-2"] > first_running["web-1"]
    status = cluster.kubectl("rollout", "status", "sts/web", "--timeout=20s", timeout=30).stdout
    assert status == "partitioned roll out complete: 3 new pods have been updated...\n"  # partition 0 is defaulted
    assert cluster.kubectl("get", "sts", "web").rows()[1][1] == "3/3"
    assert cluster.kubectl("get", "sts").rows()[0] == ["NAME", "READY", "AGE"]
    cluster.kubectl("scale", "sts", "web", "--replicas=1")
    cluster.wait(lambda: set(cluster.pods()) == {"default/web-0"}, 20, "scale down to web-0")
    deleted = [name for kind, name, _ in _pod_changes(cluster, "web-") if kind == "DELETED"]
    assert deleted == ["web-2", "web-1"]


def test_job_completes(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("job.yaml", JOB))
    cluster.kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=40s", timeout=50)
    header, row = cluster.kubectl("get", "jobs").rows()
    assert header == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert row[:3] == ["pi", "Complete", "3/3"]
    pods = cluster.kubectl("get", "pods", "-l", "job-name=pi").rows()
    assert len(pods) == 4
    assert {r[2] for r in pods[1:]} == {"Completed"}
    assert {r[1] for r in pods[1:]} == {"0/1"}


def test_rollout_history_undo_and_wait_available(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("deploy.yaml", DEPLOYMENT))
    cluster.kubectl("wait", "--for=condition=Available", "deploy/myapp", "--timeout=30s", timeout=40)
    status = cluster.kubectl("rollout", "status", "deploy/myapp", "--timeout=30s", timeout=40)
    assert 'deployment "myapp" successfully rolled out' in status.stdout
    cluster.kubectl("set", "image", "deploy/myapp", "myapp=soscscs/myapp:v2")
    status = cluster.kubectl("rollout", "status", "deploy/myapp", "--timeout=30s", timeout=40)
    assert 'deployment "myapp" successfully rolled out' in status.stdout
    history = cluster.kubectl("rollout", "history", "deploy/myapp").rows()
    assert history[0] == ["deployment.apps/myapp"]
    assert [r[0] for r in history[2:] if r] == ["1", "2"]
    assert "soscscs/myapp:v1" in cluster.kubectl("rollout", "history", "deploy/myapp", "--revision=1").stdout
    assert cluster.kubectl("rollout", "undo", "deploy/myapp").stdout == "deployment.apps/myapp rolled back\n"
    cluster.kubectl("rollout", "status", "deploy/myapp", "--timeout=30s", timeout=40)
    image = cluster.kubectl("get", "deploy", "myapp", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image.stdout == "soscscs/myapp:v1"
    history = cluster.kubectl("rollout", "history", "deploy/myapp").rows()
    assert [r[0] for r in history[2:] if r] == ["2", "3"]
    pods = _running(cluster, "myapp-", 3)
    assert {
        p["spec"]["containers"][0]["image"] for p in pods.values() if not p["metadata"].get("deletionTimestamp")
    } == {"soscscs/myapp:v1"}
    strategy = cluster.kubectl("get", "deploy", "myapp", "-o", "jsonpath={.spec.strategy.rollingUpdate.maxSurge}")
    assert strategy.stdout == "25%"


def test_expose_a_deployment_and_its_endpoints(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("deploy.yaml", DEPLOYMENT))
    pods = _running(cluster, "myapp-", 3)
    assert cluster.kubectl("expose", "deployment", "myapp", "--port", "80").stdout == "service/myapp exposed\n"
    header, row = cluster.kubectl("get", "svc", "myapp").rows()
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert row[1] == "ClusterIP"
    assert row[2].startswith("10.")
    assert row[3:5] == ["<none>", "80/TCP"]
    ips = sorted(f"{p['status']['podIP']}:80" for p in pods.values())

    def listed() -> bool:
        rows = cluster.kubectl("get", "endpoints", "myapp").rows()
        return len(rows) == 2 and sorted(rows[1][1].split(",")) == ips

    cluster.wait(listed, 10, "the endpoints of the ready pods")
    described = cluster.kubectl("describe", "svc", "myapp").stdout
    assert "Type:                     ClusterIP" in described
    slices = cluster.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=myapp").rows()
    assert slices[0] == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    cluster.kubectl("delete", "svc", "myapp")
    # what remains is the API server's own: the `kubernetes` Service's endpoints
    gone = "endpoints/kubernetes\n"
    cluster.wait(lambda: cluster.kubectl("get", "endpoints", "-o", "name").stdout == gone, 10, "endpoints gone")


def test_configmaps_secrets_and_service_accounts(cluster: Cluster) -> None:
    applied = cluster.kubectl("apply", "-f", cluster.write("extras.yaml", EXTRAS)).stdout
    assert applied.splitlines() == [
        "configmap/settings created",
        "secret/password created",
        "serviceaccount/robot created",
    ]
    assert cluster.kubectl("get", "cm", "settings").rows()[1][:2] == ["settings", "2"]
    assert cluster.kubectl("get", "secret", "password").rows()[1][:3] == ["password", "Opaque", "1"]
    assert cluster.kubectl("get", "sa", "robot").rows()[1][:2] == ["robot", "0"]
    secret = cluster.kubectl("get", "secret", "password", "-o", "jsonpath={.data.password}").stdout
    assert secret == "czNjcmV0"
    # applied again: unchanged
    assert "configmap/settings unchanged" in cluster.kubectl("apply", "-f", "extras.yaml").stdout
    cluster.kubectl("delete", "cm", "settings")
    cluster.kubectl("delete", "secret", "password")
    cluster.kubectl("delete", "sa", "robot")
    # what remains is the serviceaccount controller's: every namespace has its `default` account
    assert cluster.kubectl("get", "cm,secret,sa", "-o", "name").stdout == "serviceaccount/default\n"


def test_slow_pace_shows_container_creating_and_terminating(cluster: Cluster) -> None:
    cluster.action({"action": "pace", "pace": "slow", "delayMs": 100})
    cluster.kubectl("run", "slow", "--image=nginx:1.27")

    def status() -> str:
        rows = cluster.kubectl("get", "pod", "slow").rows()
        return rows[1][2] if len(rows) == 2 else ""

    cluster.wait(lambda: status() == "ContainerCreating", 10, "ContainerCreating")
    assert cluster.kubectl("get", "pod", "slow").rows()[1][1] == "0/1"
    cluster.wait(lambda: status() == "Running", 15, "Running after the pull")
    cluster.kubectl("delete", "pod", "slow", "--grace-period=3", "--wait=false")
    assert status() == "Terminating"
    meta = cluster.pods()["default/slow"]["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 3
    cluster.wait(lambda: "default/slow" not in cluster.pods(), 10, "the pod to go after its grace period")
