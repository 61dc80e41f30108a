"""The scheduler: takes the next pending pod in queue order, runs scheduler_core, binds or records
why not — exactly what kube-scheduler writes (pkg/scheduler/schedule_one.go)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from django.db import transaction
from django.db.models import F

from scheduler_core.framework.events import Event, encode_cycle
from scheduler_core.framework.node_table import NodeTable
from scheduler_core.framework.pod_info import PodInfo
from scheduler_core.framework.runtime import Framework
from scheduler_core.plugins.registry import new_framework
from scheduler_core.plugins.volume_binding import volumes_to_bind
from scheduler_core.schedule_one import Scheduler, ScheduleResult

from .. import cycle_traces, prediction, profiles, rows, scheduler_cache, store
from ..kube_events import event_body, record_event, record_events
from ..models import Cluster, KubeObject, SchedulingCycle
from ..publish import cycle_message, publish, publish_cycles
from ..scheduling_queue import GATED, UNSCHEDULABLE, active_unbound_pods, park, parked_pods_depend_on_binds
from ..services import delete_object
from ..store_bulk import batch_pods, clone, insert_rows, patch_many
from .claim_writes import deallocate, write_claims_of
from .persistentvolume import bind_pod_volumes

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
    picked = queued_pods(cluster, scheduler_names, 1, queue, held)
    return picked[0] if picked else None


def _condition(body: dict[str, Any], status: str, reason: str = "", message: str = "") -> None:
    conditions = [c for c in body.setdefault("status", {}).get("conditions", []) if c.get("type") != "PodScheduled"]
    condition: dict[str, Any] = {"type": "PodScheduled", "status": status, "lastTransitionTime": store.now_rfc3339()}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    body["status"]["conditions"] = [condition, *conditions]


def schedule_next(cluster: Cluster, queue: list[KubeObject] | None = None) -> bool:
    """One scheduling cycle for the next pod; False when the queue is empty. `queue`: the
    `active_unbound_pods` already read."""
    queue = active_unbound_pods(cluster) if queue is None else queue
    if not queue:  # (most steps): the configuration is not read
        return False
    config, version = profiles.settings_of(cluster)
    by_name = profiles.profiles_of(config, version)
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
    summary = _summary(result, cache.rv)
    # Kept before it streams (a client fetches a large cycle as soon as it hears of it); the cycle
    # streams first, then the writes it leads to (bind, condition, events).
    _keep_cycle(cluster, result, wire, cache.rv)
    publish(cluster.pk, cycle_message({**summary, "message": result.message}, wire))
    with transaction.atomic():
        # Events come from the profile's own recorder: its schedulerName reports them (upstream).
        if result.selected is not None and not _pre_bind(scheduler, table, info, result):
            record_event(
                cluster, row.body, "Warning", "FailedScheduling", result.status.message, profile.scheduler_name
            )
        elif result.selected is not None:
            if info.pod.spec.resource_claims:
                write_claims_of(cluster, cache, [info])  # PreBind's claim updates come before the bind
            _bind(cluster, row, info, result, profile.scheduler_name)
        else:
            _fail(cluster, row, info, result, profile.scheduler_name)
    # A question on this pod was revealing when the cycle began (an open one held the pod back).
    if key in revealing:
        nominated = result.nominated_node or ""
        prediction.settle(cluster, key, result.cycle, result.scheduled, result.selected_node, nominated, result.message)
    return True


def _pre_bind(scheduler: Scheduler, table: NodeTable, info: PodInfo, result: ScheduleResult) -> bool:
    """The binding cycle's Reserve and PreBind for a pod that uses ResourceClaims (DynamicResources
    allocates in the assume cache; `write_claims_of` stores it); False, with `result.status` set
    to the failure, when one of them failed. Other pods have nothing to reserve here."""
    if not info.pod.spec.resource_claims or result.selected is None:
        return True
    status = scheduler.reserve_and_pre_bind(table, info, result.selected, result.state)
    if status.is_success():
        return True
    result.status = status
    return False


def _bind(cluster: Cluster, row: KubeObject, info: PodInfo, result: ScheduleResult, reporter: str) -> None:
    node = result.selected_node
    assert node is not None

    def bind(body: dict[str, Any]) -> None:
        body["spec"]["nodeName"] = node
        body.setdefault("status", {}).pop("nominatedNodeName", None)
        _condition(body, "True")

    if result.selected is not None:  # PreBind: the first-consumer claims' volumes, then the bind
        bind_pod_volumes(cluster, result.state, result.selected, COMPONENT)
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
    deallocated = result.post_filter_result.detail.get("deallocate") if result.post_filter_result else None
    if deallocated is not None:  # DynamicResources' PostFilter: a claim that kept the pod off every node
        deallocate(cluster, deallocated)
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


# --- many pods per step (the instant pace) ---------------------------------------------------------


def schedule_batch(cluster: Cluster, limit: int | None = None) -> bool:
    """Schedule up to `limit` pending pods in queue order, one cycle per pod as `schedule_next` runs
    it (same cycle numbers, same seeds, each cycle seeing the previous binds through the scheduler
    cache), then bind them in one transaction with their `Scheduled` events; the cycles' traces are
    kept in memory and stored later (`cycle_traces`). A pod that does not fit is written as
    `schedule_next` writes it; one that preempts ends the batch (its victims' deletion changes the
    queue). Falls back to `schedule_next` when another pod's placement could move a parked pod back
    ahead of the batch (required pod affinity, DoNotSchedule spread). False when the queue is empty."""
    limit = batch_pods() if limit is None else limit
    queue = active_unbound_pods(cluster)
    if not queue:  # (most steps): neither the configuration nor the parked pods are read
        return False
    if limit <= 1 or len(queue) <= 1 or parked_pods_depend_on_binds(cluster):
        return schedule_next(cluster, queue)
    config, version = profiles.settings_of(cluster)
    by_name = profiles.profiles_of(config, version)
    queued = queued_pods(cluster, by_name, limit, queue)
    if len(queued) <= 1:
        return schedule_next(cluster, queue)
    cache = scheduler_cache.synced(cluster)
    table = cache.table()
    names = tuple(table.names)
    columns = cycle_traces.BatchColumns(table)
    start = Cluster.objects.filter(pk=cluster.pk).values_list("cycle", flat=True).get()
    revealing = prediction.revealing_pods(cluster)
    binds: list[tuple[KubeObject, ScheduleResult, str]] = []
    frameworks: dict[str, Framework] = {}
    ran = 0
    try:
        for row in queued:
            key = f"{row.namespace}/{row.name}"
            info = cache.pods.get(key)
            if info is None:
                continue
            ran += 1
            number = start + ran
            profile = by_name[row.body.get("spec", {}).get("schedulerName", COMPONENT)]
            # One framework per profile for the batch (building one is ~2 ms); each cycle gets its
            # own Scheduler, seeded with its cycle number as `schedule_next` seeds it.
            framework = frameworks.get(profile.scheduler_name)
            if framework is None:
                framework = frameworks[profile.scheduler_name] = new_framework(profile)
            framework.emitter.sinks.clear()
            scheduler = Scheduler(framework, seed=number)
            scheduler.cycle = number - 1
            events: list[Event] = []
            scheduler.subscribe(events.append)
            result = scheduler.schedule_pod(table, info)
            if result.selected is not None:
                framework.emitter.sinks.clear()  # the trace is the scheduling cycle's
                if not _pre_bind(scheduler, table, info, result):
                    continue  # PreBind failed (Unreserve ran): the pod stays in the queue
                cycle_traces.defer(cluster.pk, number, events, names, columns, len(columns.steps))
                cache.assume_pod(_bound_body(row.body, result.selected_node or ""))
                columns.bound(table.index[result.selected_node or ""])
                binds.append((row, result, profile.scheduler_name))
                if volumes_to_bind(result.state, result.selected):
                    break  # its volumes are taken at the write: the next pods must see them
                continue
            # Does not fit: the binds so far go first, then this pod as one step would write it.
            Cluster.objects.filter(pk=cluster.pk).update(cycle=F("cycle") + ran)
            _write_binds(cluster, cache, binds)
            cache.follow()
            binds, start, ran = [], number, 0
            summary = _summary(result, cache.rv)
            wire = encode_cycle(events, names)
            _keep_cycle(cluster, result, wire, cache.rv)
            publish(cluster.pk, cycle_message({**summary, "message": result.message}, wire))
            with transaction.atomic():
                _fail(cluster, row, info, result, profile.scheduler_name)
            if key in revealing:
                nominated = result.nominated_node or ""
                prediction.settle(cluster, key, number, False, None, nominated, result.message)
            if result.post_filter_result is not None:
                break  # preemption (or a nomination) changes the queue: the next step picks again
    except Exception:
        scheduler_cache.forget(cluster.pk)  # assumed pods, a table a cycle may not have restored
        raise
    Cluster.objects.filter(pk=cluster.pk).update(cycle=F("cycle") + ran)
    _write_binds(cluster, cache, binds)
    for row, result, _ in binds:
        key = f"{row.namespace}/{row.name}"
        if key in revealing:
            prediction.settle(cluster, key, result.cycle, True, result.selected_node, "", result.message)
    return True


def _summary(result: ScheduleResult, seen_rv: int) -> dict[str, Any]:
    """A cycle's `scheduler.cycle` summary; `resourceVersion`: the one the scheduler's view was at."""
    return {
        "cycle": result.cycle,
        "pod": result.pod.key,
        "scheduled": result.scheduled,
        "node": result.selected_node,
        "resourceVersion": str(seen_rv),
    }


def queued_pods(
    cluster: Cluster,
    scheduler_names: Collection[str],
    limit: int,
    queue: list[KubeObject] | None = None,
    held: Collection[str] | None = None,
) -> list[KubeObject]:
    """The first `limit` pods of the queue in the order `next_pod` picks them (gated pods parked on
    the way), in one read of the queue (`queue`, `held`: as `next_pod` takes them)."""
    queue = active_unbound_pods(cluster) if queue is None else queue
    if not queue:
        return []
    held = prediction.held_pods(cluster) if held is None else held
    picked: list[KubeObject] = []
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
        picked.append(row)
        if len(picked) >= limit:
            break
    return picked


def _bound_body(body: dict[str, Any], node: str) -> dict[str, Any]:
    bound = clone(body)
    _bind_mutation(node)(bound)
    return bound


def _bind_mutation(node: str) -> Callable[[dict[str, Any]], None]:
    def bind(body: dict[str, Any]) -> None:
        body["spec"]["nodeName"] = node
        body.setdefault("status", {}).pop("nominatedNodeName", None)
        _condition(body, "True")

    return bind


def _write_binds(
    cluster: Cluster, cache: scheduler_cache.SchedulerCache, binds: list[tuple[KubeObject, ScheduleResult, str]]
) -> None:
    """Keep the cycles (traces deferred), write the claims PreBind changed, bind the pods and record
    their `Scheduled` events, in one transaction."""
    if not binds:
        return
    seen_rv = cache.rv
    messages: list[dict[str, Any]] = []
    with transaction.atomic():
        write_claims_of(cluster, cache, [result.pod for _, result, _ in binds if result.pod.pod.spec.resource_claims])
        for _, result, _ in binds:
            if result.selected is not None:
                bind_pod_volumes(cluster, result.state, result.selected, COMPONENT)
        # The cycles stream first, then the writes they lead to (registered before the writes' own).
        transaction.on_commit(lambda: publish_cycles(cluster.pk, messages))
        targets = [(row.namespace, row.name, _bind_mutation(result.selected_node or "")) for row, result, _ in binds]
        bodies = {
            f"{b['metadata']['namespace']}/{b['metadata']['name']}": b
            for b in patch_many(cluster, "Pod", targets, COMPONENT)
        }
        events = []
        for row, result, reporter in binds:
            body = bodies.get(f"{row.namespace}/{row.name}")
            if body is not None:
                events.append((reporter, event_body(body, "Normal", "Scheduled", result.message, reporter)))
        # What each cycle saw: the store before the batch and the binds before its own (assumed).
        cycles = []
        for _, result, _ in binds:
            body = bodies.get(result.pod.key)
            cycles.append(
                SchedulingCycle(
                    cluster=cluster,
                    number=result.cycle,
                    pod=result.pod.key,
                    scheduled=True,
                    node=result.selected_node or "",
                    message=result.message,
                    events=cycle_traces.DEFERRED,
                    resource_version=seen_rv,
                )
            )
            summary = {**_summary(result, seen_rv), "message": result.message}
            messages.append({**cycle_message(summary, []), "events": None})
            if body is not None:
                seen_rv = int(body["metadata"]["resourceVersion"])
        insert_rows(SchedulingCycle, cycles)
        SchedulingCycle.objects.filter(cluster=cluster, number__lte=cycles[-1].number - CYCLES_KEPT).delete()
        for reporter in dict.fromkeys(r for r, _ in events):
            record_events(cluster, [e for r, e in events if r == reporter], reporter)
