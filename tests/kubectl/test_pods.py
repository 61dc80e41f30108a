"""The real kubectl on pods and workloads: create/apply/run, get (-o wide, -A, -o yaml, -w), describe,
delete (graceful), Deployments (the seed's myapp.yaml with nodeName), scale, events and errors."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import yaml

from .conftest import Cluster, KubeServer

pytestmark = pytest.mark.slow

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: {name}}}
spec:
  {extra}
  containers:
  - name: {name}
    image: {image}
    resources:
      requests: {{cpu: {cpu}, memory: 128Mi}}
"""

# The seed notes' manifest, verbatim (trailing blanks included).
MYAPP_YAML = """\
apiVersion: apps/v1  
kind: Deployment  
metadata:
  name: myapp
spec:
  replicas: 3
  selector:
    matchLabels:
      app: myapp
  template:
    metadata:
      labels:
        app: myapp
    spec:
      nodeName: node01
      containers:
      - name: myapp
        image: soscscs/myapp:v1
        ports:
        - containerPort: 80
"""  # noqa: W291


def pod(name: str, image: str = "nginx:1.25", cpu: str = "100m", extra: str = "") -> str:
    return POD.format(name=name, image=image, cpu=cpu, extra=extra)


def events_of(describe: str) -> list[list[str]]:
    """The rows of describe's Events table: [type, reason, age, from, message...]."""
    section = describe.split("Events:", 1)[1].splitlines()[3:]
    return [line.split() for line in section if line.strip()]


