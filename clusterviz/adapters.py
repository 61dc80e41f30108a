"""The one module that speaks both worlds: store rows ↔ scheduler_core objects."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scheduler_core.api.loading import KINDS, ClusterObjects
from scheduler_core.api.pruning import prune
from scheduler_core.explain import build_table
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo

from .models import Cluster, KubeObject
from .store import list_rows

__all__ = ["READ_KINDS", "Snapshot", "read_objects", "scheduler_object", "snapshot"]

#: What the app's scheduler reads: every kind scheduler_core's loader reads (its `KINDS` registry).
READ_KINDS = tuple(KINDS)


@dataclass
class Snapshot:
    """The scheduler's view of a cluster at one resourceVersion."""

    objects: ClusterObjects
    pod_infos: dict[str, PodInfo]  # "namespace/name" → PodInfo
    rows: dict[str, KubeObject]  # "namespace/name" → the pod's row

    def table(self) -> NodeTable:
        """As `explain` builds it: nodes, pods, workloads, the volume index and the budgets."""
        return build_table(self.objects)


def scheduler_object(kind: str, body: dict[str, Any]) -> Any:
    """A stored object (of one of READ_KINDS) as scheduler_core's loader reads it from a snapshot: the
    fields no plugin reads dropped (`pruning.prune`; a pod's container statuses and details cost most
    of its validation), then the registry's model. `body` itself is left as stored."""
    kind_of = KINDS[kind]
    return kind_of.model.model_validate(prune(_own_copy(body), kind_of.status))


def _own_copy(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with its own copies of the mappings `prune` changes in place (the object, its metadata
    and status; a pod's spec, containers and volumes); everything else is shared."""
    data = dict(body)
    for key in ("metadata", "status"):
        if isinstance(data.get(key), dict):
            data[key] = dict(data[key])
    spec = data.get("spec")
    if data.get("kind") == "Pod" and isinstance(spec, dict):
        data["spec"] = spec = dict(spec)
        for key in ("containers", "initContainers", "volumes"):
            if isinstance(spec.get(key), list):
                spec[key] = [dict(item) if isinstance(item, dict) else item for item in spec[key]]
    return data


def read_objects(cluster: Cluster, kinds: tuple[str, ...] = READ_KINDS) -> Iterator[tuple[KubeObject, Any]]:
    """Every row of `kinds` with its scheduler_core object, by kind, then namespace and name
    (sorted here, by code point: the order must not depend on the database's collation)."""
    rows = sorted(list_rows(cluster, kinds), key=lambda row: (row.kind, row.namespace, row.name))
    for row in rows:
        yield row, scheduler_object(row.kind, row.body)


def snapshot(cluster: Cluster) -> Snapshot:
    """A fresh view, read from the store (what-ifs; the scheduler keeps `scheduler_cache` instead)."""
    objects = ClusterObjects()
    infos: dict[str, PodInfo] = {}
    rows: dict[str, KubeObject] = {}
    for row, obj in read_objects(cluster):
        getattr(objects, KINDS[row.kind].bucket).append(obj)
        if row.kind == "Pod":
            key = f"{row.namespace}/{row.name}"
            infos[key] = PodInfo.of(obj)
            rows[key] = row
    return Snapshot(objects, infos, rows)
