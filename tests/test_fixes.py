"""Fixes for a rejected pod, node by node, each verified by scheduling the fixed pod again."""

from __future__ import annotations

import json
from typing import Any

import yaml

from scheduler_core.api.loading import ClusterObjects, load_pod
from scheduler_core.explain import explain
from scheduler_core.fixes import suggest_fixes
from tests.helpers import node, pod


def _load(body: dict[str, Any]) -> Any:
    return load_pod(json.dumps(body), "pod.yaml", {}, {})


def _cluster(*nodes: Any, pods: tuple[Any, ...] = ()) -> ClusterObjects:
    return ClusterObjects(nodes=list(nodes), pods=list(pods))


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"nodeSelector": {"kgc": "a"}, "containers": [{"name": "c", "image": "x"}]},
}


def test_every_failing_plugin_gets_a_fix_and_the_fixed_pod_lands_on_that_node() -> None:
    cluster = _cluster(
        node("node01", labels={"kgc": "a"}, allocatable={"cpu": "1", "memory": "1Gi", "pods": "10"}),
        node("node02", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
    )
    body = {
        **POD,
        "spec": {**POD["spec"], "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]},
    }
    out = suggest_fixes(cluster, body, _load)
    by_node = {n["node"]: n for n in out["nodes"]}
    node02 = by_node["node02"]
    assert [f["plugin"] for f in node02["failures"]] == ["TaintToleration", "NodeAffinity"]
    assert [x["text"] for f in node02["failures"] for x in f["fixes"]] == [
        "tolerate gpu=true:NoSchedule",
        "label node02 kgc=a",
    ]
    assert node02["commands"] == ["kubectl label nodes node02 kgc=a --overwrite"]
    assert "+  - key: gpu" in node02["podDiff"]
    assert (node02["verified"], node02["landsOn"]) == (True, "node02")
    assert node02["events"][-1]["type"] == "cycle.finished"
    # node01 only lacks cpu: the request is lowered to what it has free, and that is verified too.
    node01 = by_node["node01"]
    assert node01["failures"] == [
        {
            "plugin": "NodeResourcesFit",
            "reasons": ["Insufficient cpu"],
            "fixes": [{"kind": "pod", "text": "request 1000m cpu in container c"}],
        }
    ]
    assert node01["verified"] is True

    # Applying the node02 fixes for real (the label on the node, the toleration in the pod) schedules it there.
    fixed = yaml.safe_load(node02["fixedPod"])
    labelled = _cluster(
        cluster.nodes[0],
        node("node02", labels={"kgc": "a"}, taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
    )
    again = explain(labelled, _load(fixed))
    assert again.result is not None and again.result.selected_node == "node02"


def test_a_fix_that_does_not_make_the_pod_land_there_is_not_verified() -> None:
    # node01 is full of pods (Too many pods: no automatic fix); node02 is cordoned and tainted.
    busy = [pod(f"b{i}", node_name="node01") for i in range(2)]
    cluster = _cluster(
        node("node01", labels={"kgc": "a"}, allocatable={"cpu": "4", "memory": "1Gi", "pods": "2"}),
        node("node02", unschedulable=True),
        pods=tuple(busy),
    )
    out = suggest_fixes(cluster, POD, _load)
    by_node = {n["node"]: n for n in out["nodes"]}
    assert by_node["node01"]["complete"] is False and by_node["node01"]["verified"] is False
    node02 = by_node["node02"]
    assert [x["command"] for f in node02["failures"] for x in f["fixes"] if "command" in x] == [
        "kubectl uncordon node02",
        "kubectl label nodes node02 kgc=a --overwrite",
    ]
    assert node02["verified"] is True