def test_create_and_apply_a_pod(cluster: Cluster) -> None:
    manifest = cluster.write("pod.yaml", pod("nginx"))
    assert cluster.kubectl("create", "-f", manifest).stdout == "pod/nginx created\n"
    running = cluster.wait_running("nginx")["default/nginx"]
    assert running["spec"]["nodeName"] in ("node01", "node02", "node03")
    assert cluster.changes("Pod", "nginx")[0] == ("ADDED", "kubectl")

    again = cluster.kubectl("create", "-f", manifest, ok=False)
    assert 'Error from server (AlreadyExists): error when creating "pod.yaml": pods "nginx" already exists' in (
        again.stderr
    )

    web = cluster.write("web.yaml", pod("web", image="nginx:1.25"))
    assert cluster.kubectl("apply", "-f", web).stdout == "pod/web created\n"
    assert cluster.kubectl("apply", "-f", web).stdout == "pod/web unchanged\n"
    cluster.write("web.yaml", pod("web", image="nginx:1.26"))
    assert cluster.kubectl("apply", "-f", web).stdout == "pod/web configured\n"
    stored = cluster.pods()["default/web"]
    assert stored["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert "kubectl.kubernetes.io/last-applied-configuration" in stored["metadata"]["annotations"]

    # a real API server refuses other pod spec changes
    cluster.write("web.yaml", pod("web", image="nginx:1.26", cpu="200m"))
    refused = cluster.kubectl("apply", "-f", web, ok=False)
    assert 'The Pod "web" is invalid: spec: Forbidden: pod updates may not change fields' in refused.stderr
    assert cluster.pods()["default/web"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"

    as_yaml = yaml.safe_load(cluster.kubectl("get", "pod", "nginx", "-o", "yaml").stdout)
    assert (as_yaml["apiVersion"], as_yaml["kind"]) == ("v1", "Pod")
    assert as_yaml["metadata"]["uid"] == running["metadata"]["uid"]
    assert as_yaml["status"]["phase"] == "Running"
    assert as_yaml["status"]["podIPs"] == [{"ip": as_yaml["status"]["podIP"]}]
    assert as_yaml["status"]["qosClass"] == "Burstable"


def test_get_pods_wide_all_namespaces_and_events(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("p.yaml", pod("x", extra="nodeName: node02")))
    missing = cluster.kubectl("run", "t1", "--image=nginx", "-n", "team", ok=False)  # as on a real cluster
    assert 'namespaces "team" not found' in missing.stderr
    cluster.kubectl(
        "apply", "-f", cluster.write("ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n")
    )
    cluster.kubectl("run", "t1", "--image=nginx", "-n", "team")
    cluster.wait_running("x")
    cluster.wait_running("t1", namespace="team")

    wide = cluster.kubectl("get", "pods", "-o", "wide").rows()
    assert wide[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    (row,) = wide[1:]
    assert row[:4] == ["x", "1/1", "Running", "0"]
    assert row[5].startswith("10.244.") and row[6:] == ["node02", "<none>", "<none>"]

    everywhere = cluster.kubectl("get", "pods", "-A").rows()
    assert everywhere[0][:2] == ["NAMESPACE", "NAME"]
    assert [(r[0], r[1], r[3]) for r in everywhere[1:]] == [("default", "x", "Running"), ("team", "t1", "Running")]

    events = cluster.kubectl("get", "events").rows()
    assert events[0] == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    reasons = [(r[2], r[3]) for r in events[1:]]
    assert reasons == [("Pulling", "pod/x"), ("Pulled", "pod/x"), ("Created", "pod/x"), ("Started", "pod/x")]
    team = cluster.kubectl("get", "events", "-n", "team").rows()
    assert ("Scheduled", "pod/t1") in [(r[2], r[3]) for r in team[1:]]


def test_describe_pod_scheduled_then_started(cluster: Cluster) -> None:
    cluster.kubectl(
        "create", "-f", cluster.write("x.yaml", pod("x", extra="nodeSelector: {kubernetes.io/hostname: node01}"))
    )
    cluster.wait_running("x")
    text = cluster.kubectl("describe", "pod", "x").stdout
    # a real v1.32 cluster's layout: "Service Account:" sets the width of the labels
    assert "Service Account:  default\n" in text
    assert "Node:             node01/192.168.0.10" in text
    assert "Status:           Running" in text
    assert "/var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-" in text
    assert "Type:                    Projected (a volume that contains injected data from multiple sources)" in text
    rows = events_of(text)
    assert [r[1] for r in rows] == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    assert " ".join(rows[0][4:]) == "Successfully assigned default/x to node01"
    assert rows[0][3] == "default-scheduler"

    # spec.nodeName: straight to the kubelet, no Scheduled event
    cluster.kubectl("create", "-f", cluster.write("direct.yaml", pod("direct", extra="nodeName: node02")))
    cluster.wait_running("direct")
    assert [r[1] for r in events_of(cluster.kubectl("describe", "pod", "direct").stdout)] == [
        "Pulling",
        "Pulled",
        "Created",
        "Started",
    ]


def test_describe_pod_failed_scheduling(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("big.yaml", pod("big", cpu="100")))
    cluster.wait(
        lambda: any(e["reason"] == "FailedScheduling" for e in cluster.state()["objects"].get("Event", [])),
        what="FailedScheduling",
    )
    assert cluster.kubectl("get", "pods").rows()[1][:3] == ["big", "0/1", "Pending"]
    text = cluster.kubectl("describe", "pod", "big").stdout
    (row,) = events_of(text)
    assert row[:2] == ["Warning", "FailedScheduling"]
    message = " ".join(row[4:])
    assert message.startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert cluster.pods()["default/big"]["status"]["phase"] == "Pending"


def test_deployment_from_the_seed_notes_and_scale(cluster: Cluster) -> None:
    manifest = cluster.write("myapp.yaml", MYAPP_YAML)
    assert cluster.kubectl("apply", "-f", manifest).stdout == "deployment.apps/myapp created\n"

    def running_on_node01(count: int) -> Any:
        pods = [p for p in cluster.pods().values() if p["metadata"]["name"].startswith("myapp-")]
        ok = len(pods) == count and all(
            p["status"].get("phase") == "Running" and p["spec"].get("nodeName") == "node01" for p in pods
        )
        return pods if ok else None

    pods = cluster.wait(lambda: running_on_node01(3), what="3 myapp pods running on node01")
    wide = cluster.kubectl("get", "pods", "-o", "wide").rows()[1:]
    assert len(wide) == 3
    assert all(r[0].startswith("myapp-") and r[2] == "Running" and r[6] == "node01" for r in wide)
    deployments = cluster.kubectl("get", "deployments").rows()
    assert deployments[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert deployments[1][:4] == ["myapp", "3/3", "3", "3"]
    rs = cluster.kubectl("get", "replicasets").rows()[1]
    assert rs[0].startswith("myapp-") and rs[1:4] == ["3", "3", "3"]
    # the pods never went through the scheduler
    first = pods[0]["metadata"]["name"]
    assert [r[1] for r in events_of(cluster.kubectl("describe", "pod", first).stdout)] == [
        "Pulling",
        "Pulled",
        "Created",
        "Started",
    ]

    assert cluster.kubectl("apply", "-f", manifest).stdout == "deployment.apps/myapp unchanged\n"
    out = cluster.kubectl("scale", "deployment", "myapp", "--replicas=5")
    assert out.stdout == "deployment.apps/myapp scaled\n"
    assert cluster.objects("Deployment")["default/myapp"]["spec"]["replicas"] == 5
    cluster.wait(lambda: running_on_node01(5), what="5 myapp pods")
    scale = yaml.safe_load(cluster.kubectl("get", "deployment", "myapp", "--subresource=scale", "-o", "yaml").stdout)
    assert (scale["kind"], scale["spec"]["replicas"], scale["status"]["selector"]) == ("Scale", 5, "app=myapp")
    assert cluster.changes("Deployment", "myapp")[0] == ("ADDED", "kubectl")


def test_run(cluster: Cluster) -> None:
    assert cluster.kubectl("run", "busy", "--image=busybox").stdout == "pod/busy created\n"
    stored = cluster.wait_running("busy")["default/busy"]
    assert stored["spec"]["containers"][0]["image"] == "busybox"
    assert stored["metadata"]["labels"] == {"run": "busy"}
    assert cluster.kubectl("get", "pod", "busy").rows()[1][:3] == ["busy", "1/1", "Running"]


class Collector:
    """Reads a running kubectl's stdout lines in a thread."""

    def __init__(self, process: Any) -> None:
        self.process = process
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def rows(self, name: str) -> list[list[str]]:
        return [line.split() for line in list(self.lines) if line.split()[:1] == [name]]

    def stop(self) -> str:
        self.process.terminate()
        _, err = self.process.communicate(timeout=5)
        return str(err)


def test_get_pods_watch_sees_pending_to_running(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("old.yaml", pod("old")))
    cluster.wait_running("old")
    watch = Collector(cluster.popen("get", "pods", "-w"))
    try:
        cluster.wait(lambda: watch.rows("old"), what="the initial list")
        cluster.kubectl("create", "-f", cluster.write("new.yaml", pod("new")))
        cluster.wait(lambda: any(r[2] == "Running" for r in watch.rows("new")), what="new Running in the watch")
        time.sleep(0.2)
    finally:
        watch.stop()
    assert watch.lines[0].split()[:3] == ["NAME", "READY", "STATUS"]
    statuses = [row[2] for row in watch.rows("new")]
    assert statuses[0] == "Pending"
    assert "ContainerCreating" in statuses
    assert statuses[-1] == "Running"
    assert [row[1] for row in watch.rows("new")][-1] == "1/1"
    # the watch started at the list's resourceVersion: the old pod is not replayed
    assert len(watch.rows("old")) == 1


def test_delete_pod_is_graceful(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("d.yaml", pod("doomed", extra="nodeName: node01")))
    uid = cluster.wait_running("doomed")["default/doomed"]["metadata"]["uid"]
    cluster.action({"action": "pace", "pace": "paused"})  # the kubelet waits for a step
    watch = Collector(cluster.popen("get", "pods", "-w"))
    deleting = cluster.popen("delete", "pod", "doomed")
    try:
        terminating = cluster.wait(
            lambda: cluster.pods().get("default/doomed", {}).get("metadata", {}).get("deletionTimestamp"),
            what="deletionTimestamp",
        )
        assert terminating
        cluster.wait(lambda: any(r[2] == "Terminating" for r in watch.rows("doomed")), what="Terminating")
        time.sleep(0.3)
        assert deleting.poll() is None, "kubectl delete must wait for the pod to go"
        cluster.action({"action": "step", "steps": 1})  # the kubelet removes the terminating pod
        out, err = deleting.communicate(timeout=10)
    finally:
        if deleting.poll() is None:
            deleting.kill()
        watch.stop()
    assert deleting.returncode == 0, err
    assert out == 'pod "doomed" deleted\n'
    assert "default/doomed" not in cluster.pods()
    assert cluster.changes("Pod", "doomed")[-2:] == [("MODIFIED", "kubectl"), ("DELETED", "kubelet")]
    killing = [e for e in cluster.state()["objects"]["Event"] if e["reason"] == "Killing"]
    assert [e["involvedObject"]["uid"] for e in killing] == [uid]


def test_errors_are_kubernetes_status(cluster: Cluster, kube_server: KubeServer) -> None:
    missing = cluster.kubectl("get", "pod", "x", ok=False)
    assert missing.stderr.strip() == 'Error from server (NotFound): pods "x" not found'
    assert cluster.kubectl("describe", "pod", "x", ok=False).stderr.strip() == (
        'Error from server (NotFound): pods "x" not found'
    )
    assert 'Error from server (NotFound): deployments.apps "nope" not found' in (
        cluster.kubectl("get", "deployment", "nope", ok=False).stderr
    )
    bad = cluster.write("bad.yaml", pod("bad1", cpu="abc"))
    invalid = cluster.kubectl("create", "-f", bad, ok=False)
    # a Quantity that does not parse is a decoding error (400), as upstream
    assert (
        'Error from server (BadRequest): error when creating "bad.yaml": Pod in version "v1" cannot be handled '
        "as a Pod: quantities must match the regular expression" in invalid.stderr
    )
    assert "default/bad1" not in cluster.pods()

    cluster.kubectl("run", "p", "--image=nginx")
    logs = cluster.kubectl("logs", "p", ok=False)
    assert "Error from server (BadRequest)" in logs.stderr and "no logs" in logs.stderr

    # never a 500 or an HTML page: unknown paths, bad bodies, wrong methods
    base = f"/k8s/{cluster.slug}"
    merge = "application/merge-patch+json"
    for method, path, body, content_type, code in (
        ("GET", "/apis/foo/v1/bars", None, "application/json", 404),
        ("GET", "/api/v1/namespaces/default/widgets", None, "application/json", 404),
        ("POST", "/api/v1/namespaces/default/pods", b"{not json", "application/json", 400),
        (
            "POST",
            "/api/v1/namespaces/default/pods",
            {"kind": "Node", "metadata": {"name": "n"}},
            "application/json",
            400,
        ),
        ("PATCH", "/api/v1/nodes/node01", {"spec": {"taints": "nope"}}, merge, 422),
        ("PATCH", "/api/v1/nodes/node01", {"spec": {}}, "application/json", 415),
        ("POST", "/api/v1/namespaces/default/pods", b"k8s\x00...", "application/vnd.kubernetes.protobuf", 400),
        ("DELETE", "/api/v1/namespaces/default/pods", None, "application/json", 405),
        ("PUT", "/version", None, "application/json", 405),
    ):
        headers = {"Content-Type": content_type, "Authorization": f"Bearer {cluster.token}"}
        response = kube_server.request(method, base + path, body, headers)
        assert response.status == code, (method, path, response.status, response.body)
        status = response.json()
        assert status["kind"] == "Status" and status["code"] == code
    missing_cluster = kube_server.request("GET", "/k8s/no-such-cluster/api/v1/nodes")
    assert missing_cluster.status == 404 and missing_cluster.json()["reason"] == "NotFound"


def test_a_pod_without_an_image_is_invalid(cluster: Cluster) -> None:
    manifest = "apiVersion: v1\nkind: Pod\nmetadata: {name: noimage}\nspec:\n  containers: [{name: a}]\n"
    refused = cluster.kubectl("create", "-f", cluster.write("noimage.yaml", manifest), ok=None)
    assert refused.returncode == 1
    assert 'The Pod "noimage" is invalid: spec.containers[0].image: Required value' in refused.stderr
