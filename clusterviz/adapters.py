"""The one module that speaks both worlds: store rows ↔ scheduler_core objects."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scheduler_core.api.loading import ClusterObjects
from scheduler_core.api.objects import Namespace, Node, Pod, PriorityClass, Workload
from scheduler_core.explain import add_workloads
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo

from .models import Cluster, KubeObject
from .store import list_rows

__all__ = ["READ_KINDS", "Snapshot", "read_objects", "scheduler_object", "snapshot"]

READ_KINDS = ("Node", "Pod", "Namespace", "PriorityClass", "ReplicaSet")
_MODELS: dict[str, Any] = {
    "Node": Node,
    "Pod": Pod,
    "Namespace": Namespace,
    "PriorityClass": PriorityClass,
    "ReplicaSet": Workload,
}


@dataclass
class Snapshot:
    """The scheduler's view of a cluster at one resourceVersion."""

    objects: ClusterObjects
    pod_infos: dict[str, PodInfo]  # "namespace/name" → PodInfo
    rows: dict[str, KubeObject]  # "namespace/name" → the pod's row

    def table(self) -> NodeTable:
        table = NodeTable.build(self.objects.nodes, self.pod_infos.values(), self.objects.namespaces)
        add_workloads(table, self.objects.workloads)
        return table


def scheduler_object(kind: str, body: dict[str, Any]) -> Any:
    """A stored object (of one of READ_KINDS) as scheduler_core reads it."""
    return _MODELS[kind].model_validate(body)


def read_objects(cluster: Cluster) -> Iterator[tuple[KubeObject, Any]]:
    """Every row the scheduler reads with its scheduler_core object, by kind, then namespace and name
    (sorted here, by code point: the order must not depend on the database's collation)."""
    rows = sorted(list_rows(cluster, READ_KINDS), key=lambda row: (row.kind, row.namespace, row.name))
    for row in rows:
        yield row, scheduler_object(row.kind, row.body)


def snapshot(cluster: Cluster) -> Snapshot:
    """A fresh view, read from the store (what-ifs; the scheduler keeps `scheduler_cache` instead)."""
    objects = ClusterObjects()
    infos: dict[str, PodInfo] = {}
    rows: dict[str, KubeObject] = {}
    for row, obj in read_objects(cluster):
        if row.kind == "Node":
            objects.nodes.append(obj)
        elif row.kind == "Pod":
            objects.pods.append(obj)
            key = f"{row.namespace}/{row.name}"
            infos[key] = PodInfo.of(obj)
            rows[key] = row
        elif row.kind == "Namespace":
            objects.namespaces.append(obj)
        elif row.kind == "PriorityClass":
            objects.priority_classes.append(obj)
        else:
            objects.workloads.append(obj)
    return Snapshot(objects, infos, rows)
