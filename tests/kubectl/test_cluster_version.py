"""A cluster's API server is the Kubernetes release the cluster runs (1.34 to 1.37, chosen by its
owner): `kubectl version` reports it, `kubectl explain` and field validation read that release's
schema (kube_schema.json, from each release's client models), and its nodes' kubelets run it."""

from __future__ import annotations

import json

from .conftest import Cluster

# NodeStatus.declaredFeatures is new in 1.35 (KEP-5328, the field NodeDeclaredFeatures reads)
DECLARING_NODE = """\
apiVersion: v1
kind: Node
metadata: {name: declaring, labels: {kubernetes.io/hostname: declaring}}
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
  declaredFeatures: [GuaranteedQoSPodCPUResize]
"""


def set_version(cluster: Cluster, version: str) -> None:
    headers = {"Authorization": f"Bearer {cluster.token}"}
    response = cluster.server.request("PUT", f"/api/clusters/{cluster.slug}/version", {"version": version}, headers)
    assert response.status == 200, response.body


def server_version(cluster: Cluster) -> dict[str, str]:
    return json.loads(cluster.kubectl("version", "-o", "json").stdout)["serverVersion"]


def test_kubectl_version_reports_the_clusters_release(cluster: Cluster) -> None:
    shown = server_version(cluster)
    assert (shown["major"], shown["minor"], shown["gitVersion"]) == ("1", "34", "v1.34.0")
    set_version(cluster, "1.37")
    shown = server_version(cluster)
    assert (shown["minor"], shown["gitVersion"]) == ("37", "v1.37.0")
    printed = cluster.kubectl("version")
    assert "Server Version: v1.37.0" in printed.stdout
    # the dispatcher has no 1.37 client: its built-in 1.32 runs, and says so as against a real cluster
    assert "version difference between client (1.32) and server (1.37)" in printed.stderr
    # kubelets without a version of their own run the cluster's release
    assert {row[4] for row in cluster.kubectl("get", "nodes").rows()[1:]} == {"v1.37.0"}
    # the host's root /version (kubectl get --raw drops the server path) names the cluster by its token
    raw = json.loads(cluster.kubectl("get", "--raw", "/version").stdout)
    assert (raw["gitVersion"], raw["emulationMinor"], raw["minCompatibilityMinor"]) == ("v1.37.0", "37", "36")


def test_kubectl_explain_reads_the_clusters_release(cluster: Cluster) -> None:
    missing = cluster.kubectl("explain", "node.status.declaredFeatures", ok=False)
    assert missing.returncode == 1
    assert 'field "declaredFeatures" does not exist' in missing.stderr
    set_version(cluster, "1.36")
    shown = cluster.kubectl("explain", "node.status.declaredFeatures").stdout
    assert "FIELD: declaredFeatures <[]string>" in shown
    text = " ".join(shown.split())  # explain wraps at 80 columns
    assert "DeclaredFeatures represents the features related to feature gates that are declared by the node." in text
    # a field 1.35 had and 1.36 replaced (PodSpec.workloadRef → schedulingGroup)
    assert "schedulingGroup\t<PodSchedulingGroup>" in cluster.kubectl("explain", "pod.spec").stdout
    set_version(cluster, "1.35")
    spec = cluster.kubectl("explain", "pod.spec").stdout
    assert "workloadRef\t<WorkloadReference>" in spec and "schedulingGroup" not in spec


def test_field_validation_follows_the_clusters_release(cluster: Cluster) -> None:
    refused = cluster.kubectl("apply", "-f", "-", stdin=DECLARING_NODE, ok=False)
    assert refused.returncode == 1
    assert 'strict decoding error: unknown field "status.declaredFeatures"' in refused.stderr
    assert cluster.kubectl("get", "node", "declaring", ok=False).returncode == 1  # nothing changed

    set_version(cluster, "1.36")
    cluster.kubectl("apply", "-f", "-", stdin=DECLARING_NODE)
    stored = json.loads(cluster.kubectl("get", "node", "declaring", "-o", "json").stdout)
    assert stored["status"]["declaredFeatures"] == ["GuaranteedQoSPodCPUResize"]
