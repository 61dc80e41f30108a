"""A simulated kubelet per node: a bound pod goes Pending → ContainerCreating → Running, with the
Pulling, Pulled, Created and Started events; a terminating pod is removed. Also the pod garbage
collector's rule: pods bound to a node that no longer exists are deleted."""

from __future__ import annotations

import time
import zlib
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from .. import store
from ..kube_events import record_event
from ..models import Cluster, KubeObject

COMPONENT = "kubelet"
ORPHAN_QUARANTINE_SECONDS = 40.0  # pkg/controller/podgc quarantineTime


def _age(meta: dict[str, Any]) -> float:
    stamp = meta.get("creationTimestamp")
    if not stamp:
        return 0.0
    try:
        return time.time() - datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _bound_pods(cluster: Cluster) -> QuerySet[KubeObject]:
    return KubeObject.objects.filter(cluster=cluster, kind="Pod").exclude(node_name="")


def _node_names(cluster: Cluster) -> QuerySet[KubeObject]:
    return KubeObject.objects.filter(cluster=cluster, kind="Node").values("name")


def orphan_deadline(cluster: Cluster) -> float | None:
    """When the next never-started orphan pod becomes due for the pod GC (None: none waits)."""
    orphans = _bound_pods(cluster).exclude(node_name__in=_node_names(cluster))
    due = [
        time.time() - _age(row.body["metadata"]) + ORPHAN_QUARANTINE_SECONDS
        for row in orphans
        if not row.body.get("status", {}).get("hostIP")
    ]
    return min(due) if due else None


def _container_statuses(body: dict[str, Any], state: dict[str, Any], ready: bool) -> list[dict[str, Any]]:
    return [
        {
            "name": c["name"],
            "image": c.get("image", ""),
            "imageID": "",
            "ready": ready,
            "restartCount": 0,
            "started": ready,
            "state": state,
        }
        for c in body["spec"].get("containers", [])
    ]


def _node_ip(nodes: dict[str, int], node: str) -> str:
    return f"192.168.{nodes.get(node, 0) // 250}.{10 + nodes.get(node, 0) % 250}"


def step(cluster: Cluster) -> bool:
    names = KubeObject.objects.filter(cluster=cluster, kind="Node").values_list("name", flat=True)
    nodes = {name: i for i, name in enumerate(names)}
    # Only the pods this loop may act on are read (at 50,000 running pods, reading them all per step
    # would cost seconds): orphans, terminating pods, and pods not started yet.
    pods = (
        _bound_pods(cluster)
        .filter(
            ~Q(node_name__in=_node_names(cluster))
            | Q(body__metadata__has_key="deletionTimestamp")
            | Q(body__status__phase="Pending")
            | Q(body__status__phase__isnull=True)
        )
        .order_by("id")
    )
    for row in pods:
        body = row.body
        meta, status = body["metadata"], body.get("status", {})
        node = row.node_name
        if node not in nodes:
            # The pod GC removes a pod whose node is gone. A pod created for a node that never
            # existed is never started by any kubelet; upstream's GC waits 40 s before removing such
            # an orphan (podgc quarantine), so its owner does not recreate it in a hot loop.
            if status.get("hostIP") or _age(meta) >= ORPHAN_QUARANTINE_SECONDS:
                store.delete(cluster, "Pod", row.namespace, row.name, "pod-garbage-collector")
                return True
            continue
        if meta.get("deletionTimestamp"):
            record_event(cluster, body, "Normal", "Killing", _killing(body), COMPONENT, node)
            store.delete(cluster, "Pod", row.namespace, row.name, COMPONENT)
            return True
        phase = status.get("phase", "Pending")
        if phase != "Pending":
            continue
        if not status.get("containerStatuses"):
            _start_creating(cluster, row, nodes)
        else:
            _run(cluster, row)
        return True
    return False


def _killing(body: dict[str, Any]) -> str:
    names = ", ".join(c["name"] for c in body["spec"].get("containers", []))
    return f"Stopping container {names}"


def _start_creating(cluster: Cluster, row: KubeObject, nodes: dict[str, int]) -> None:
    node = row.node_name

    def creating(body: dict[str, Any]) -> None:
        status = body.setdefault("status", {})
        status["hostIP"] = _node_ip(nodes, node)
        status["startTime"] = store.now_rfc3339()
        status["containerStatuses"] = _container_statuses(
            body, {"waiting": {"reason": "ContainerCreating"}}, ready=False
        )

    body = store.patch(cluster, "Pod", row.namespace, row.name, creating, COMPONENT)
    for container in body["spec"].get("containers", []):
        image = container.get("image", "")
        record_event(cluster, body, "Normal", "Pulling", f'Pulling image "{image}"', COMPONENT, node)
        record_event(
            cluster,
            body,
            "Normal",
            "Pulled",
            f'Successfully pulled image "{image}" in 1.204s (1.204s including waiting)',
            COMPONENT,
            node,
        )


def _run(cluster: Cluster, row: KubeObject) -> None:
    node = row.node_name
    ip_index = row.pk % 250

    def running(body: dict[str, Any]) -> None:
        status = body.setdefault("status", {})
        now = store.now_rfc3339()
        status["phase"] = "Running"
        status["podIP"] = f"10.244.{zlib.crc32(node.encode()) % 250}.{ip_index + 2}"
        status["containerStatuses"] = _container_statuses(body, {"running": {"startedAt": now}}, ready=True)
        conditions = [
            c for c in status.get("conditions", []) if c["type"] not in ("Initialized", "Ready", "ContainersReady")
        ]
        for kind in ("Initialized", "ContainersReady", "Ready"):
            conditions.append({"type": kind, "status": "True", "lastTransitionTime": now})
        status["conditions"] = conditions

    body = store.patch(cluster, "Pod", row.namespace, row.name, running, COMPONENT)
    for container in body["spec"].get("containers", []):
        record_event(cluster, body, "Normal", "Created", f"Created container: {container['name']}", COMPONENT, node)
        record_event(cluster, body, "Normal", "Started", f"Started container {container['name']}", COMPONENT, node)
