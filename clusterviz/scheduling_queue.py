"""The scheduling queue's bookkeeping: which unbound pods are active, parked or gated.

Upstream parks a pod that failed in the unschedulable pool and moves it back when a cluster event
could make it schedulable (pkg/scheduler/backend/queue, QueueingHints). Here, coarser:

- a node added or changed moves every parked pod back to the active queue;
- a bound pod deleted (or a nominated one: it held room on its node) does too;
- a pod bound or created bound (upstream's AssignedPodAdd) moves back the parked pods whose verdict
  can depend on other pods' placement: those with required pod affinity or a DoNotSchedule
  topology spread constraint (InterPodAffinity's and PodTopologySpread's hints);
- a DRA object added or changed (a claim, a slice, a device class, a claim template) moves back the
  parked pods with `spec.resourceClaims` (DynamicResources' events), and a parked pod whose
  `status.resourceClaimStatuses` changed (the claim controller made its claim) goes back itself;
- a storage object added or changed (a claim, a volume, a class, a CSI driver, node or capacity)
  moves back the parked pods with a PersistentVolumeClaim volume (VolumeBinding's events);
- a pod left parked for longer than `MAX_PARKED_SECONDS` goes back anyway
  (podMaxInUnschedulablePodsDuration, flushed by flushUnschedulablePodsLeftover).

A pod re-activated by an event gets a fresh queue timestamp.
"""

from __future__ import annotations

import time
from typing import Any

from . import rows
from .models import Cluster, KubeObject

ACTIVE = ""
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
MAX_PARKED_SECONDS = 300.0  # upstream DefaultPodMaxInUnschedulablePodsDuration: 5 minutes


def _parked(cluster: Cluster) -> Any:
    return KubeObject.objects.filter(cluster=cluster, kind="Pod", queue_state=UNSCHEDULABLE)


def _requeue_all(cluster: Cluster) -> None:
    rows.activate_parked(cluster, time.time())


def _depends_on_other_pods(body: dict[str, Any]) -> bool:
    spec = body.get("spec", {})
    affinity = (spec.get("affinity") or {}).get("podAffinity") or {}
    spread = [c for c in spec.get("topologySpreadConstraints") or [] if c.get("whenUnsatisfiable") == "DoNotSchedule"]
    return bool(affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or spread)


def _requeue_pod_dependent(cluster: Cluster) -> None:
    _requeue_where(cluster, _depends_on_other_pods)


DRA_KINDS = frozenset({"ResourceClaim", "ResourceSlice", "DeviceClass", "ResourceClaimTemplate"})
STORAGE_KINDS = frozenset(
    {"PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity"}
)


def _uses_claims(body: dict[str, Any]) -> bool:
    return bool(body.get("spec", {}).get("resourceClaims"))


def _uses_volume_claims(body: dict[str, Any]) -> bool:
    return any(isinstance(v, dict) and "persistentVolumeClaim" in v for v in body.get("spec", {}).get("volumes") or [])


def _requeue_where(cluster: Cluster, wanted: Any) -> None:
    ids = [row.pk for row in rows.parked_pods(cluster) if wanted(row.body)]
    if ids:
        KubeObject.objects.filter(pk__in=ids).update(queue_state=ACTIVE, queue_ts=time.time())


def parked_pods_depend_on_binds(cluster: Cluster) -> bool:
    """Whether binding a pod would move a parked pod back to the active queue (`_requeue_pod_dependent`)."""
    return any(_depends_on_other_pods(row.body) for row in _parked(cluster))


def requeue_after(cluster: Cluster, change_type: str, row: KubeObject, previous: dict[str, Any] | None = None) -> None:
    """Called inside every write's transaction; `previous` is the body before a MODIFIED write."""
    kind = row.kind
    if kind == "Node" and change_type in ("ADDED", "MODIFIED"):
        _requeue_all(cluster)
    elif kind in DRA_KINDS:
        _requeue_where(cluster, _uses_claims)
    elif kind in STORAGE_KINDS:
        _requeue_where(cluster, _uses_volume_claims)
    elif kind != "Pod":
        return
    elif change_type == "DELETED":
        if row.node_name or row.body.get("status", {}).get("nominatedNodeName"):
            _requeue_all(cluster)
    elif change_type == "ADDED":
        if row.node_name:
            _requeue_pod_dependent(cluster)
    elif change_type == "MODIFIED":
        was_bound = bool((previous or {}).get("spec", {}).get("nodeName"))
        if row.node_name and not was_bound:
            _requeue_pod_dependent(cluster)
        claims_made = (previous or {}).get("status", {}).get("resourceClaimStatuses") != row.body.get("status", {}).get(
            "resourceClaimStatuses"
        )
        if row.queue_state == GATED or (row.queue_state == UNSCHEDULABLE and claims_made):
            # The pod itself changed (e.g. its scheduling gates were removed): PreEnqueue runs again.
            KubeObject.objects.filter(pk=row.pk).update(queue_state=ACTIVE, queue_ts=time.time())


def park(row_id: int, state: str) -> None:
    """Move a pod out of the active queue; the parking time starts the 5-minute flush clock."""
    KubeObject.objects.filter(pk=row_id).update(queue_state=state, queue_ts=time.time())


def flush_leftovers(cluster: Cluster, now: float | None = None) -> int:
    """Pods parked for longer than MAX_PARKED_SECONDS go back to the active queue."""
    now = time.time() if now is None else now
    return _parked(cluster).filter(queue_ts__lt=now - MAX_PARKED_SECONDS).update(queue_state=ACTIVE)


def active_unbound_pods(cluster: Cluster) -> list[KubeObject]:
    """The unbound pods of the active queue, in queue order (higher priority, then the earlier queue
    timestamp), after the leftovers were flushed. Active pods and unbound leftovers (which keep their
    timestamps) are read at once; the flush is written only when there are some."""
    now = time.time()
    queued = rows.queued_pods(cluster, now - MAX_PARKED_SECONDS)
    if any(row.queue_state == UNSCHEDULABLE for row in queued):
        flush_leftovers(cluster, now)
        for row in queued:
            row.queue_state = ACTIVE
    return queued


def activate_pod(cluster: Cluster, namespace: str, name: str) -> None:
    KubeObject.objects.filter(cluster=cluster, kind="Pod", namespace=namespace, name=name).update(
        queue_state=ACTIVE, queue_ts=time.time()
    )
