"""Objects kept as kube-apiserver keeps them: every known field round-trips (an empty `emptyDir: {}`
too), the API defaults and the DefaultTolerationSeconds admission are applied — and the scheduler
sees those tolerations."""

from __future__ import annotations

import json

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: full}
spec:
  volumes:
  - {name: cache, emptyDir: {}}
  containers:
  - name: web
    image: nginx
    env: [{name: MODE, value: fast}]
    ports: [{containerPort: 80}]
    volumeMounts: [{name: cache, mountPath: /cache}]
    livenessProbe: {httpGet: {path: /healthz, port: 80}, periodSeconds: 5}
  - name: side
    image: busybox:1.36
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000
        resources: {limits: {cpu: 500m}}
"""
EXPORTER = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  hostNetwork: true
  volumes: [{{name: scratch}}]
  containers:
  - name: exporter
    image: prom/node-exporter:v1.8.2
    ports: [{{containerPort: 9100}}]
    resources: {{limits: {{cpu: 100m, memory: 64Mi}}}}
"""


def test_every_field_round_trips_with_the_api_defaults(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("full.yaml", POD))
    pod = json.loads(cluster.kubectl("get", "pod", "full", "-o", "json").stdout)
    spec = pod["spec"]
    # the ServiceAccount admission plugin's token volume, after the pod's own
    cache, token = spec["volumes"]
    assert cache == {"name": "cache", "emptyDir": {}}
    assert token["name"].startswith("kube-api-access-") and len(token["name"]) == len("kube-api-access-") + 5
    assert token["projected"] == {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {
                "downwardAPI": {
                    "items": [
                        {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                    ]
                }
            },
        ],
        "defaultMode": 420,
    }
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    web, side = spec["containers"]
    assert web["env"] == [{"name": "MODE", "value": "fast"}]
    assert web["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert web["volumeMounts"] == [
        {"name": "cache", "mountPath": "/cache"},
        {"name": token["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
    ]
    assert web["livenessProbe"] == {
        "httpGet": {"path": "/healthz", "port": 80, "scheme": "HTTP"},
        "periodSeconds": 5,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert (web["imagePullPolicy"], side["imagePullPolicy"]) == ("Always", "IfNotPresent")
    for container in (web, side):
        assert container["terminationMessagePath"] == "/dev/termination-log"
        assert container["terminationMessagePolicy"] == "File"
        assert container["resources"] == {}
    assert spec["restartPolicy"] == "Always"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["securityContext"] == {}
    assert spec["tolerations"] == [
        {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
    ]
    described = cluster.kubectl("describe", "pod", "full").stdout
    assert "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s" in described
    assert "EmptyDir (a temporary directory that shares a pod's lifetime)" in described


def test_a_pods_own_toleration_is_kept_and_workloads_are_defaulted(cluster: Cluster) -> None:
    own = POD.replace("spec:\n  volumes:", "spec:\n  tolerations: [{operator: Exists}]\n  volumes:")
    cluster.kubectl("apply", "-f", cluster.write("own.yaml", own))
    assert cluster.pods()["default/full"]["spec"]["tolerations"] == [{"operator": "Exists"}]
    cluster.kubectl("apply", "-f", cluster.write("deploy.yaml", DEPLOYMENT))
    deployment = json.loads(cluster.kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (deployment["spec"]["revisionHistoryLimit"], deployment["spec"]["progressDeadlineSeconds"]) == (10, 600)
    template = deployment["spec"]["template"]["spec"]
    assert template["containers"][0]["imagePullPolicy"] == "IfNotPresent"  # a digest, no tag
    assert "tolerations" not in template  # DefaultTolerationSeconds admits pods, not templates
    # SetDefaults_Pod is a Pod's alone: a template keeps limits without requests, no enableServiceLinks
    assert template["containers"][0]["resources"] == {"limits": {"cpu": "500m"}}
    assert "enableServiceLinks" not in template and "hostNetwork" not in template


def test_a_host_network_pod_binds_its_ports_on_the_node(cluster: Cluster) -> None:
    """SetDefaults_Pod: requests default to limits and, with hostNetwork, hostPort to containerPort;
    SetDefaults_Volume: a volume without a source is an emptyDir. So a fourth node exporter on three
    nodes stays Pending at NodePorts, as on a real cluster."""
    for index in range(4):
        text = EXPORTER.format(name=f"exporter{index}")
        cluster.kubectl("create", "-f", cluster.write(f"exporter{index}.yaml", text))
    pod = json.loads(cluster.kubectl("get", "pod", "exporter0", "-o", "json").stdout)
    container = pod["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"}]
    assert container["resources"]["requests"] == {"cpu": "100m", "memory": "64Mi"}
    assert pod["spec"]["volumes"][0] == {"name": "scratch", "emptyDir": {}}
    assert pod["spec"]["enableServiceLinks"] is True

    def verdict() -> str | None:
        events = json.loads(cluster.kubectl("get", "events", "-o", "json").stdout)["items"]
        return next((e["message"] for e in events if e["reason"] == "FailedScheduling"), None)

    message = cluster.wait(verdict, what="the fourth exporter's verdict")
    assert message.startswith("0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.")
    placed = {p["spec"].get("nodeName") for p in cluster.pods().values()}
    assert {"node01", "node02", "node03"} <= placed


def test_the_scheduler_sees_the_default_tolerations(cluster: Cluster) -> None:
    for node in ("node01", "node02", "node03"):
        cluster.kubectl("taint", "node", node, "node.kubernetes.io/not-ready:NoExecute")
    cluster.kubectl("apply", "-f", cluster.write("full.yaml", POD))
    pods = cluster.wait_running("full")
    assert pods["default/full"]["spec"]["nodeName"] in ("node01", "node02", "node03")


def test_server_side_apply_records_managed_fields(cluster: Cluster) -> None:
    cluster.kubectl("apply", "--server-side", "-f", cluster.write("full.yaml", POD))
    shown = json.loads(cluster.kubectl("get", "pod", "full", "-o", "json", "--show-managed-fields").stdout)
    (entry,) = shown["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["fieldsType"]) == ("kubectl", "Apply", "FieldsV1")
    web = entry["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert (
        web["."] == {}
        and web["f:image"] == {}
        and web["f:env"] == {'k:{"name":"MODE"}': {".": {}, "f:name": {}, "f:value": {}}}
    )
    assert entry["fieldsV1"]["f:spec"]["f:volumes"]['k:{"name":"cache"}']["f:emptyDir"] == {}
    rv = shown["metadata"]["resourceVersion"]
    again = cluster.kubectl("apply", "--server-side", "-f", "full.yaml")
    assert again.stdout.strip() == "pod/full serverside-applied"
    kept = json.loads(cluster.kubectl("get", "pod", "full", "-o", "json", "--show-managed-fields").stdout)
    assert kept["metadata"]["managedFields"] == shown["metadata"]["managedFields"]
    hidden = json.loads(cluster.kubectl("get", "pod", "full", "-o", "json").stdout)
    assert "managedFields" not in hidden["metadata"]
    assert int(hidden["metadata"]["resourceVersion"]) >= int(rv)
