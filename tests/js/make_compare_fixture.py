"""Two explanations of one pod under the bin-packing lesson's two profiles, as Compare receives them,
for the JS compare model's unit tests.

`python -m tests.js.make_compare_fixture` rewrites `tests/js/fixtures/compare.json`;
`tests/test_js_compare_fixture.py` fails when the file no longer matches what the core emits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from scheduler_core.api.loading import load_cluster, load_pod
from scheduler_core.explain import explain, result_to_json
from scheduler_core.framework.profile import load_config

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixtures") / "compare.json"
LESSON = yaml.safe_load((ROOT / "clusterviz/lessons/bin-packing-vs-spreading.yaml").read_text())
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: incoming}
spec:
  containers: [{name: app, image: x, resources: {requests: {cpu: "1", memory: 2Gi}}}]
"""


def explanations() -> dict[str, Any]:
    cluster = load_cluster(LESSON["objects"], "cluster.yaml")
    profiles = load_config(LESSON["profile"], "profile.yaml")
    out: dict[str, Any] = {}
    for side, name in (("a", "default-scheduler"), ("b", "bin-packing")):
        data = result_to_json(explain(cluster, load_pod(POD, "pod.yaml", {}, {}), profiles[name], seed=0))
        out[side] = {**data, "schedulerName": name}
    return out


def render() -> str:
    return json.dumps(explanations(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(render())
