"""Only the owner writes through the Kubernetes API: reads are open, writes need the owner token."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.kubectl.conftest import Cluster

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}
pytestmark = pytest.mark.slow


def _request(cluster: Cluster, method: str, path: str, token: str | None, body: object = None):  # type: ignore[no-untyped-def]
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return cluster.server.request(method, f"/k8s/{cluster.slug}{path}", body, headers)


def test_reads_need_no_token_but_writes_do(api_cluster: Cluster) -> None:
    assert _request(api_cluster, "GET", "/api/v1/nodes", None).status == 200
    missing = _request(api_cluster, "POST", "/api/v1/namespaces/default/pods", None, POD)
    assert missing.status == 403  # the anonymous user, whom the authorizer refuses
    assert missing.json()["kind"] == "Status" and missing.json()["reason"] == "Forbidden"
    assert missing.json()["message"] == (
        'pods is forbidden: User "system:anonymous" cannot create resource "pods" in API group "" '
        'in the namespace "default"'
    )
    wrong = _request(api_cluster, "POST", "/api/v1/namespaces/default/pods", "not-the-token", POD)
    assert wrong.status == 401 and wrong.json()["reason"] == "Unauthorized"  # a token that authenticates no one
    patch = _request(api_cluster, "DELETE", "/api/v1/nodes/node01", "x")
    assert patch.status == 401
    assert "default/web" not in api_cluster.pods()
    assert "node01" in api_cluster.objects("Node")
    ok = _request(api_cluster, "POST", "/api/v1/namespaces/default/pods", api_cluster.token, POD)
    assert ok.status == 201


def test_kubectl_without_the_token_is_refused(cluster: Cluster, tmp_path: Path) -> None:
    read_only = cluster.server.manage("kubeconfig", cluster.slug, "--server", cluster.server.url, "--read-only").stdout
    assert "token" not in yaml.safe_load(read_only)["users"][0]["user"]
    cluster.kubeconfig.write_text(read_only)
    assert "node01" in cluster.kubectl("get", "nodes").stdout
    refused = cluster.kubectl("label", "nodes", "node01", "qqq=1", ok=False)
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): nodes "node01" is forbidden: User "system:anonymous" cannot patch '
        'resource "nodes" in API group "" at the cluster scope'
    )
    assert cluster.kubectl("auth", "can-i", "create", "pods", ok=False).stdout.strip() == "no"
    assert cluster.kubectl("auth", "can-i", "list", "pods").stdout.strip() == "yes"
    assert "system:anonymous" in cluster.kubectl("auth", "whoami").stdout
    assert "qqq" not in cluster.node("node01")["metadata"].get("labels", {})
