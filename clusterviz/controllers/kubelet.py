"""A simulated kubelet per node: a bound pod goes Pending → ContainerCreating → Running, with the
Pulling, Pulled, Created and Started events; a terminating pod is removed. Also the pod garbage
collector's rule: pods bound to a node that no longer exists are deleted.

Paced lifecycle: at the `slow` pace the image pull and container start take
`CLUSTERVIZ_SLOW_PULL_SECONDS` (default 6 s: `kubectl get pod` shows ContainerCreating meanwhile), and
a deleted pod stays Terminating for its grace period (`--grace-period`, else the pod's
terminationGracePeriodSeconds), at most `CLUSTERVIZ_SLOW_STOP_SECONDS` (default 10 s), as containers that
take their time to stop. At the other paces these steps take no time.

Simulated run time: a pod's containers exit 0 (phase Succeeded, reason Completed) once they have run
for the seconds in its `clusterviz.io/run-seconds` annotation; a Job's pods without one run for
`CLUSTERVIZ_JOB_RUN_SECONDS` (default 5 s). Other pods run until deleted. A pod with restartPolicy
Never and a `clusterviz.io/exit-code` annotation other than 0 exits with that code instead: reason
Error, phase Failed (kubectl shows STATUS Error); restarts (CrashLoopBackOff) are not simulated."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from .. import scheduler_cache, store
from ..kube_events import event_body, record_event, record_events
from ..models import PACE_SLOW, Cluster, KubeObject
from ..scheduler_cache import Entry
from ..store_bulk import batch_pods, patch_many

COMPONENT = "kubelet"
ORPHAN_QUARANTINE_SECONDS = 40.0  # pkg/controller/podgc quarantineTime
RUN_SECONDS_ANNOTATION = "clusterviz.io/run-seconds"
EXIT_CODE_ANNOTATION = "clusterviz.io/exit-code"
SLOW_PULL_SECONDS = 6.0
SLOW_STOP_SECONDS = 10.0
JOB_RUN_SECONDS = 5.0


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _age(meta: dict[str, Any]) -> float:
    then = _epoch(meta.get("creationTimestamp"))
    return 0.0 if then is None else time.time() - then


def _setting(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def run_seconds(body: dict[str, Any]) -> float | None:
    """How long the pod's containers run before they exit 0 (None: until deleted)."""
    value = body["metadata"].get("annotations", {}).get(RUN_SECONDS_ANNOTATION)
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            return None
    if body["spec"].get("restartPolicy", "Always") == "Always":
        return None
    if any(ref.get("kind") == "Job" for ref in body["metadata"].get("ownerReferences", [])):
        return _setting("CLUSTERVIZ_JOB_RUN_SECONDS", JOB_RUN_SECONDS)
    return None


def due_at(cluster: Cluster, body: dict[str, Any]) -> float:
    """When the kubelet's next step for this bound pod is due (epoch seconds; 0: now)."""
    meta, status = body["metadata"], body.get("status", {})
    slow = cluster.pace == PACE_SLOW
    if meta.get("deletionTimestamp"):
        if not slow:
            return 0.0
        grace = float(meta.get("deletionGracePeriodSeconds", 30))
        stop = min(grace, _setting("CLUSTERVIZ_SLOW_STOP_SECONDS", SLOW_STOP_SECONDS))
        return (_epoch(meta["deletionTimestamp"]) or 0.0) + stop
    phase = status.get("phase", "Pending")
    if phase == "Pending":
        if slow and status.get("containerStatuses"):
            return (_epoch(status.get("startTime")) or 0.0) + _setting(
                "CLUSTERVIZ_SLOW_PULL_SECONDS", SLOW_PULL_SECONDS
            )
        return 0.0
    if phase == "Running":
        if _changed_containers(body):
            return 0.0  # a changed image is restarted at once
        seconds = run_seconds(body)
        if seconds is None:
            return float("inf")
        started = [
            _epoch(c.get("state", {}).get("running", {}).get("startedAt")) or 0.0
            for c in status.get("containerStatuses", [])
        ]
        return max(started, default=0.0) + seconds
    return float("inf")


