"""ResourceQuotas and the ResourceQuota admission plugin, through the real kubectl: the quota's status
(hard, used) is current as the resourcequota controller keeps it; a pod that would pass `hard` is
refused with upstream's `exceeded quota` text, one that does not state what a cpu or memory quota
tracks with `failed quota … must specify`; object counts (`count/…`, `configmaps`) are enforced; a
Deployment's pods past the quota record FailedCreate; nothing is stored on a refusal."""

from __future__ import annotations

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec:
  hard: {requests.cpu: "1", limits.cpu: "2", pods: "3", configmaps: "1"}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - name: app
    image: nginx
    resources: {resources}
"""


WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m}, limits: {cpu: 200m}}}]
"""


def pod(name: str, resources: str) -> str:
    return POD.format(name=name, resources=resources)


def test_a_quota_counts_what_the_namespace_uses_and_refuses_more(cluster: Cluster) -> None:
    assert cluster.kubectl("apply", "-f", cluster.write("q.yaml", QUOTA)).stdout == "resourcequota/compute created\n"
    cluster.kubectl("apply", "-f", cluster.write("a.yaml", pod("a", '{requests: {cpu: 600m}, limits: {cpu: "1"}}')))
    quota = cluster.kubectl("get", "quota", "compute", "-o", "json")
    assert '"used": {' in quota.stdout
    row = cluster.kubectl("get", "quota").rows()[1]
    assert row[0] == "compute"
    assert " ".join(row[2:]) == "configmaps: 0/1, pods: 1/3, requests.cpu: 600m/1 limits.cpu: 1/2"
    described = cluster.kubectl("describe", "quota", "compute").stdout
    assert "requests.cpu  600m  1" in described

    before = cluster.dump()
    refused = cluster.kubectl(
        "apply", "-f", cluster.write("b.yaml", pod("b", '{requests: {cpu: 500m}, limits: {cpu: "1"}}')), ok=False
    )
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "b.yaml": pods "b" is forbidden: exceeded quota: compute, '
        "requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1"
    )
    unstated = cluster.kubectl("apply", "-f", cluster.write("c.yaml", pod("c", "{requests: {cpu: 100m}}")), ok=False)
    assert unstated.stderr.strip() == (
        'Error from server (Forbidden): error when creating "c.yaml": pods "c" is forbidden: failed quota: compute: '
        "must specify limits.cpu for: app"
    )
    assert cluster.dump() == before

    cluster.kubectl("create", "configmap", "one", "--from-literal=a=1")
    second = cluster.kubectl("create", "configmap", "two", "--from-literal=a=1", ok=False)
    assert second.stderr.strip() == (
        'error: failed to create configmap: configmaps "two" is forbidden: exceeded quota: compute, '
        "requested: configmaps=1, used: configmaps=1, limited: configmaps=1"
    )

    # a Deployment's pods past `pods: 3`: two more, then FailedCreate
    cluster.kubectl("apply", "-f", cluster.write("web.yaml", WEB))

    def failures() -> list[dict]:
        return [e for e in cluster.state()["objects"].get("Event", []) if e["reason"] == "FailedCreate"]

    (event, *_) = cluster.wait(failures, what="FailedCreate")
    assert "is forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, limited: pods=3" in event["message"]
    assert sum(1 for key in cluster.pods() if key.startswith("default/web-")) == 2
