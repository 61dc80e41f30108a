"""The `kubernetes` Service in `default`, as kube-apiserver keeps it, with its Endpoints and
EndpointSlice: `kubectl get` prints them as a real cluster does, and its address (the service CIDR's
first) is never handed to another Service."""

from __future__ import annotations

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

TAKEN = """\
apiVersion: v1
kind: Service
metadata: {name: thief}
spec:
  clusterIP: 10.96.0.1
  ports: [{port: 80}]
"""


def test_the_kubernetes_service_and_its_endpoints(cluster: Cluster) -> None:
    header, row = cluster.kubectl("get", "svc").rows()
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert row[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    assert cluster.kubectl("get", "endpoints", "kubernetes").rows()[1][:2] == ["kubernetes", "192.168.0.2:6443"]
    slice_row = cluster.kubectl("get", "endpointslices", "-o", "wide").rows()[1]
    assert slice_row[:5] == ["kubernetes", "IPv4", "6443", "192.168.0.2", slice_row[4]]
    described = cluster.kubectl("describe", "svc", "kubernetes").stdout
    assert "Labels:                   component=apiserver" in described
    assert "TargetPort:               6443/TCP" in described
    assert cluster.kubectl("get", "svc", "-n", "kube-system", "-o", "name").stdout == ""

    refused = cluster.kubectl("apply", "-f", cluster.write("thief.yaml", TAKEN), ok=False)
    taken = 'spec.clusterIPs[0]: Invalid value: ["10.96.0.1"]: failed to allocate IP 10.96.0.1: provided IP is '
    assert taken + "already allocated" in refused.stderr
