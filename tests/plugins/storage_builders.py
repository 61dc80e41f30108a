"""Builders for the volume plugins' tests: claims, volumes, classes, CSINodes, and one-plugin runs.

Mirrors upstream's test helpers (volumebinding/test_utils.go makePVC/makePV, csi_test.go fixtures).
"""

from __future__ import annotations

from typing import Any

from scheduler_core.api.loading import ClusterObjects
from scheduler_core.api.objects import Node, Pod
from scheduler_core.api.storage import (
    ANN_BIND_COMPLETED,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from scheduler_core.explain import build_table
from scheduler_core.framework.cycle_state import CycleState
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.status import Code, Status
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult

StorageObject = PersistentVolumeClaim | PersistentVolume | StorageClass | CSINode


def pvc(
    name: str,
    storage_class: str | None = None,
    *,
    namespace: str = "default",
    bound_pv: str = "",
    volume_name: str = "",
    request: str | None = None,
    access_modes: list[str] | None = None,
    phase: str | None = None,
    annotations: dict[str, str] | None = None,
    **extra: Any,
) -> PersistentVolumeClaim:
    """`makePVC(name, class)`; `bound_pv` is `withBoundPV` (volume name + bind-completed annotation)."""
    notes = dict(annotations or {})
    spec: dict[str, Any] = {"accessModes": access_modes or [], **extra}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if bound_pv:
        spec["volumeName"] = bound_pv
        notes[ANN_BIND_COMPLETED] = "true"
    elif volume_name:
        spec["volumeName"] = volume_name
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    body: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace, "annotations": notes}, "spec": spec}
    if phase:
        body["status"] = {"phase": phase}
    return PersistentVolumeClaim.model_validate(body)


def pv(
    name: str,
    storage_class: str = "",
    *,
    phase: str | None = None,
    capacity: str | None = None,
    node_affinity: dict[str, list[str]] | None = None,
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> PersistentVolume:
    """`makePV(name, class)` with `withPhase`, `withCapacity`, `withNodeAffinity` (one term of `In`s)."""
    body_spec: dict[str, Any] = {"storageClassName": storage_class, **spec}
    if capacity is not None:
        body_spec["capacity"] = {"storage": capacity}
    if node_affinity is not None:
        expressions = [{"key": k, "operator": "In", "values": v} for k, v in node_affinity.items()]
        body_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
    body: dict[str, Any] = {"metadata": {"name": name, "labels": labels or {}}, "spec": body_spec}
    if phase:
        body["status"] = {"phase": phase}
    return PersistentVolume.model_validate(body)


def storage_class(
    name: str, mode: str | None = None, provisioner: str = "", allowed: list[dict[str, list[str]]] | None = None
) -> StorageClass:
    body: dict[str, Any] = {"metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        body["volumeBindingMode"] = mode
    if allowed is not None:
        body["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": v} for k, v in term.items()]} for term in allowed
        ]
    return StorageClass.model_validate(body)


def csi_node(name: str, limits: dict[str, int | None], annotations: dict[str, str] | None = None) -> CSINode:
    drivers = []
    for driver, count in limits.items():
        entry: dict[str, Any] = {"name": driver, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return CSINode.model_validate(
        {"metadata": {"name": name, "annotations": annotations or {}}, "spec": {"drivers": drivers}}
    )


def claim_volume(claim: str, name: str = "") -> dict[str, Any]:
    """A pod volume backed by a claim (`withPVCVolume`)."""
    return {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}


def cluster(nodes: list[Node], pods: list[Pod], objects: list[StorageObject]) -> ClusterObjects:
    out = ClusterObjects(nodes=list(nodes), pods=list(pods))
    for obj in objects:
        out.add(obj)
    return out


def storage_table(nodes: list[Node], pods: list[Pod] = (), objects: list[StorageObject] = ()) -> NodeTable:  # type: ignore[assignment]
    return build_table(cluster(nodes, list(pods), list(objects)))


def run_plugin(
    plugin: Any,
    nodes: list[Node],
    incoming: Pod,
    objects: list[StorageObject] = (),  # type: ignore[assignment]
    pods: list[Pod] = (),  # type: ignore[assignment]
) -> tuple[Status, dict[str, Status]]:
    """One plugin alone, as upstream's unit tests call it: PreFilter, then (unless it rejected or
    skipped) Filter on every node. Returns the PreFilter status and each node's Filter status."""
    table = storage_table(nodes, pods, objects)
    state = CycleState()
    _, pre = plugin.pre_filter(state, PodInfo.of(incoming), table)
    if not pre.is_success():
        return pre, {}
    verdicts = plugin.filter(state, PodInfo.of(incoming), table)
    return pre, {name: verdicts.status_of(i) for i, name in enumerate(table.names)}


def schedule_with(
    nodes: list[Node],
    incoming: Pod,
    objects: list[StorageObject] = (),  # type: ignore[assignment]
    pods: list[Pod] = (),  # type: ignore[assignment]
) -> ScheduleResult:
    """A full default-profile cycle over a cluster with storage objects."""
    table = storage_table(nodes, pods, objects)
    return Scheduler(new_framework(), seed=0).schedule_pod(table, PodInfo.of(incoming))


def outcome(status: Status) -> tuple[str, tuple[str, ...]] | None:
    """(code, reasons) of a rejection; None for Success."""
    return None if status.code == Code.SUCCESS else (status.code.label, status.reasons)
