"""The scheduler: takes the next pending pod in queue order, runs scheduler_core, binds or records
why not — exactly what kube-scheduler writes (pkg/scheduler/schedule_one.go)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db import transaction

from scheduler_core.framework.events import Event, encode_cycle
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.plugins.registry import new_framework
from scheduler_core.schedule_one import Scheduler, ScheduleResult

from .. import prediction, profiles, rows, scheduler_cache, store
from ..kube_events import record_event
from ..models import Cluster, KubeObject, SchedulingCycle
from ..publish import cycle_message, publish
from ..scheduling_queue import GATED, UNSCHEDULABLE, active_unbound_pods, park
from ..services import delete_object

COMPONENT = "default-scheduler"
CYCLES_KEPT = 500


def next_pod(
    cluster: Cluster,
    scheduler_names: Collection[str] = (COMPONENT,),
    queue: list[KubeObject] | None = None,
    held: Collection[str] | None = None,
) -> KubeObject | None:
    """PrioritySort: higher priority first, then the earlier queue timestamp; only pods whose
    `schedulerName` names a profile of the cluster's configuration. A pod the class is asked about
    (an open prediction question) is held back, Pending, until the reveal. `queue`: the
    `active_unbound_pods` already read; `held`: the pods of open questions, if already read."""
    queue = active_unbound_pods(cluster) if queue is None else queue
    if not queue:
        return None
    held = prediction.held_pods(cluster) if held is None else held
    for row in queue:
        spec, meta = row.body.get("spec", {}), row.body.get("metadata", {})
        phase = row.body.get("status", {}).get("phase")
        if spec.get("schedulerName", "default-scheduler") not in scheduler_names or meta.get("deletionTimestamp"):
            continue
        if phase in ("Succeeded", "Failed") or f"{row.namespace}/{row.name}" in held:
            continue
        if spec.get("schedulingGates"):
            park(row.pk, GATED)
            continue
        return row
    return None


def _condition(body: dict[str, Any], status: str, reason: str = "", message: str = "") -> None:
    conditions = [c for c in body.setdefault("status", {}).get("conditions", []) if c.get("type") != "PodScheduled"]
    condition: dict[str, Any] = {"type": "PodScheduled", "status": status, "lastTransitionTime": store.now_rfc3339()}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    body["status"]["conditions"] = [condition, *conditions]


def schedule_next(cluster: Cluster) -> bool:
    """One scheduling cycle for the next pod; False when the queue is empty."""
    queue = active_unbound_pods(cluster)
    if not queue:  # (most steps): the configuration is not read
        return False
    config = profiles.config_of(cluster)
    by_name = profiles.profiles_of(config)
    held, revealing = prediction.questioned_pods(cluster)
    row = next_pod(cluster, by_name, queue, held)
    if row is None:
        return False
    key = f"{row.namespace}/{row.name}"
    cache = scheduler_cache.synced(cluster)
    info = cache.pods.get(key)
    if info is None:  # deleted since it was picked: the next step picks again
        return True
    table = cache.table()
    rows.next_cycle(cluster)
    profile = by_name[row.body.get("spec", {}).get("schedulerName", COMPONENT)]
    scheduler = Scheduler(new_framework(profile), seed=cluster.cycle)
    scheduler.cycle = cluster.cycle - 1
    events: list[Event] = []
    scheduler.subscribe(events.append)
    try:
        result = scheduler.schedule_pod(table, info)
    except Exception:
        cache.drop_table()  # a cycle that failed midway may not have restored what it tried
        raise
    wire = encode_cycle(events, table.names)
    # `resourceVersion`: the one the scheduler's view is at; a browser marks a node whose
    # resourceVersion is newer as changed since this cycle.
    summary = {
        "cycle": result.cycle,
        "pod": key,
        "scheduled": result.scheduled,
        "node": result.selected_node,
        "resourceVersion": str(cache.rv),
    }
    # Kept before it streams (a client fetches a large cycle as soon as it hears of it); the cycle
    # streams first, then the writes it leads to (bind, condition, events).
    _keep_cycle(cluster, result, wire, cache.rv)
    publish(cluster.pk, cycle_message({**summary, "message": result.message}, wire))
    with transaction.atomic():
        # Events come from the profile's own recorder: its schedulerName reports them (upstream).
        if result.selected is not None:
            _bind(cluster, row, info, result, profile.scheduler_name)
        else:
            _fail(cluster, row, info, result, profile.scheduler_name)
    # A question on this pod was revealing when the cycle began (an open one held the pod back).
    if key in revealing:
        nominated = result.nominated_node or ""
        prediction.settle(cluster, key, result.cycle, result.scheduled, result.selected_node, nominated, result.message)
    return True


def _bind(cluster: Cluster, row: KubeObject, info: PodInfo, result: ScheduleResult, reporter: str) -> None:
    node = result.selected_node
    assert node is not None

    def bind(body: dict[str, Any]) -> None:
        body["spec"]["nodeName"] = node
        body.setdefault("status", {}).pop("nominatedNodeName", None)
        _condition(body, "True")

    body = store.patch(cluster, "Pod", row.namespace, row.name, bind, COMPONENT)
    record_event(cluster, body, "Normal", "Scheduled", result.message, reporter)


def _fail(cluster: Cluster, row: KubeObject, info: PodInfo, result: ScheduleResult, reporter: str) -> None:
    nominated = result.nominated_node
    victims = result.post_filter_result.detail.get("victims", []) if result.post_filter_result else []

    def unschedulable(body: dict[str, Any]) -> None:
        _condition(body, "False", "Unschedulable", result.message)
        if result.post_filter_result is not None:
            if nominated:
                body["status"]["nominatedNodeName"] = nominated
            else:
                body["status"].pop("nominatedNodeName", None)

    body = store.patch(cluster, "Pod", row.namespace, row.name, unschedulable, COMPONENT)
    record_event(cluster, body, "Warning", "FailedScheduling", result.message, reporter)
    # Parked first: deleting the victims is the event that moves the preemptor back to the queue.
    park(row.pk, UNSCHEDULABLE)
    for victim in victims:
        _preempt(cluster, victim, body, nominated, reporter)


def _preempt(cluster: Cluster, victim: PodInfo, preemptor: dict[str, Any], node: str, reporter: str) -> None:
    """preemption.go PreemptPod: the DisruptionTarget condition, a (graceful) delete, the Preempted event.

    The victim is Terminating until its kubelet stops it; meanwhile it still holds its room, and
    its deletion is what moves the (parked, nominated) preemptor back to the active queue.
    """

    def mark(body: dict[str, Any]) -> None:
        conditions = [c for c in body.setdefault("status", {}).get("conditions", []) if c["type"] != "DisruptionTarget"]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": f"{reporter}: preempting to accommodate a higher priority pod",
                "lastTransitionTime": store.now_rfc3339(),
            }
        )
        body["status"]["conditions"] = conditions

    try:
        body = store.patch(cluster, "Pod", victim.namespace, victim.name, mark, COMPONENT)
        if not body["metadata"].get("deletionTimestamp"):
            body = delete_object(cluster, "Pod", victim.namespace, victim.name, COMPONENT)
    except store.NotFound:
        return
    # Upstream's message names the preemptor by UID (preemption.go); `related` names it too.
    uid = preemptor["metadata"].get("uid", "")
    message = f"Preempted by pod {uid} on node {node}"
    record_event(cluster, body, "Normal", "Preempted", message, reporter, related=preemptor, action="Preempting")


def _keep_cycle(cluster: Cluster, result: ScheduleResult, wire: list[dict[str, Any]], seen_rv: int) -> None:
    SchedulingCycle.objects.create(
        cluster=cluster,
        number=result.cycle,
        pod=result.pod.key,
        scheduled=result.scheduled,
        node=result.selected_node or "",
        message=result.message,
        events=wire,
        resource_version=seen_rv,
    )
    SchedulingCycle.objects.filter(cluster=cluster, number__lte=result.cycle - CYCLES_KEPT).delete()
