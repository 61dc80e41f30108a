"""ServiceAccounts and the ServiceAccount admission plugin, through the real kubectl: every namespace
has its `default` account; a new pod runs as `default` unless it names another, which must exist;
it gets the projected token volume unless automounting is off; a Deployment whose account is missing
records upstream's FailedCreate."""

from __future__ import annotations

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  {extra}
  containers: [{{name: app, image: nginx}}]
"""


def test_default_accounts_missing_accounts_and_automount(cluster: Cluster) -> None:
    assert cluster.kubectl("get", "sa").rows()[1][:2] == ["default", "0"]
    cluster.kubectl("create", "namespace", "team")
    assert cluster.kubectl("get", "sa", "-n", "team", "-o", "name").stdout == "serviceaccount/default\n"
    everywhere = {(row[0], row[1]) for row in cluster.kubectl("get", "sa", "-A").rows()[1:]}
    assert {("default", "default"), ("kube-system", "default"), ("team", "default")} <= everywhere

    refused = cluster.kubectl(
        "apply", "-f", cluster.write("b.yaml", POD.format(name="b", extra="serviceAccountName: builder")), ok=False
    )
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "b.yaml": pods "b" is forbidden: '
        'error looking up service account default/builder: serviceaccount "builder" not found'
    )
    assert "default/b" not in cluster.pods()

    assert cluster.kubectl("create", "serviceaccount", "builder").stdout == "serviceaccount/builder created\n"
    cluster.kubectl("apply", "-f", "b.yaml")
    spec = cluster.pods()["default/b"]["spec"]
    assert spec["serviceAccountName"] == "builder"
    (volume,) = [v for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    ]

    cluster.kubectl("patch", "sa", "builder", "-p", '{"automountServiceAccountToken": false}')
    cluster.kubectl("apply", "-f", cluster.write("c.yaml", POD.format(name="c", extra="serviceAccountName: builder")))
    assert "volumes" not in cluster.pods()["default/c"]["spec"]
    opt_out = POD.format(name="d", extra="automountServiceAccountToken: false")
    cluster.kubectl("apply", "-f", cluster.write("d.yaml", opt_out))
    assert "volumes" not in cluster.pods()["default/d"]["spec"]
    assert cluster.pods()["default/d"]["spec"]["serviceAccountName"] == "default"


def test_a_deployment_whose_account_is_missing_records_failed_create(cluster: Cluster) -> None:
    cluster.kubectl("create", "deployment", "web", "--image=nginx")
    cluster.kubectl("patch", "deployment", "web", "-p", '{"spec":{"template":{"spec":{"serviceAccountName":"ghost"}}}}')

    def failures() -> list[dict]:
        return [e for e in cluster.state()["objects"].get("Event", []) if e["reason"] == "FailedCreate"]

    (event, *_) = cluster.wait(failures, what="FailedCreate")
    assert event["type"] == "Warning" and event["involvedObject"]["kind"] == "ReplicaSet"
    assert event["message"].startswith('Error creating: pods "web-')
    assert event["message"].endswith(
        '" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found'
    )
