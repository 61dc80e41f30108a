"""The scheduler benchmark: scheduler_perf workloads (bench/README.md), every node evaluated per pod.

Each `createPods` op schedules its pods one at a time with the default profile and binds each
scheduled pod before the next. Only the `collectMetrics` op is timed; for it every cycle's result
and events are kept in memory, as the app keeps them for a person watching.
"""

from __future__ import annotations

import copy
import gc
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from .api.loading import InputError, format_validation_error, load_yaml_documents
from .api.objects import Node, Pod, TopologySpreadConstraint
from .framework.events import Event
from .framework.node_table import NodeTable
from .framework.pod_info import PodInfo
from .schedule_one import Scheduler, ScheduleResult

__all__ = ["Workload", "format_report", "load_workload", "run_workload"]

HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass
class Op:
    opcode: str
    count: int
    template: dict[str, Any]
    namespace: str = "default"
    label_nodes: tuple[str, list[str]] | None = None
    collect_metrics: bool = False


@dataclass
class Workload:
    name: str
    threshold: int | None
    ops: list[Op] = field(default_factory=list)


def load_workload(text: str | bytes, source: str) -> Workload:
    documents = load_yaml_documents(text, source)
    if len(documents) != 1 or not isinstance(documents[0].data, dict):
        raise InputError(f"{source}: expected one workload document")
    raw = documents[0].data
    reference = raw.get("reference") or {}
    workload = Workload(str(raw.get("name", source)), reference.get("upstreamThresholdPodsPerSecond"))
    for k, op in enumerate(raw.get("ops") or []):
        where = f"{source}: ops[{k}]"
        if not isinstance(op, dict) or op.get("opcode") not in ("createNodes", "createPods"):
            raise InputError(f"{where}.opcode: expected createNodes or createPods")
        count = op.get("count")
        if not isinstance(count, int) or count < 0:
            raise InputError(f"{where}.count: must be a non-negative integer")
        key = "nodeTemplate" if op["opcode"] == "createNodes" else "podTemplate"
        template = op.get(key)
        if not isinstance(template, dict):
            raise InputError(f"{where}.{key}: Required value")
        label_nodes = None
        if op.get("labelNodes"):
            label = op["labelNodes"]
            label_nodes = (str(label["key"]), [str(v) for v in label["values"]])
        workload.ops.append(
            Op(
                op["opcode"],
                count,
                template,
                str(op.get("namespace") or "default"),
                label_nodes,
                bool(op.get("collectMetrics")),
            )
        )
    if sum(op.collect_metrics for op in workload.ops) > 1:
        raise InputError(f"{source}: at most one op may set collectMetrics")
    return workload


def _named(template: dict[str, Any], index: int) -> dict[str, Any]:
    obj = copy.deepcopy(template)
    meta = obj.setdefault("metadata", {})
    if not meta.get("name"):
        meta["name"] = f"{meta.get('generateName', 'obj-')}{index:05d}"
    meta.pop("generateName", None)
    return obj


def _validate(model: type[Node] | type[Pod], data: dict[str, Any], source: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, None)) from None


def run_workload(workload: Workload, seed: int = 0) -> dict[str, Any]:
    nodes: list[Node] = []
    for op in workload.ops:
        if op.opcode != "createNodes":
            continue
        for index in range(op.count):
            data = _named(op.template, len(nodes) if "name" not in op.template.get("metadata", {}) else index)
            labels = data["metadata"].setdefault("labels", {}) or {}
            data["metadata"]["labels"] = labels
            labels[HOSTNAME_LABEL] = data["metadata"]["name"]
            if op.label_nodes:
                key, values = op.label_nodes
                labels[key] = values[index % len(values)]
            nodes.append(_validate(Node, data, workload.name))
    table = NodeTable.build(nodes)
    scheduler = Scheduler(seed=seed)
    measured: dict[str, Any] = {"pods": 0, "scheduled": 0, "unschedulable": 0, "seconds": 0.0}
    for op in workload.ops:
        if op.opcode != "createPods":
            continue
        infos = []
        for index in range(op.count):
            data = _named(op.template, index)
            data["metadata"]["namespace"] = op.namespace
            pod = _validate(Pod, data, workload.name)
            pod.spec.priority = pod.spec.priority or 0
            infos.append(PodInfo.of(pod))
        # The snapshot and the queued pods are long-lived: keep them out of the cyclic GC's scans,
        # as a long-running scheduler process does after loading its cache.
        gc.collect()
        gc.freeze()
        results: list[ScheduleResult] = []
        events: list[Event] = []
        if op.collect_metrics:
            scheduler.subscribe(events.append)
        started = time.perf_counter()
        scheduled = 0
        for info in infos:
            result = scheduler.schedule_pod(table, info)
            if result.selected is not None:
                scheduler.bind(table, info, result.selected)
                scheduled += 1
            if op.collect_metrics:
                results.append(result)
        elapsed = time.perf_counter() - started
        if op.collect_metrics:
            scheduler.framework.emitter.sinks.clear()
            measured = {
                "pods": len(infos),
                "scheduled": scheduled,
                "unschedulable": len(infos) - scheduled,
                "seconds": elapsed,
                "events": len(events),
            }
    seconds = measured["seconds"]
    return {
        "workload": workload.name,
        "nodes": table.n,
        "measuredPods": measured["pods"],
        "scheduled": measured["scheduled"],
        "unschedulable": measured["unschedulable"],
        "seconds": round(seconds, 3),
        "podsPerSecond": round(measured["pods"] / seconds, 1) if seconds else None,
        "events": measured.get("events", 0),
        "upstreamThresholdPodsPerSecond": workload.threshold,
    }


