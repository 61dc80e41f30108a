"""The one module that speaks both worlds: store rows ↔ scheduler_core objects."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_core.api.loading import ClusterObjects
from scheduler_core.api.objects import Namespace, Node, Pod, PriorityClass, Workload
from scheduler_core.explain import add_workloads
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo

from .models import Cluster, KubeObject
from .store import list_rows

__all__ = ["Snapshot", "snapshot"]

READ_KINDS = ("Node", "Pod", "Namespace", "PriorityClass", "ReplicaSet")


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


def snapshot(cluster: Cluster) -> Snapshot:
    objects = ClusterObjects()
    infos: dict[str, PodInfo] = {}
    rows: dict[str, KubeObject] = {}
    for row in list_rows(cluster, READ_KINDS):
        body = row.body
        if row.kind == "Node":
            objects.nodes.append(Node.model_validate(body))
        elif row.kind == "Pod":
            pod = Pod.model_validate(body)
            objects.pods.append(pod)
            key = f"{row.namespace}/{row.name}"
            infos[key] = PodInfo.of(pod)
            rows[key] = row
        elif row.kind == "Namespace":
            objects.namespaces.append(Namespace.model_validate(body))
        elif row.kind == "PriorityClass":
            objects.priority_classes.append(PriorityClass.model_validate(body))
        else:
            objects.workloads.append(Workload.model_validate(body))
    return Snapshot(objects, infos, rows)
