"""The cluster-side inputs of admission: PriorityClasses (the stored ones and the two built-in
system classes every kube-apiserver creates) and RuntimeClasses in the store."""

from __future__ import annotations

from typing import Any

from scheduler_core.api.objects import PriorityClass, RuntimeClass

from .models import Cluster, KubeObject

__all__ = ["BUILTIN_PRIORITY_CLASSES", "admission_context", "builtin_priority_classes"]

# pkg/apis/scheduling SystemPriorityClasses(): created by kube-apiserver at start-up
BUILTIN_PRIORITY_CLASSES: tuple[tuple[str, int, str], ...] = (
    (
        "system-cluster-critical",
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
    (
        "system-node-critical",
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
)


def builtin_priority_classes(created: str) -> list[dict[str, Any]]:
    """The built-in PriorityClasses as the API serves them (`created`: the cluster's creation time)."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {
                "name": name,
                "uid": f"priorityclass-{name}",
                "resourceVersion": "1",
                "creationTimestamp": created,
            },
            "value": value,
            "globalDefault": False,
            "description": description,
            "preemptionPolicy": "PreemptLowerPriority",
        }
        for name, value, description in BUILTIN_PRIORITY_CLASSES
    ]


def admission_context(cluster: Cluster) -> tuple[dict[str, PriorityClass], dict[str, RuntimeClass]]:
    classes = {body["metadata"]["name"]: PriorityClass.model_validate(body) for body in builtin_priority_classes("")}
    classes.update(
        {
            row.name: PriorityClass.model_validate(row.body)
            for row in KubeObject.objects.filter(cluster=cluster, kind="PriorityClass")
        }
    )
    return classes, {}
