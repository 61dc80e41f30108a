"""PodDisruptionBudgets as on a cluster: `kubectl get pdb`, the disruption controller's status, the
eviction subresource honouring the budget (429 with upstream's text, 500 for two budgets, dry run,
pending pods), and `kubectl drain` evicting — or retrying on 429 until its timeout."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Cluster
from .test_api import call

pytestmark = pytest.mark.slow

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web}}
spec:
  {budget}
  selector:
    matchLabels: {{app: web}}
"""

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"labels": {"app": "db"}},
    "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
}
PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"


def _evict(cluster: Cluster, name: str, dry_run: bool = False) -> Any:
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if dry_run:
        body["deleteOptions"] = {"dryRun": ["All"]}
    return call(cluster, "POST", f"{PODS}/{name}/eviction", body)


def _budget(cluster: Cluster, name: str) -> dict[str, Any]:
    return call(cluster, "GET", f"{PDBS}/{name}").json()


def _settled(cluster: Cluster, name: str, allowed: int) -> dict[str, Any]:
    """The budget once its controller has seen its generation and allows `allowed` disruptions."""

    def seen() -> dict[str, Any] | None:
        pdb = _budget(cluster, name)
        status = pdb.get("status", {})
        if (
            status.get("observedGeneration") == pdb["metadata"]["generation"]
            and status.get("disruptionsAllowed") == allowed
            and not status.get("disruptedPods")
        ):
            return pdb
        return None

    return cluster.wait(seen, 15, f"budget {name} to allow {allowed}")


def _running_pods(cluster: Cluster, prefix: str, count: int) -> list[dict[str, Any]]:
    def ready() -> list[dict[str, Any]] | None:
        pods = [p for k, p in cluster.pods().items() if k.startswith(f"default/{prefix}")]
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        ok = len(live) == count and all(p["status"].get("phase") == "Running" for p in live)
        return live if ok else None

    return cluster.wait(ready, 20, f"{count} {prefix} pods running")


def test_eviction_honours_the_budget_with_upstream_codes_and_texts(api_cluster: Cluster) -> None:
    for name in ("db-0", "db-1"):
        assert call(api_cluster, "POST", PODS, {**POD, "metadata": {**POD["metadata"], "name": name}}).status == 201
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db"}}
    budget["spec"] = {"minAvailable": 2, "selector": {"matchLabels": {"app": "db"}}}
    assert call(api_cluster, "POST", PDBS, budget).status == 201
    _running_pods(api_cluster, "db-", 2)
    pdb = _settled(api_cluster, "db", 0)
    status = pdb["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"]) == (2, 2, 2)
    (condition,) = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed",
        "False",
        "InsufficientPods",
    )

    refused = _evict(api_cluster, "db-0")
    assert refused.status == 429
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "code": 429,
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget db needs 2 healthy pods and has 2 currently",
                }
            ]
        },
    }

    patched = call(
        api_cluster, "PATCH", f"{PDBS}/db", {"spec": {"minAvailable": 1}}, "application/merge-patch+json"
    ).json()
    assert patched["metadata"]["generation"] == 2
    _settled(api_cluster, "db", 1)
    assert _evict(api_cluster, "db-0", dry_run=True).status == 201
    assert _budget(api_cluster, "db")["status"]["disruptionsAllowed"] == 1  # a dry run takes nothing
    assert not api_cluster.pods()["default/db-0"]["metadata"].get("deletionTimestamp")

    evicted = _evict(api_cluster, "db-0")
    assert evicted.status == 201 and evicted.json()["status"] == "Success"
    api_cluster.wait(lambda: "default/db-0" not in api_cluster.pods(), 10, "db-0 to go")
    _settled(api_cluster, "db", 0)  # one healthy pod left, one needed

    second = {
        **budget,
        "metadata": {"name": "db-too"},
        "spec": {"maxUnavailable": 1, "selector": budget["spec"]["selector"]},
    }
    assert call(api_cluster, "POST", PDBS, second).status == 201
    two = _evict(api_cluster, "db-1")
    assert two.status == 500
    assert two.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        "code": 500,
    }
    # maxUnavailable needs the pods' controller: a bare pod has none, so its count is 0 (no disruption)
    assert _budget(api_cluster, "db-too")["status"]["expectedPods"] == 0

    pending = {**POD, "metadata": {"name": "db-pending", "labels": {"app": "db"}}}
    pending["spec"] = {**POD["spec"], "nodeSelector": {"disk": "none"}}
    assert call(api_cluster, "POST", PODS, pending).status == 201
    assert _evict(api_cluster, "db-pending").status == 201  # a pending pod disrupts nothing
    mismatch = call(
        api_cluster,
        "POST",
        f"{PODS}/db-1/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "db-0"}},
    )
    assert mismatch.status == 400
    assert mismatch.json()["message"] == "name in URL does not match name in Eviction object"


