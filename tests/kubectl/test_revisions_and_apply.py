"""ControllerRevisions behind `kubectl rollout history/undo` of DaemonSets and StatefulSets, and
server-side apply's field ownership: a conflict with another manager is a 409 with upstream's text,
`--force-conflicts` takes the field over."""

from __future__ import annotations

import json

import pytest

from .conftest import Cluster
from .test_workloads import DAEMONSET, STATEFULSET

pytestmark = pytest.mark.slow

CONFLICT_ADVICE = "Please review the fields above--they currently have other managers."
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: api}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: api}}
  template:
    metadata:
      labels: {{app: api}}
    spec:
      containers:
      - name: api
        image: {image}
"""


def _settled_status(cluster: Cluster, previous: str = "") -> dict:
    """The StatefulSet's status once its rolling update (from `previous`) is complete (currentRevision caught up)."""

    def done() -> dict | None:
        sts = cluster.objects("StatefulSet")["default/web"]
        status = sts.get("status", {})
        complete = status.get("updatedReplicas") == status.get("readyReplicas") == 2
        complete = complete and status.get("observedGeneration") == sts["metadata"]["generation"]
        complete = complete and status.get("updateRevision") != previous
        return status if complete and status.get("currentRevision") == status.get("updateRevision") else None

    return cluster.wait(done, 30, "the rolling update to complete")


def _live_images(cluster: Cluster) -> set[str]:
    pods = cluster.pods().values()
    return {p["spec"]["containers"][0]["image"] for p in pods if not p["metadata"].get("deletionTimestamp")}


def _revisions(cluster: Cluster, what: str) -> list[str]:
    rows = cluster.kubectl("rollout", "history", what).rows()
    assert rows[1] == ["REVISION", "CHANGE-CAUSE"], rows
    return [row[0] for row in rows[2:] if row]


def test_daemonset_rollout_history_and_undo(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("ds.yaml", DAEMONSET))
    cluster.kubectl("rollout", "status", "ds/agent", "--timeout=20s", timeout=30)
    header, row = cluster.kubectl("get", "controllerrevisions").rows()
    assert header == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert row[1:3] == ["daemonset.apps/agent", "1"]
    pod_hashes = {p["metadata"]["labels"]["controller-revision-hash"] for p in cluster.pods().values()}
    assert {row[0]} == {f"agent-{h}" for h in pod_hashes}

    cluster.kubectl("set", "image", "ds/agent", "agent=fluentd:v2")
    cluster.kubectl("rollout", "status", "ds/agent", "--timeout=30s", timeout=40)
    assert _revisions(cluster, "ds/agent") == ["1", "2"]
    assert "fluentd:v1" in cluster.kubectl("rollout", "history", "ds/agent", "--revision=1").stdout
    assert cluster.kubectl("rollout", "undo", "ds/agent").stdout == "daemonset.apps/agent rolled back\n"
    cluster.kubectl("rollout", "status", "ds/agent", "--timeout=30s", timeout=40)
    assert _revisions(cluster, "ds/agent") == ["2", "3"]  # revision 1 came back as 3
    cluster.wait(lambda: _live_images(cluster) == {"fluentd:v1"}, 20, "the v1 pods back")
    skipped = cluster.kubectl("rollout", "undo", "ds/agent", "--to-revision=3").stdout
    assert skipped == "daemonset.apps/agent skipped rollback (current template already matches revision 3)\n"


def test_statefulset_rollout_history_undo_and_revisions_in_status(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("sts.yaml", STATEFULSET.replace("replicas: 3", "replicas: 2")))
    first = _settled_status(cluster)
    cluster.kubectl("set", "image", "sts/web", "nginx=nginx:1.28")
    second = _settled_status(cluster, first["updateRevision"])
    assert second["updateRevision"] != first["updateRevision"]
    assert _revisions(cluster, "sts/web") == ["1", "2"]
    assert cluster.kubectl("rollout", "undo", "sts/web").stdout == "statefulset.apps/web rolled back\n"
    third = _settled_status(cluster, second["updateRevision"])
    assert third["updateRevision"] == first["updateRevision"]
    assert _revisions(cluster, "sts/web") == ["2", "3"]
    assert _live_images(cluster) == {"nginx:1.27"}


def test_server_side_apply_conflicts_and_force(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", cluster.write("api.yaml", DEPLOYMENT.format(replicas=2, image="api:v1")))
    cluster.write("api.yaml", DEPLOYMENT.format(replicas=3, image="api:v1"))
    refused = cluster.kubectl("apply", "--server-side", "-f", "api.yaml", ok=False)
    assert refused.stderr.startswith(
        'error: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas\n'
        + CONFLICT_ADVICE
    ), refused.stderr
    forced = cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", "api.yaml")
    assert forced.stdout == "deployment.apps/api serverside-applied\n"
    assert cluster.kubectl("get", "deploy", "api", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    shown = cluster.kubectl("get", "deploy", "api", "-o", "json", "--show-managed-fields").stdout
    entries = json.loads(shown)["metadata"]["managedFields"]
    owners = {e["manager"] for e in entries if "f:replicas" in e["fieldsV1"].get("f:spec", {})}
    assert owners == {"kubectl"}

    cluster.write("other.yaml", DEPLOYMENT.format(replicas=4, image="api:v2"))
    two = cluster.kubectl("apply", "--server-side", "--field-manager=ops", "-f", "other.yaml", ok=False)
    assert two.stderr.startswith(
        'error: Apply failed with 2 conflicts: conflicts with "kubectl":\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="api"].image\n'
    ), two.stderr
    # the same value as the owner's is shared, not a conflict
    cluster.write("same.yaml", DEPLOYMENT.format(replicas=3, image="api:v1"))
    cluster.kubectl("apply", "--server-side", "--field-manager=ops", "-f", "same.yaml")
