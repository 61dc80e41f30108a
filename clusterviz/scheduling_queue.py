"""The scheduling queue's bookkeeping: which unbound pods are active, parked or gated.

Upstream parks a pod that failed in the unschedulable queue and moves it back when a cluster event
could make it schedulable (pkg/scheduler/backend/queue, QueueingHints). Here: a node added or
changed, or a pod deleted, moves every parked pod of the cluster back to the active queue, with a
fresh queue timestamp (as upstream refreshes it on requeue).
"""

from __future__ import annotations

import time

from .models import Cluster, KubeObject

ACTIVE = ""
UNSCHEDULABLE = "unschedulable"
GATED = "gated"


def requeue_after(cluster: Cluster, change_type: str, row: KubeObject) -> None:
    """Called inside every write's transaction."""
    kind = row.kind
    if (kind == "Node" and change_type in ("ADDED", "MODIFIED")) or (kind == "Pod" and change_type == "DELETED"):
        KubeObject.objects.filter(cluster=cluster, kind="Pod", queue_state=UNSCHEDULABLE).update(
            queue_state=ACTIVE, queue_ts=time.time()
        )
    elif kind == "Pod" and change_type == "MODIFIED" and row.queue_state == GATED:
        # The pod itself changed (e.g. its scheduling gates were removed): PreEnqueue runs again.
        KubeObject.objects.filter(pk=row.pk).update(queue_state=ACTIVE, queue_ts=time.time())


def park(row_id: int, state: str) -> None:
    KubeObject.objects.filter(pk=row_id).update(queue_state=state)


def activate_pod(cluster: Cluster, namespace: str, name: str) -> None:
    KubeObject.objects.filter(cluster=cluster, kind="Pod", namespace=namespace, name=name).update(
        queue_state=ACTIVE, queue_ts=time.time()
    )
