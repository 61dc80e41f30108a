"""Cycles from the real scheduler_core, as the stream carries them, for the JS model's unit tests.

`python -m tests.js.make_fixtures` rewrites `tests/js/fixtures/cycles.json`;
`tests/test_js_fixtures.py` fails when the file no longer matches what the core emits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scheduler_core.api.loading import load_cluster, load_pod
from scheduler_core.explain import explain
from scheduler_core.framework.profile import default_profile
from scheduler_core.versions import get_version

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixtures") / "cycles.json"
DEMO = (ROOT / "clusterviz/scenarios/demo-cluster.yaml").read_text()

# node02 gets gpu=true:NoSchedule; node03 runs a pod with a restartable init container (sidecar).
CLUSTER = (
    DEMO.replace(
        "    labels: {kubernetes.io/hostname: node02, kgc: a}\n",
        "    labels: {kubernetes.io/hostname: node02, kgc: a}\n  spec:\n"
        "    taints: [{key: gpu, value: 'true', effect: NoSchedule}]\n",
    )
    + """\
- apiVersion: v1
  kind: Pod
  metadata: {name: sidecar, namespace: default}
  spec:
    nodeName: node03
    initContainers: [{name: log, image: x, restartPolicy: Always, resources: {requests: {cpu: 250m}}}]
    containers: [{name: app, image: x, resources: {requests: {cpu: 500m}}}]
  status: {phase: Running}
"""
)

PODS = {
    "taint-and-selector": """\
apiVersion: v1
kind: Pod
metadata: {name: pod-kgc}
spec:
  nodeSelector: {kgc: a}
  containers: [{name: app, image: x}]
""",
    "insufficient-cpu": """\
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: app, image: x, resources: {requests: {cpu: 2100m}}}]
""",
    "scheduled": """\
apiVersion: v1
kind: Pod
metadata: {name: small}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: app, image: x, resources: {requests: {cpu: 100m}}}]
""",
}


# The same pods under another version (name → (pod, version)): v1.35's constant taint reason.
VERSIONED = {"taint-and-selector-v1.35": ("taint-and-selector", "1.35")}


def cycles() -> dict[str, Any]:
    cluster = load_cluster(CLUSTER, "cluster.yaml")
    out: dict[str, Any] = {}
    runs = [(name, text, None) for name, text in PODS.items()]
    runs += [(name, PODS[pod], version) for name, (pod, version) in VERSIONED.items()]
    for name, text, version in runs:
        profile = default_profile(get_version(version)) if version else None
        explanation = explain(cluster, load_pod(text, "pod.yaml", {}, {}), profile, seed=0)
        assert explanation.result is not None
        names = explanation.result.table.names
        events = [event.to_dict(names) for event in explanation.events]
        out[name] = {"cycle": 1, "pod": explanation.result.pod.key, "events": events}
    return out


def render() -> str:
    return json.dumps(cycles(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(render())
