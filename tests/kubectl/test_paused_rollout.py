"""`kubectl rollout pause/resume` as against a v1.32 cluster: a paused Deployment makes no new
ReplicaSet for a template change, `rollout status` waits (the viewer has no paused case: it counts
0 updated replicas until its timeout), and `rollout resume` rolls it out."""

from __future__ import annotations

import json

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: web, image: nginx:1.27}
"""
PROGRESSING = '{.status.conditions[?(@.type=="Progressing")].reason}'


def _images(cluster: Cluster) -> dict[str, int]:
    """The image of each ReplicaSet, and its replicas."""
    return {
        rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["spec"]["replicas"]
        for rs in cluster.objects("ReplicaSet").values()
    }


def test_pause_set_image_resume(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("web.yaml", DEPLOYMENT))
    assert cluster.kubectl("rollout", "status", "deployment/web", "--timeout=20s").lines[-1] == (
        'deployment "web" successfully rolled out'
    )
    assert cluster.kubectl("rollout", "pause", "deployment/web").stdout == "deployment.apps/web paused\n"
    cluster.wait(
        lambda: cluster.kubectl("get", "deploy", "web", "-o", f"jsonpath={PROGRESSING}").stdout == "DeploymentPaused"
    )
    assert cluster.kubectl("set", "image", "deployment/web", "web=nginx:1.28").stdout == (
        "deployment.apps/web image updated\n"
    )
    waited = cluster.kubectl("rollout", "status", "deployment/web", "--timeout=2s", ok=False)
    assert (
        waited.lines[-1]
        == 'Waiting for deployment "web" rollout to finish: 0 out of 2 new replicas have been updated...'
    )
    assert waited.stderr == "error: timed out waiting for the condition\n"
    assert _images(cluster) == {"nginx:1.27": 2}  # no new ReplicaSet while paused

    assert cluster.kubectl("scale", "deployment/web", "--replicas=3").stdout == "deployment.apps/web scaled\n"
    cluster.wait(lambda: _images(cluster) == {"nginx:1.27": 3}, what="the paused scale")

    assert cluster.kubectl("rollout", "resume", "deployment/web").stdout == "deployment.apps/web resumed\n"
    assert cluster.kubectl("rollout", "status", "deployment/web", "--timeout=30s").lines[-1] == (
        'deployment "web" successfully rolled out'
    )
    assert _images(cluster) == {"nginx:1.27": 0, "nginx:1.28": 3}
    status = json.loads(cluster.kubectl("get", "deploy", "web", "-o", "json").stdout)["status"]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetAvailable")