def test_get_pdb_and_drain_evicts(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("web.yaml", WEB.format(replicas=3, budget="minAvailable: 1")))
    pods = _running_pods(cluster, "web-", 3)
    _settled(cluster, "web", 2)
    header, row = cluster.kubectl("get", "pdb").rows()
    assert header == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert row[:4] == ["web", "1", "N/A", "2"]
    described = cluster.kubectl("describe", "pdb", "web").stdout
    assert "Min available:  1" in described and "Allowed disruptions:  2" in described

    node = pods[0]["spec"]["nodeName"]
    evicted = sorted(p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == node)
    drain = cluster.kubectl("drain", node, "--timeout=30s", timeout=40)
    lines = drain.stdout.splitlines() + drain.stderr.splitlines()
    for name in evicted:
        assert f"evicting pod default/{name}" in lines
        assert f"pod/{name} evicted" in lines
    assert f"node/{node} drained" in lines
    assert not any(p["spec"].get("nodeName") == node for p in cluster.pods().values())


def test_drain_blocked_by_the_budget_times_out(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("web.yaml", WEB.format(replicas=2, budget="maxUnavailable: 0")))
    pods = _running_pods(cluster, "web-", 2)
    pdb = _settled(cluster, "web", 0)
    assert (pdb["status"]["expectedPods"], pdb["status"]["desiredHealthy"]) == (2, 2)
    assert cluster.kubectl("get", "pdb", "web").rows()[1][:4] == ["web", "N/A", "0", "0"]
    node = pods[0]["spec"]["nodeName"]
    drain = cluster.kubectl("drain", node, "--timeout=2s", ok=False, timeout=30)
    name = pods[0]["metadata"]["name"]
    assert (
        f'error when evicting pods/"{name}" -n "default" (will retry after 5s): '
        "Cannot evict pod as it would violate the pod's disruption budget." in drain.stderr
    )
    assert "global timeout reached: 2s" in drain.stderr
    assert not cluster.pods()[f"default/{name}"]["metadata"].get("deletionTimestamp")


def test_a_budget_is_validated_as_the_api_server_does(api_cluster: Cluster) -> None:
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"}}
    typo = call(api_cluster, "POST", PDBS + "?fieldValidation=Strict", {**body, "spec": {"minAvailabel": 1}})
    assert typo.status == 400
    assert typo.json()["message"] == (
        'PodDisruptionBudget in version "v1" cannot be handled as a PodDisruptionBudget: '
        'strict decoding error: unknown field "spec.minAvailabel"'
    )
    both = call(api_cluster, "POST", PDBS, {**body, "spec": {"minAvailable": 1, "maxUnavailable": 1}})
    assert both.status == 422
    assert "spec: minAvailable and maxUnavailable cannot be both set" in both.json()["message"]
    created = call(api_cluster, "POST", PDBS, {**body, "spec": {"selector": {}, "maxUnavailable": "10%"}})
    assert created.status == 201
    assert created.json()["spec"] == {"selector": {}, "maxUnavailable": "10%"}  # {} selects every pod in policy/v1
    assert created.json()["status"] == {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }
