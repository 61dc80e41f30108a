"""Capacity reports from the real scheduler_core (fit, drain, add on the demo cluster), as the app's
`POST api/clusters/<slug>/capacity` returns them, for the JS model's unit tests.

`python -m tests.js.make_capacity_fixture` rewrites `tests/js/fixtures/capacity.json`;
`tests/test_js_fixtures.py` fails when the file no longer matches what the core emits.
"""

from __future__ import annotations

import json
from pathlib import Path

from scheduler_core.api.loading import load_cluster, load_pod
from scheduler_core.api.workloads import WorkloadIndex
from scheduler_core.capacity import DrainOptions, NodeChoice, add_nodes, drain, fit, pending_pods, pod_template
from scheduler_core.explain import build_table

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).with_name("fixtures") / "capacity.json"
NODE = """\
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}{extra}}}}}
status: {{allocatable: {{cpu: "2", memory: 8Gi, pods: "110"}}}}
"""
WEB = """\
apiVersion: v1
kind: Pod
metadata:
  name: web-{k}
  namespace: default
  labels: {{app: web}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-rs, controller: true}}]
spec:
  nodeName: {node}
  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""
PENDING = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  nodeSelector: {pool: big}
  containers: [{name: c, image: trainer, resources: {requests: {cpu: "1"}}}]
"""
CLUSTER = "---\n".join(
    [
        NODE.format(name="node01", zone="a", extra=""),
        NODE.format(name="node02", zone="b", extra=""),
        NODE.format(name="node03", zone="a", extra=", pool: big"),
        WEB.format(k=0, node="node01", cpu="1"),
        WEB.format(k=1, node="node01", cpu="1"),
        WEB.format(k=2, node="node02", cpu="1"),
        WEB.format(k=3, node="node03", cpu="2"),
        PENDING,
    ]
)
PROBE = """\
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
"""


def render() -> str:
    cluster = load_cluster(CLUSTER, "capacity-cluster.yaml")
    first = cluster.nodes[0].metadata.name
    reports = {
        "fit": fit(build_table(cluster), pod_template(load_pod(PROBE, "probe.yaml")), limit=40).to_json(),
        "drain": drain(
            build_table(cluster),
            NodeChoice((first,)),
            WorkloadIndex(cluster.workloads),
            DrainOptions(ignore_daemonsets=True, force=True),
        ).to_json(),
    }
    table = build_table(cluster)
    shape = table.nodes[table.index["node03"]]
    pending = pending_pods(cluster.pods, "default-scheduler")
    reports["add"] = add_nodes(table, shape, "node node03", 1, pending, baseline=build_table(cluster)).to_json()
    return json.dumps(reports, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(render())