def next_deadline(cluster: Cluster) -> float | None:
    """The earliest future time a kubelet or pod-GC step falls due (None: nothing waits)."""
    return scan(cluster)[1]


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
    """One kubelet (or pod GC) action; False when nothing is due."""
    return scan(cluster)[0]


def _may_act(body: dict[str, Any], node_name: str, node_names: dict[str, int]) -> bool:
    meta = body["metadata"]
    return (
        node_name not in node_names
        or "deletionTimestamp" in meta
        or (body.get("status") or {}).get("phase") in ("Pending", None)
        or (body.get("spec") or {}).get("restartPolicy") in ("Never", "OnFailure")
        or RUN_SECONDS_ANNOTATION in (meta.get("annotations") or {})
        or bool(_changed_containers(body))
    )


def _changed_containers(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The running containers whose image the spec has changed (containerChanged: the kubelet
    restarts them, whatever the restart policy)."""
    statuses = {s.get("name"): s for s in (body.get("status") or {}).get("containerStatuses") or []}
    return [
        c
        for c in (body.get("spec") or {}).get("containers", [])
        if c.get("name") in statuses and statuses[c["name"]].get("image") != c.get("image")
    ]


def _restart_changed(cluster: Cluster, row: Entry, changed: list[dict[str, Any]]) -> None:
    """kuberuntime_manager computePodActions: `Container web definition changed, will be restarted`;
    the new container is pulled, created and started, and its restartCount grows by one."""
    body, node = row.body, row.node_name
    names = {c["name"] for c in changed}
    for container in changed:
        message = f"Container {container['name']} definition changed, will be restarted"
        record_event(cluster, body, "Normal", "Killing", message, COMPONENT, node)

    def restarted(current: dict[str, Any]) -> None:
        now = store.now_rfc3339()
        images = {c["name"]: c.get("image", "") for c in current["spec"].get("containers", [])}
        for status in current.get("status", {}).get("containerStatuses") or []:
            if status.get("name") not in names:
                continue
            started = (status.get("state") or {}).get("running", {}).get("startedAt", now)
            status["lastState"] = {
                "terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": now}
            }
            status["image"] = images.get(status["name"], status.get("image", ""))
            status["restartCount"] = int(status.get("restartCount", 0)) + 1
            status["state"] = {"running": {"startedAt": now}}

    store.patch(cluster, "Pod", row.namespace, row.name, restarted, COMPONENT)
    for container in changed:
        image = container.get("image", "")
        record_event(cluster, body, "Normal", "Pulling", f'Pulling image "{image}"', COMPONENT, node)
        _pulled(cluster, body, image, 1.204)
        record_event(cluster, body, "Normal", "Created", f"Created container: {container['name']}", COMPONENT, node)
        record_event(cluster, body, "Normal", "Started", f"Started container {container['name']}", COMPONENT, node)


def _actionable_pods(cluster: Cluster, node_names: dict[str, int]) -> list[Entry]:
    """Only the bound pods this loop may act on: orphans, terminating pods, pods not started yet, and
    running pods whose containers exit by themselves (restartPolicy Never/OnFailure, as Job pods, or a
    run-seconds annotation)."""
    return [
        row
        for row in scheduler_cache.listed(cluster, "Pod")
        if row.node_name and _may_act(row.body, row.node_name, node_names)
    ]


def scan(cluster: Cluster) -> tuple[bool, float | None]:
    """One pass over the bound pods: (whether an action was taken, else when the next one falls due:
    a paced or run-time step, or a never-started orphan leaving its podgc quarantine)."""
    nodes = {row.name: i for i, row in enumerate(scheduler_cache.listed(cluster, "Node"))}
    pods = _actionable_pods(cluster, nodes)
    now = time.time()
    later = float("inf")
    for row in pods:
        body = row.body
        meta, status = body["metadata"], body.get("status", {})
        node = row.node_name
        if node not in nodes:
            # The pod GC removes a pod whose node is gone. A pod created for a node that never
            # existed is never started by any kubelet; upstream's GC waits 40 s before removing such
            # an orphan (podgc quarantine), so its owner does not recreate it in a hot loop.
            age = _age(meta)
            if status.get("hostIP") or age >= ORPHAN_QUARANTINE_SECONDS:
                store.delete(cluster, "Pod", row.namespace, row.name, "pod-garbage-collector")
                return True, None
            later = min(later, now - age + ORPHAN_QUARANTINE_SECONDS)
            continue
        due = due_at(cluster, body)
        if due > now:
            later = min(later, due)
            continue
        if meta.get("deletionTimestamp"):
            record_event(cluster, body, "Normal", "Killing", _killing(body), COMPONENT, node)
            store.delete(cluster, "Pod", row.namespace, row.name, COMPONENT)
            return True, None
        phase = status.get("phase", "Pending")
        changed = _changed_containers(body) if phase == "Running" else []
        if changed:
            _restart_changed(cluster, row, changed)
            return True, None
        if phase == "Running":
            _complete(cluster, row)
            return True, None
        if phase != "Pending":
            continue
        if not status.get("containerStatuses"):
            _start_creating(cluster, row, nodes)
        else:
            _run(cluster, row)
        return True, None
    return False, (later if later < float("inf") else None)


def _killing(body: dict[str, Any]) -> str:
    names = ", ".join(c["name"] for c in body["spec"].get("containers", []))
    return f"Stopping container {names}"


def _creating(host_ip: str) -> Callable[[dict[str, Any]], None]:
    def creating(body: dict[str, Any]) -> None:
        status = body.setdefault("status", {})
        status["hostIP"] = host_ip
        status["startTime"] = store.now_rfc3339()
        status["containerStatuses"] = _container_statuses(
            body, {"waiting": {"reason": "ContainerCreating"}}, ready=False
        )

    return creating


def _start_creating(cluster: Cluster, row: Entry, nodes: dict[str, int]) -> None:
    node = row.node_name
    body = store.patch(cluster, "Pod", row.namespace, row.name, _creating(_node_ip(nodes, node)), COMPONENT)
    for container in body["spec"].get("containers", []):
        image = container.get("image", "")
        record_event(cluster, body, "Normal", "Pulling", f'Pulling image "{image}"', COMPONENT, node)
        if cluster.pace != PACE_SLOW:
            _pulled(cluster, body, image, 1.204)


def _pulled(cluster: Cluster, body: dict[str, Any], image: str, seconds: float) -> None:
    took = f"{seconds:.3f}s"
    message = f'Successfully pulled image "{image}" in {took} ({took} including waiting)'
    record_event(cluster, body, "Normal", "Pulled", message, COMPONENT, body["spec"].get("nodeName", ""))


def _running(node: str, ip_index: int) -> Callable[[dict[str, Any]], None]:
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

    return running


def _run(cluster: Cluster, row: Entry) -> None:
    node = row.node_name
    pk = KubeObject.objects.filter(cluster=cluster, kind="Pod", namespace=row.namespace, name=row.name).values_list(
        "pk", flat=True
    )
    ip_index = (pk.first() or 0) % 250
    body = store.patch(cluster, "Pod", row.namespace, row.name, _running(node, ip_index), COMPONENT)
    if cluster.pace == PACE_SLOW:
        waited = time.time() - (_epoch(body["status"].get("startTime")) or time.time())
        for container in body["spec"].get("containers", []):
            _pulled(cluster, body, container.get("image", ""), max(waited, 0.0))
    for container in body["spec"].get("containers", []):
        record_event(cluster, body, "Normal", "Created", f"Created container: {container['name']}", COMPONENT, node)
        record_event(cluster, body, "Normal", "Started", f"Started container {container['name']}", COMPONENT, node)


def start_batch(cluster: Cluster, limit: int | None = None) -> bool:
    """Move every due, not yet started pod one state on at once (ContainerCreating, or Running), as
    the kubelets of many nodes do in parallel: one transaction of pod writes, then their events
    (Pulling and Pulled; Created and Started), as `scan` writes them one pod at a time. False when
    fewer than two pods are due (`scan` takes those, and every other kind of kubelet action)."""
    limit = batch_pods() if limit is None else limit
    if cluster.pace == PACE_SLOW:
        return False
    nodes = {row.name: i for i, row in enumerate(scheduler_cache.listed(cluster, "Node"))}
    creating: list[Entry] = []
    running: list[Entry] = []
    for row in _actionable_pods(cluster, nodes):
        status = row.body.get("status") or {}
        if row.node_name not in nodes or row.body["metadata"].get("deletionTimestamp"):
            continue
        if status.get("phase", "Pending") != "Pending" or due_at(cluster, row.body) > time.time():
            continue
        (running if status.get("containerStatuses") else creating).append(row)
        if len(creating) + len(running) >= limit:
            break
    if len(creating) + len(running) < 2:
        return False
    names = [row.name for row in running]
    ids: dict[tuple[str, str], int] = {}
    for start in range(0, len(names), 500):
        query = KubeObject.objects.filter(cluster=cluster, kind="Pod", name__in=names[start : start + 500])
        ids.update({(ns, name): pk for ns, name, pk in query.values_list("namespace", "name", "pk")})
    with transaction.atomic():
        targets = [(row.namespace, row.name, _creating(_node_ip(nodes, row.node_name))) for row in creating]
        events = []
        for body in patch_many(cluster, "Pod", targets, COMPONENT):
            node = body["spec"]["nodeName"]
            for container in body["spec"].get("containers", []):
                image = container.get("image", "")
                events.append(event_body(body, "Normal", "Pulling", f'Pulling image "{image}"', COMPONENT, node))
                took = "1.204s"
                pulled = f'Successfully pulled image "{image}" in {took} ({took} including waiting)'
                events.append(event_body(body, "Normal", "Pulled", pulled, COMPONENT, node))
        targets = [
            (row.namespace, row.name, _running(row.node_name, ids.get((row.namespace, row.name), 0) % 250))
            for row in running
        ]
        for body in patch_many(cluster, "Pod", targets, COMPONENT):
            node = body["spec"]["nodeName"]
            for container in body["spec"].get("containers", []):
                name = container["name"]
                events.append(event_body(body, "Normal", "Created", f"Created container: {name}", COMPONENT, node))
                events.append(event_body(body, "Normal", "Started", f"Started container {name}", COMPONENT, node))
        record_events(cluster, events, COMPONENT)
    return True


def exit_code(body: dict[str, Any]) -> int:
    """The code the pod's containers exit with: its exit-code annotation, honoured for restartPolicy
    Never only (another policy would restart the container, which is not simulated)."""
    value = body["metadata"].get("annotations", {}).get(EXIT_CODE_ANNOTATION)
    if value is None or body["spec"].get("restartPolicy", "Always") != "Never":
        return 0
    try:
        return int(value)
    except ValueError:
        return 0


def _complete(cluster: Cluster, row: Entry) -> None:
    """The containers exit: with 0, phase Succeeded and reason Completed; otherwise phase Failed and
    reason Error (the Ready condition's reason PodCompleted or PodFailed, as the kubelet's status)."""
    code = exit_code(row.body)
    phase, reason, ready_reason = (
        ("Succeeded", "Completed", "PodCompleted") if code == 0 else ("Failed", "Error", "PodFailed")
    )

    def completed(body: dict[str, Any]) -> None:
        status = body.setdefault("status", {})
        now = store.now_rfc3339()
        status["phase"] = phase
        for container in status.get("containerStatuses", []):
            started = container.get("state", {}).get("running", {}).get("startedAt", now)
            container["state"] = {
                "terminated": {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": now}
            }
            container["ready"] = False
            container["started"] = False
        for condition in status.get("conditions", []):
            if condition["type"] in ("Ready", "ContainersReady"):
                condition.update(status="False", reason=ready_reason, lastTransitionTime=now)

    store.patch(cluster, "Pod", row.namespace, row.name, completed, COMPONENT)
