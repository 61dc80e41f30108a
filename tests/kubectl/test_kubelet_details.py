"""What a kubelet does that kubectl shows: a pod's changed image restarts its container (RESTARTS
1, the Killing event), and a node created in the app carries the kubelet's labels and conditions."""

from __future__ import annotations

import json

import pytest

from .conftest import Cluster

pytestmark = pytest.mark.slow

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: node09}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
"""


def test_an_image_change_restarts_the_container(cluster: Cluster) -> None:
    cluster.kubectl("run", "web", "--image=nginx:1.27")
    cluster.wait_running("web")
    assert cluster.kubectl("set", "image", "pod/web", "web=nginx:1.28").stdout == "pod/web image updated\n"

    def restarted() -> dict | None:
        statuses = cluster.pods()["default/web"]["status"].get("containerStatuses") or [{}]
        return statuses[0] if statuses[0].get("restartCount") == 1 else None

    status = cluster.wait(restarted, what="the restart")
    assert status["image"] == "nginx:1.28" and "running" in status["state"]
    assert status["lastState"]["terminated"]["reason"] == "Completed"
    row = cluster.kubectl("get", "pod", "web").rows()[1]
    assert row[:4] == ["web", "1/1", "Running", "1"]
    events = cluster.kubectl("get", "events", "--field-selector=involvedObject.name=web", "-o", "json").stdout
    messages = [e["message"] for e in json.loads(events)["items"]]
    assert "Container web definition changed, will be restarted" in messages
    assert 'Pulling image "nginx:1.28"' in messages


def test_a_created_node_has_the_kubelets_labels_and_conditions(cluster: Cluster) -> None:
    cluster.kubectl("create", "-f", cluster.write("node.yaml", NODE))
    labels = cluster.kubectl("get", "node", "node09", "--show-labels").rows()[1][-1]
    assert labels == (
        "beta.kubernetes.io/arch=amd64,beta.kubernetes.io/os=linux,kubernetes.io/arch=amd64,"
        "kubernetes.io/hostname=node09,kubernetes.io/os=linux"
    )
    node = json.loads(cluster.kubectl("get", "node", "node09", "-o", "json").stdout)
    conditions = {c["type"]: (c["status"], c["reason"]) for c in node["status"]["conditions"]}
    assert conditions == {
        "MemoryPressure": ("False", "KubeletHasSufficientMemory"),
        "DiskPressure": ("False", "KubeletHasNoDiskPressure"),
        "PIDPressure": ("False", "KubeletHasSufficientPID"),
        "Ready": ("True", "KubeletReady"),
    }
    # the scheduler sees the labels: a pod asking for linux lands on the new node
    pod = '{"spec":{"nodeSelector":{"kubernetes.io/os":"linux","kubernetes.io/hostname":"node09"}}}'
    cluster.kubectl("run", "p", "--image=nginx", f"--overrides={pod}")
    cluster.wait(lambda: cluster.pods()["default/p"]["spec"].get("nodeName") == "node09", what="the bind")
