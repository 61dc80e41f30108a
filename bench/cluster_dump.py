"""Synthetic `kubectl get nodes,pods -A -o json` dumps of any size (for import tests and bench/)."""

from __future__ import annotations

import json
from typing import Any

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
TYPES = (("m5.xlarge", "4", "16Gi"), ("m5.2xlarge", "8", "32Gi"), ("c5.4xlarge", "16", "32Gi"))


def node(i: int) -> dict[str, Any]:
    kind, cpu, memory = TYPES[i % len(TYPES)]
    name = f"ip-10-0-{i // 250}-{i % 250}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"00000000-0000-4000-8000-{i:012d}",
            "resourceVersion": str(1000 + i),
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                "node.kubernetes.io/instance-type": kind,
            },
        },
        "spec": {"providerID": f"aws:///{ZONES[i % len(ZONES)]}/i-{i:08x}"},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"},
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"kubeletVersion": "v1.34.0", "architecture": "amd64", "operatingSystem": "linux"},
        },
    }


def pod(i: int, node_name: str | None) -> dict[str, Any]:
    app = f"app-{i % 50}"
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": f"registry.example.com/{app}:1.{i % 7}",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            }
        ],
        "schedulerName": "default-scheduler",
    }
    status: dict[str, Any] = {"phase": "Pending"}
    if node_name:
        spec["nodeName"] = node_name
        status = {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{app}-{i:06d}",
            "namespace": f"team-{i % 10}",
            "uid": f"10000000-0000-4000-8000-{i:012d}",
            "resourceVersion": str(900000 + i),
            "labels": {"app": app, "tier": "web" if i % 2 else "worker"},
        },
        "spec": spec,
        "status": status,
    }


def dump(nodes: int, pods_per_node: int, pending: int = 0) -> dict[str, Any]:
    """A `kind: List` of `nodes` nodes with `pods_per_node` Running pods each, plus `pending` unbound pods."""
    items = [node(i) for i in range(nodes)]
    names = [item["metadata"]["name"] for item in items]
    total = nodes * pods_per_node
    items += [pod(i, names[i % nodes]) for i in range(total)]
    items += [pod(total + k, None) for k in range(pending)]
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def dump_json(nodes: int, pods_per_node: int, pending: int = 0) -> bytes:
    return json.dumps(dump(nodes, pods_per_node, pending)).encode()
