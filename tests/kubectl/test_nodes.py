"""The real kubectl on nodes: get, labels, taints (NoSchedule, NoExecute), cordon, describe, create/delete.

Commands are the seed notes' (`kubectl label nodes node01 qqq=1`, `kubectl taint node node01
qqq=value1:NoSchedule`, ...); every test checks kubectl's output and the cluster's resulting state.
"""

from __future__ import annotations

import pytest
import yaml

from .conftest import Cluster, KubeServer

pytestmark = pytest.mark.slow

POD_ON = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  nodeName: {node}
  containers:
  - name: app
    image: soscscs/myapp:v1
    resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}
"""


def test_kubeconfig_command(kube_server: KubeServer, cluster: Cluster) -> None:
    out = kube_server.manage("kubeconfig", cluster.slug, "--server", kube_server.url).stdout
    config = yaml.safe_load(out)
    assert config["kind"] == "Config"
    host = kube_server.url.removeprefix("http://")
    # over plain http the token rides as userinfo (Basic credentials), never in the logged path
    assert config["clusters"][0]["cluster"]["server"] == f"http://clusterviz:{cluster.token}@{host}/k8s/{cluster.slug}"
    assert config["current-context"] == config["contexts"][0]["name"]
    assert config["contexts"][0]["context"]["namespace"] == "default"
    assert config["users"][0]["user"] == {"token": cluster.token}  # the owner token: kubectl may write
    # the printed file is what the teacher uses: kubectl works with it as is
    cluster.kubeconfig.write_text(out)
    assert [row[0] for row in cluster.kubectl("get", "nodes").rows()[1:]] == ["node01", "node02", "node03"]

    read_only = yaml.safe_load(
        kube_server.manage("kubeconfig", cluster.slug, "--server", kube_server.url, "--read-only").stdout
    )
    assert read_only["users"][0]["user"] == {}
    assert read_only["clusters"][0]["cluster"]["server"] == f"{kube_server.url}/k8s/{cluster.slug}"
    missing = kube_server.manage("kubeconfig", "no-such-cluster", check=False)
    assert missing.returncode == 1
    assert 'cluster "no-such-cluster" not found' in missing.stderr


def test_get_nodes_wide_and_show_labels(cluster: Cluster) -> None:
    rows = cluster.kubectl("get", "nodes").rows()
    assert rows[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [(r[0], r[1], r[2], r[4]) for r in rows[1:]] == [
        ("node01", "Ready", "<none>", "v1.34.0"),
        ("node02", "Ready", "<none>", "v1.34.0"),
        ("node03", "Ready", "<none>", "v1.34.0"),
    ]
    labelled = cluster.kubectl("get", "nodes", "--show-labels").rows()
    assert labelled[0][-1] == "LABELS"
    assert labelled[1][-1] == "kubernetes.io/hostname=node01"
    wide = cluster.kubectl("get", "nodes", "-o", "wide").rows()
    assert wide[0][:7] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP"]
    assert wide[1][5] == "192.168.0.10"


def test_label_nodes_as_in_the_seed_notes(cluster: Cluster) -> None:
    assert cluster.kubectl("label", "nodes", "node01", "qqq=1").stdout == "node/node01 labeled\n"
    assert cluster.node("node01")["metadata"]["labels"]["qqq"] == "1"

    refused = cluster.kubectl("label", "nodes", "node01", "qqq=2", ok=False)
    assert "error: 'qqq' already has a value (1), and --overwrite is false" in refused.stderr
    assert cluster.node("node01")["metadata"]["labels"]["qqq"] == "1"

    cluster.kubectl("label", "nodes", "node02", "kgc=b")
    assert cluster.kubectl("label", "nodes", "node02", "kgc=a", "--overwrite").stdout == "node/node02 labeled\n"
    assert cluster.node("node02")["metadata"]["labels"]["kgc"] == "a"

    labels = {row[0]: row[-1] for row in cluster.kubectl("get", "nodes", "--show-labels").rows()[1:]}
    assert labels["node01"] == "kubernetes.io/hostname=node01,qqq=1"
    assert labels["node02"] == "kgc=a,kubernetes.io/hostname=node02"
    assert [row[0] for row in cluster.kubectl("get", "nodes", "-l", "kgc=a").rows()[1:]] == ["node02"]

    assert cluster.kubectl("label", "nodes", "node01", "qqq-").stdout == "node/node01 unlabeled\n"
    assert "qqq" not in cluster.node("node01")["metadata"]["labels"]
    # the browser's List-Watch names kubectl as the writer of each change
    assert cluster.changes("Node", "node01")[-2:] == [("MODIFIED", "kubectl"), ("MODIFIED", "kubectl")]


def test_taint_and_untaint_noschedule(cluster: Cluster) -> None:
    out = cluster.kubectl("taint", "node", "node01", "qqq=value1:NoSchedule")
    assert out.stdout == "node/node01 tainted\n"
    assert cluster.node("node01")["spec"]["taints"] == [{"key": "qqq", "value": "value1", "effect": "NoSchedule"}]
    again = cluster.kubectl("taint", "node", "node01", "qqq=value1:NoSchedule", ok=False)
    assert "already has qqq taint(s) with same effect(s) and --overwrite is false" in again.stderr

    describe = cluster.kubectl("describe", "node", "node01").stdout
    assert "Taints:             qqq=value1:NoSchedule" in describe

    # the scheduler keeps pods without a toleration off node01
    for name in ("a1", "a2", "a3"):
        cluster.kubectl("run", name, "--image=soscscs/myapp:v1")
    pods = cluster.wait_running("a1", "a2", "a3")
    assert {pods[f"default/{n}"]["spec"]["nodeName"] for n in ("a1", "a2", "a3")} <= {"node02", "node03"}

    assert cluster.kubectl("taint", "node", "node01", "qqq:NoSchedule-").stdout == "node/node01 untainted\n"
    assert "taints" not in cluster.node("node01")["spec"]
    assert cluster.changes("Node", "node01")[-1] == ("MODIFIED", "kubectl")


def test_noexecute_taint_evicts_the_pods(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("p.yaml", POD_ON.format(name="victim", node="node02")))
    cluster.wait_running("victim")

    assert cluster.kubectl("taint", "node", "node02", "evict=now:NoExecute").stdout == "node/node02 tainted\n"
    cluster.wait(lambda: "default/victim" not in cluster.pods(), what="the NoExecute eviction")
    (taint,) = cluster.node("node02")["spec"]["taints"]
    assert (taint["key"], taint["value"], taint["effect"]) == ("evict", "now", "NoExecute")
    assert taint["timeAdded"].endswith("Z")  # filled in by the server, as a real cluster does
    events = cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=victim").rows()
    reasons = [row[2] for row in events[1:]]
    assert "TaintManagerEviction" in reasons
    assert reasons[-1] == "Killing"


def test_cordon_and_uncordon(cluster: Cluster) -> None:
    assert cluster.kubectl("cordon", "node01").stdout == "node/node01 cordoned\n"
    spec = cluster.node("node01")["spec"]
    assert spec["unschedulable"] is True
    assert [t["key"] for t in spec["taints"]] == ["node.kubernetes.io/unschedulable"]
    status = {row[0]: row[1] for row in cluster.kubectl("get", "nodes").rows()[1:]}
    assert status == {"node01": "Ready,SchedulingDisabled", "node02": "Ready", "node03": "Ready"}
    assert cluster.kubectl("cordon", "node01").stdout == "node/node01 already cordoned\n"

    assert cluster.kubectl("uncordon", "node01").stdout == "node/node01 uncordoned\n"
    assert cluster.node("node01")["spec"] == {}
    assert cluster.changes("Node", "node01")[-2:] == [("MODIFIED", "kubectl"), ("MODIFIED", "kubectl")]


def test_describe_node(cluster: Cluster) -> None:
    cluster.kubectl("label", "nodes", "node01", "qqq=1")
    cluster.kubectl("taint", "node", "node01", "qqq=value1:NoSchedule")
    cluster.kubectl("create", "-f", cluster.write("p.yaml", POD_ON.format(name="busy", node="node01")))
    cluster.wait_running("busy")

    text = cluster.kubectl("describe", "node", "node01").stdout
    assert "Name:               node01" in text
    assert "qqq=1" in text and "kubernetes.io/hostname=node01" in text
    assert "Taints:             qqq=value1:NoSchedule" in text
    assert "Unschedulable:      false" in text
    allocatable = text.split("Allocatable:")[1].split("System Info:")[0]
    assert allocatable.split() == ["cpu:", "2", "memory:", "4Gi", "pods:", "110"]
    assert "Non-terminated Pods:          (1 in total)" in text
    pod_row = next(line.split() for line in text.splitlines() if " busy " in line)
    assert pod_row[:4] == ["default", "busy", "500m", "(25%)"]
    allocated = text.split("Allocated resources:")[1]
    assert "cpu                500m (25%)" in allocated
    assert "memory             256Mi (6%)" in allocated
    assert "HolderIdentity:  node01" in text  # the (simulated) node lease


def test_create_and_delete_a_node(cluster: Cluster) -> None:
    node = """\
apiVersion: v1
kind: Node
metadata:
  name: node04
  labels: {kubernetes.io/hostname: node04}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
"""
    assert cluster.kubectl("create", "-f", cluster.write("node.yaml", node)).stdout == "node/node04 created\n"
    created = cluster.node("node04")
    assert created["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert cluster.changes("Node", "node04") == [("ADDED", "kubectl")]
    rows = cluster.kubectl("get", "nodes").rows()
    assert rows[-1][:2] == ["node04", "Ready"]

    cluster.kubectl("create", "-f", cluster.write("p.yaml", POD_ON.format(name="on4", node="node04")))
    cluster.wait_running("on4")
    assert cluster.kubectl("delete", "node", "node04").stdout == 'node "node04" deleted\n'
    assert "node04" not in cluster.objects("Node")
    # the pod garbage collector removes pods bound to a node that no longer exists
    cluster.wait(lambda: "default/on4" not in cluster.pods(), what="the orphaned pod to go")
    missing = cluster.kubectl("get", "node", "node04", ok=False)
    assert 'Error from server (NotFound): nodes "node04" not found' in missing.stderr
