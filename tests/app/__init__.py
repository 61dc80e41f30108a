"""Tests of the clusterviz Django app, through the real store (no mocks of our own code).

Shared builders: YAML for nodes, pods and deployments, and read-back helpers.
"""

from __future__ import annotations

import json
from typing import Any

from clusterviz import services, store
from clusterviz.models import Change, Cluster, KubeObject


def node_yaml(
    name: str,
    cpu: str = "2",
    memory: str = "4Gi",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
) -> str:
    """A Node document (JSON is YAML)."""
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
        },
    }
    if taints:
        body["spec"] = {"taints": taints}
    return json.dumps(body)


def pod_yaml(name: str, cpu: str = "100m", **spec: Any) -> str:
    """A Pod document; `namespace` and `labels` go into metadata, other keyword arguments into spec
    (camelCase keys)."""
    metadata: dict[str, Any] = {"name": name, "namespace": spec.pop("namespace", "default")}
    if "labels" in spec:
        metadata["labels"] = spec.pop("labels")
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": [{"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }
    return json.dumps(body)


def deployment_yaml(name: str, replicas: int, cpu: str = "100m") -> str:
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": name, "image": "soscscs/myapp:v1", "resources": {"requests": {"cpu": cpu}}}]
                },
            },
        },
    }
    return json.dumps(body)


def priority_class_yaml(name: str, value: int) -> str:
    return json.dumps(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    )


def create(cluster: Cluster, *documents: str) -> list[dict[str, Any]]:
    """`kubectl create -f` of the documents (one YAML stream)."""
    return services.create_from_yaml(cluster, "\n---\n".join(documents), "kubectl", source="test.yaml")


def pod(cluster: Cluster, name: str, namespace: str = "default") -> dict[str, Any]:
    return store.get(cluster, "Pod", namespace, name)


def condition(body: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in body.get("status", {}).get("conditions", []) if c["type"] == kind), None)


def events(cluster: Cluster, name: str | None = None, reason: str | None = None) -> list[dict[str, Any]]:
    """Events (about `name`, with `reason`), oldest first."""
    found = [
        e
        for e in store.list_objects(cluster, "Event")
        if (name is None or e["involvedObject"]["name"] == name) and (reason is None or e["reason"] == reason)
    ]
    return sorted(found, key=lambda e: int(e["metadata"]["resourceVersion"]))


def rv(cluster: Cluster) -> int:
    return Cluster.objects.get(pk=cluster.pk).resource_version


def changes(cluster: Cluster) -> list[Change]:
    return list(Change.objects.filter(cluster=cluster).order_by("id"))


def queue_state(cluster: Cluster, name: str, namespace: str = "default") -> str:
    return KubeObject.objects.get(cluster=cluster, kind="Pod", namespace=namespace, name=name).queue_state
