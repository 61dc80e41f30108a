"""Bodies whose values have the wrong type are decoding errors, as kube-apiserver 1.32 answers them:
400 BadRequest `… cannot be handled as a Deployment: json: cannot unmarshal …`, nothing stored."""

from __future__ import annotations

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: two
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: web, image: nginx:1.27}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {cpu: 3x}
"""


def test_type_errors_are_bad_requests(cluster: Cluster) -> None:
    refused = cluster.kubectl("apply", "-f", cluster.write("d.yaml", DEPLOYMENT), ok=False)
    assert refused.stderr.strip() == (
        'Error from server (BadRequest): error when creating "d.yaml": Deployment in version "v1" cannot be '
        "handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas "
        "of type int32"
    )
    quantity = cluster.kubectl("create", "-f", cluster.write("p.yaml", POD), ok=False)
    assert quantity.stderr.strip() == (
        'Error from server (BadRequest): error when creating "p.yaml": Pod in version "v1" cannot be handled as a '
        "Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    assert cluster.objects("Deployment") == {} and "default/big" not in cluster.pods()


def test_json_patch_failures_in_upstreams_words(cluster: Cluster) -> None:
    cluster.kubectl("run", "web", "--image=nginx")
    ops = '[{"op":"test","path":"/spec/restartPolicy","value":"Never"}]'
    refused = cluster.kubectl("patch", "pod", "web", "--type=json", "-p", ops, ok=False)
    assert "testing value /spec/restartPolicy failed: test failed" in refused.stderr
    assert "<class" not in refused.stderr
