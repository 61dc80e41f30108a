"""Namespaces as in Kubernetes (NamespaceLifecycle, labels, deletion through Terminating), the
built-in system PriorityClasses, `cluster-info`, `auth can-i` and `auth whoami` for the owner."""

from __future__ import annotations

import json

import pytest

from .conftest import Cluster
from .test_api import call

pytestmark = pytest.mark.slow

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  {extra}
  containers: [{{name: c, image: nginx}}]
"""
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n"


def pod(name: str, namespace: str, extra: str = "") -> str:
    return POD.format(name=name, namespace=namespace, extra=extra)


def test_writes_into_a_missing_namespace_are_not_found(cluster: Cluster) -> None:
    before = cluster.dump()
    refused = cluster.kubectl("apply", "-f", cluster.write("p.yaml", pod("p", "nope")), ok=False)
    assert refused.stderr.strip() == (
        'Error from server (NotFound): error when creating "p.yaml": namespaces "nope" not found'
    )
    dry = cluster.kubectl("create", "-f", "p.yaml", "--dry-run=server", ok=False)
    assert 'namespaces "nope" not found' in dry.stderr
    assert cluster.dump() == before


def test_label_annotate_and_delete_a_namespace(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("ns.yaml", NAMESPACE))
    assert cluster.kubectl("label", "ns", "team", "env=dev").stdout.strip() == "namespace/team labeled"
    assert cluster.kubectl("annotate", "ns", "default", "note=hi").stdout.strip() == "namespace/default annotated"
    labels = json.loads(cluster.kubectl("get", "ns", "team", "-o", "json").stdout)["metadata"]["labels"]
    assert labels == {"kubernetes.io/metadata.name": "team", "env": "dev"}
    default = json.loads(cluster.kubectl("get", "ns", "default", "-o", "json").stdout)
    assert default["metadata"]["annotations"] == {"note": "hi"}

    cluster.kubectl("apply", "-f", cluster.write("p.yaml", pod("p", "team")))
    cluster.wait_running("p", namespace="team")
    # at the classroom pace the pod takes its grace period to stop, so the namespace stays Terminating
    cluster.action({"action": "pace", "pace": "slow", "delayMs": 100})
    deleting = call(cluster, "DELETE", "/api/v1/namespaces/team")
    assert deleting.status == 200 and deleting.json()["status"]["phase"] == "Terminating"
    late = cluster.kubectl("apply", "-f", cluster.write("q.yaml", pod("q", "team")), ok=False)
    assert "unable to create new content in namespace team because it is being terminated" in late.stderr
    cluster.wait(lambda: cluster.kubectl("get", "ns", "team", ok=None).returncode != 0, 30, "the namespace to go")
    assert not [key for key in cluster.pods() if key.startswith("team/")]
    assert "team" not in cluster.kubectl("get", "ns").stdout
    immortal = cluster.kubectl("delete", "ns", "default", ok=False)
    assert 'namespaces "default" is forbidden: this namespace may not be deleted' in immortal.stderr


def test_system_priority_classes(cluster: Cluster) -> None:
    listed = cluster.kubectl("get", "priorityclasses").rows()
    assert listed[1][:3] == ["system-cluster-critical", "2000000000", "false"]
    assert listed[2][:3] == ["system-node-critical", "2000001000", "false"]
    cluster.kubectl(
        "apply", "-f", cluster.write("c.yaml", pod("c", "default", "priorityClassName: system-node-critical"))
    )
    assert cluster.pods()["default/c"]["spec"]["priority"] == 2000001000


def test_cluster_info_and_auth_for_the_owner(cluster: Cluster) -> None:
    info = cluster.kubectl("cluster-info")
    host = cluster.server.url.removeprefix("http://")  # the kubeconfig's server, its userinfo included
    assert f"Kubernetes control plane is running at http://clusterviz:{cluster.token}@{host}/k8s/" in info.stdout
    assert cluster.kubectl("auth", "can-i", "create", "pods").stdout.strip() == "yes"
    assert cluster.kubectl("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    whoami = cluster.kubectl("auth", "whoami").stdout
    assert "clusterviz:owner" in whoami and "system:authenticated" in whoami
