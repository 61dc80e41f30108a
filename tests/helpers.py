"""Small builders for table-driven tests of scheduler_core."""

from __future__ import annotations

from typing import Any

from scheduler_core.api.loading import ClusterObjects, admit_pod
from scheduler_core.api.objects import Node, Pod
from scheduler_core.explain import build_table
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult


def node(
    name: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    allocatable: dict[str, Any] | None = None,
    unschedulable: bool = False,
    images: list[dict[str, Any]] | None = None,
) -> Node:
    """A Node; allocatable defaults to cpu 32, memory 64Gi, pods 110."""
    return Node.model_validate(
        {
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {
                "allocatable": allocatable or {"cpu": "32", "memory": "64Gi", "pods": "110"},
                "images": images or [],
            },
        }
    )


def pod(
    name: str = "p",
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    requests: dict[str, Any] | None = None,
    node_name: str = "",
    **spec: Any,
) -> Pod:
    """A Pod with one container (explicit requests, default none); extra spec fields in camelCase."""
    container: dict[str, Any] = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    if requests is not None:
        container["resources"] = {"requests": requests}
    body = {"containers": [container], "nodeName": node_name, **spec}
    p = Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": body,
            "status": {"phase": "Running" if node_name else "Pending"},
        }
    )
    admit_pod(p, {}, {})
    return p


def table(nodes: list[Node], pods: list[Pod] = ()) -> NodeTable:  # type: ignore[assignment]
    return build_table(ClusterObjects(nodes=list(nodes), pods=list(pods)))


def schedule(nodes: list[Node], incoming: Pod, pods: list[Pod] = (), seed: int = 0) -> ScheduleResult:  # type: ignore[assignment]
    """One full default-profile cycle; returns the result (nothing is bound)."""
    return Scheduler(new_framework(), seed=seed).schedule_pod(table(nodes, pods), PodInfo.of(incoming))


def filter_status(result: ScheduleResult, node_name: str) -> tuple[str, str, list[str]] | None:
    """(plugin, code, reasons) recorded for a node, or None if it passed."""
    i = result.table.index[node_name]
    status = result.diagnosis.status_of(i) if result.diagnosis else None
    if status is None:
        return None
    return status.plugin, status.code.label, list(status.reasons)


def scores(result: ScheduleResult, plugin: str) -> dict[str, int]:
    """Normalized score per scored node for one plugin."""
    for entry in result.scores:
        if entry.plugin == plugin:
            return {
                result.table.names[i]: int(v)
                for i, v in zip(result.candidates.tolist(), entry.normalized.tolist(), strict=True)
            }
    return {}