def format_report(report: dict[str, Any]) -> str:
    return (
        f"{report['workload']}: nodes={report['nodes']} measuredPods={report['measuredPods']} "
        f"scheduled={report['scheduled']} unschedulable={report['unschedulable']} "
        f"seconds={report['seconds']} podsPerSecond={report['podsPerSecond']} "
        f"(upstream floor {report['upstreamThresholdPodsPerSecond']})\n"
    )


# --- preemption ---------------------------------------------------------------------------------
# Modelled on scheduler_perf's PreemptionBasic (test/integration/scheduler_perf/config/templates:
# node-default.yaml 4 cpu / 32Gi / 110 pods, pod-low-priority.yaml 900m cpu, pod-high-priority.yaml
# 3 cpu at priority 10): every node is full of low-priority pods, so every node is a potential
# preemption candidate and each one's dry run reprieves all but three of its pods.

LOW_PODS_PER_NODE = 4
BENCH_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
RFC3339 = "%Y-%m-%dT%H:%M:%SZ"


# The preemptor's own DoNotSchedule spread over hostnames (its selector matches only itself), so
# PodTopologySpread's Filter and its AddPod/RemovePod take part in the dry run.
SPREAD = {
    "maxSkew": 1,
    "topologyKey": HOSTNAME_LABEL,
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "high"}},
}


def preemption_cluster(num_nodes: int, spread: bool = False) -> tuple[NodeTable, PodInfo]:
    """A table of `num_nodes` full nodes and the high-priority pod that must preempt (with a
    topology spread constraint when `spread`)."""
    nodes = [
        Node.model_validate(
            {
                "metadata": {"name": f"node-{i:05d}", "labels": {HOSTNAME_LABEL: f"node-{i:05d}"}},
                "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
            }
        )
        for i in range(num_nodes)
    ]
    low = []
    for i in range(num_nodes):
        for k in range(LOW_PODS_PER_NODE):
            pod = _bench_pod(f"low-{i:05d}-{k}", {"cpu": "900m", "memory": "500Mi"}, priority=1)
            pod.spec.node_name = nodes[i].metadata.name
            # every pod its own start time, as in a real cluster
            pod.status.start_time = (BENCH_EPOCH + timedelta(seconds=i * LOW_PODS_PER_NODE + k)).strftime(RFC3339)
            low.append(PodInfo.of(pod))
    high = _bench_pod("high", {"cpu": "3", "memory": "500Mi"}, priority=10)
    if spread:
        high.metadata.labels = {"app": "high"}
        high.spec.topology_spread_constraints = [TopologySpreadConstraint.model_validate(SPREAD)]
    return NodeTable.build(nodes, low), PodInfo.of(high)


def _bench_pod(name: str, requests: dict[str, str], priority: int) -> Pod:
    pod = Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "containers": [
                    {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}
                ]
            },
        }
    )
    pod.spec.priority = priority
    pod.spec.preemption_policy = "PreemptLowerPriority"
    return pod


def run_preemption(num_nodes: int, repeats: int = 5, seed: int = 0, spread: bool = False) -> dict[str, Any]:
    """Time whole cycles of the preempting pod (Filter finds no node, PostFilter preempts)."""
    table, high = preemption_cluster(num_nodes, spread)
    scheduler = Scheduler(seed=seed)
    gc.collect()
    gc.freeze()
    cycle_ms: list[float] = []
    cpu_ms: list[float] = []
    post_filter_ms: list[float] = []
    result = None
    for _ in range(repeats):
        timings: dict[str, float] = {}

        def sink(event: Event, timings: dict[str, float] = timings) -> None:
            if event.type == "phase.started" and event.data.get("point") == "PostFilter":
                timings["postFilter"] = time.perf_counter()

        scheduler.framework.emitter.sinks[:] = [sink]
        started, cpu_started = time.perf_counter(), time.process_time()
        result = scheduler.schedule_pod(table, high)
        ended, cpu_ended = time.perf_counter(), time.process_time()
        cycle_ms.append((ended - started) * 1000)
        cpu_ms.append((cpu_ended - cpu_started) * 1000)
        post_filter_ms.append((ended - timings.get("postFilter", ended)) * 1000)
    scheduler.framework.emitter.sinks.clear()
    assert result is not None
    victims = result.post_filter_result.detail.get("victims", []) if result.post_filter_result else []
    return {
        "workload": "PreemptionWithSpread" if spread else "Preemption",
        "nodes": num_nodes,
        "pods": len(table.pods) * LOW_PODS_PER_NODE,
        "nominatedNode": result.nominated_node,
        "victims": len(victims),
        "firstCycleMs": round(cycle_ms[0], 2),
        "cycleMs": round(sorted(cycle_ms)[len(cycle_ms) // 2], 2),
        "cycleCpuMs": round(sorted(cpu_ms)[len(cpu_ms) // 2], 2),
        "postFilterMs": round(sorted(post_filter_ms)[len(post_filter_ms) // 2], 2),
        "repeats": repeats,
    }


def format_preemption_report(report: dict[str, Any]) -> str:
    return (
        f"{report['workload']}: nodes={report['nodes']} pods={report['pods']} "
        f"nominated={report['nominatedNode']} victims={report['victims']} "
        f"first cycle={report['firstCycleMs']}ms; median of {report['repeats']}: cycle={report['cycleMs']}ms "
        f"(cpu {report['cycleCpuMs']}ms) postFilter(preemption)={report['postFilterMs']}ms "
        "(target < 50 ms at 5,000 nodes)\n"
    )
