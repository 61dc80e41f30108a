"""The scheduler benchmark: scheduler_perf workloads (bench/README.md), every node evaluated per pod.

Each `createPods` op schedules its pods one at a time with the default profile and binds each
scheduled pod before the next. Only the `collectMetrics` op is timed; for it every cycle's result
and events are kept in memory, as the app keeps them for a person watching.
"""

from __future__ import annotations

import copy
import fnmatch
import gc
import os
import time
import tracemalloc
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from .api.loading import InputError, format_validation_error, load_yaml_documents
from .api.objects import Node, Pod, TopologySpreadConstraint
from .api.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from .bench_reference import ReferenceKernel
from .dra.templates import create_template_claims
from .framework.events import Event
from .framework.node_table import NodeTable
from .framework.pod_info import PodInfo
from .framework.profile import default_profile
from .plugins.registry import new_framework
from .schedule_one import Scheduler, ScheduleResult
from .versions import Version

__all__ = ["Workload", "format_curve", "format_row", "load_workload", "run_workload"]

HOSTNAME_LABEL = "kubernetes.io/hostname"
CHUNK = 50  # measured pods timed per turn, reference then scheduler


@dataclass
class Op:
    opcode: str
    count: int
    template: dict[str, Any]
    namespace: str = "default"
    label_nodes: tuple[str, list[str]] | None = None
    collect_metrics: bool = False
    # createResourceDriver: the driver, the nodes it serves (a glob on names), devices per node
    driver: str = ""
    nodes: str = "*"
    max_claims_per_node: int = 0


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
        workload.ops.append(_op(op, f"{source}: ops[{k}]"))
    if sum(op.collect_metrics for op in workload.ops) > 1:
        raise InputError(f"{source}: at most one op may set collectMetrics")
    return workload


_TEMPLATE_KEYS = {"createNodes": "nodeTemplate", "createPods": "podTemplate", "createAny": "template"}


def _op(op: Any, where: str) -> Op:
    """One op of a workload file: createNodes, createPods, createResourceDriver or createAny
    (scheduler_perf's opcodes; createAny takes a DeviceClass or a ResourceClaimTemplate)."""
    opcodes = (*_TEMPLATE_KEYS, "createResourceDriver")
    if not isinstance(op, dict) or op.get("opcode") not in opcodes:
        raise InputError(f"{where}.opcode: expected one of {', '.join(opcodes)}")
    opcode = op["opcode"]
    if opcode == "createResourceDriver":
        per_node = op.get("maxClaimsPerNode")
        if not isinstance(per_node, int) or per_node < 1:
            raise InputError(f"{where}.maxClaimsPerNode: must be a positive integer")
        return Op(
            opcode,
            0,
            {},
            driver=str(op.get("driverName") or ""),
            nodes=str(op.get("nodes") or "*"),
            max_claims_per_node=per_node,
        )
    count = op.get("count", 1 if opcode == "createAny" else None)
    if not isinstance(count, int) or count < 0:
        raise InputError(f"{where}.count: must be a non-negative integer")
    key = _TEMPLATE_KEYS[opcode]
    template = op.get(key)
    if not isinstance(template, dict):
        raise InputError(f"{where}.{key}: Required value")
    label_nodes = None
    if op.get("labelNodes"):
        label = op["labelNodes"]
        label_nodes = (str(label["key"]), [str(v) for v in label["values"]])
    return Op(
        opcode, count, template, str(op.get("namespace") or "default"), label_nodes, bool(op.get("collectMetrics"))
    )


def _named(template: dict[str, Any], index: int) -> dict[str, Any]:
    obj = copy.deepcopy(template)
    meta = obj.setdefault("metadata", {})
    if not meta.get("name"):
        meta["name"] = f"{meta.get('generateName', 'obj-')}{index:05d}"
    meta.pop("generateName", None)
    return obj


def _validate(model: type[Any], data: dict[str, Any], source: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, source, None)) from None


def build_nodes(workload: Workload, num_nodes: int | None = None) -> list[Node]:
    """The workload's nodes; with `num_nodes`, its largest createNodes op is resized so the
    cluster has that many nodes (the same workload on a bigger or smaller cluster)."""
    ops = [op for op in workload.ops if op.opcode == "createNodes"]
    counts = [op.count for op in ops]
    if num_nodes is not None and ops:
        largest = counts.index(max(counts))
        counts[largest] = max(num_nodes - (sum(counts) - counts[largest]), 0)
    nodes: list[Node] = []
    for op, count in zip(ops, counts, strict=True):
        template_meta = op.template.get("metadata") or {}
        for index in range(count):
            # a shallow copy: validation reads the template, never changes it
            meta = {k: v for k, v in template_meta.items() if k != "generateName"}
            if not meta.get("name"):
                meta["name"] = f"{template_meta.get('generateName', 'obj-')}{len(nodes):05d}"
            labels = meta["labels"] = dict(meta.get("labels") or {})
            data = {**op.template, "metadata": meta}
            labels[HOSTNAME_LABEL] = meta["name"]
            if op.label_nodes:
                key, values = op.label_nodes
                labels[key] = values[index % len(values)]
            nodes.append(_validate(Node, data, workload.name))
    return nodes


def _pods(workload: Workload, op: Op, limit: int | None = None) -> list[PodInfo]:
    infos = []
    for index in range(op.count if limit is None else min(limit, op.count)):
        data = _named(op.template, index)
        data["metadata"]["namespace"] = op.namespace
        pod = _validate(Pod, data, workload.name)
        pod.spec.priority = pod.spec.priority or 0
        infos.append(PodInfo.of(pod))
    return infos


def _create_dra_objects(table: NodeTable, op: Op, source: str) -> None:
    """createResourceDriver: a slice of `maxClaimsPerNode` devices for each node the glob names, as
    scheduler_perf's resourceSlice() makes them (dra.go); createAny: a DeviceClass or a template."""
    if op.opcode == "createResourceDriver":
        for name in table.names:
            if fnmatch.fnmatchcase(name, op.nodes):
                table.dra.slices.append(_driver_slice(op.driver, name, op.max_claims_per_node))
        table.dra.invalidate_slices()
        return
    kind = op.template.get("kind")
    if kind == "DeviceClass":
        device_class = _validate(DeviceClass, op.template, source)
        table.dra.classes[device_class.metadata.name] = device_class
    elif kind == "ResourceClaimTemplate":
        template = _validate(
            ResourceClaimTemplate,
            {**op.template, "metadata": {**op.template.get("metadata", {}), "namespace": op.namespace}},
            source,
        )
        table.dra.templates[f"{op.namespace}/{template.metadata.name}"] = template
    else:
        raise InputError(
            f"{source}: createAny: unsupported kind {kind!r} (expected DeviceClass or ResourceClaimTemplate)"
        )


def _driver_slice(driver: str, node: str, devices: int) -> ResourceSlice:
    return ResourceSlice.model_validate(
        {
            "metadata": {"name": node},
            "spec": {
                "driver": driver,
                "nodeName": node,
                "pool": {"name": node, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"instance-{i}",
                        "attributes": {
                            "model": {"string": "A100"},
                            "family": {"string": "GPU"},
                            "driverVersion": {"version": "1.2.3"},
                            "dra.example.com/numa": {"int": i},
                        },
                        "capacity": {"memory": {"value": "1Gi"}},
                    }
                    for i in range(devices)
                ],
            },
        }
    )


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def run_workload(
    workload: Workload,
    seed: int = 0,
    num_nodes: int | None = None,
    max_pods: int | None = None,
    reference: bool = True,
    measure_memory: bool = False,
    profiler: Any = None,
    version: Version | None = None,
) -> dict[str, Any]:
    """Run one workload: setup ops, then the measured op timed twice on the same cluster — by the
    reference kernel (then undone) and by the scheduler, which keeps every result and event.

    Setup pods are placed by the reference kernel (the same filters and scores, no explanation),
    so a 50,000-node run does not spend minutes before its timed part. `max_pods` caps the
    measured pods. CPU time (`time.process_time`) is what pods/s are computed from: wall time on
    a shared machine measures the other tenants too.
    """
    if measure_memory:
        tracemalloc.start()
    nodes = build_nodes(workload, num_nodes)
    table = NodeTable.build(nodes)
    memory_per_node = None
    if measure_memory:
        memory_per_node = tracemalloc.get_traced_memory()[0] / max(table.n, 1)
        tracemalloc.stop()
    del nodes
    kernel = ReferenceKernel(table, seed)
    scheduler = Scheduler(new_framework(default_profile(version)), seed=seed)
    measured: dict[str, Any] = {"pods": 0, "scheduled": 0, "seconds": 0.0, "cpuSeconds": 0.0}
    for op in workload.ops:
        if op.opcode in ("createResourceDriver", "createAny"):
            _create_dra_objects(table, op, workload.name)
            continue
        if op.opcode != "createPods":
            continue
        infos = _pods(workload, op, max_pods if op.collect_metrics else None)
        uses_dra = create_template_claims(table.dra, infos, "bench-")
        # the reference kernel knows no devices: DRA pods are placed, and measured, by the scheduler alone
        reference = reference and not uses_dra
        if not op.collect_metrics:
            for info in infos:
                if uses_dra:
                    result = scheduler.schedule_pod(table, info)
                    if result.selected is not None:
                        scheduler.bind(table, info, result.selected, result.state)
                else:
                    kernel.schedule(info)
            continue
        # The snapshot and the queued pods are long-lived: keep them out of the cyclic GC's scans,
        # as a long-running scheduler process does after loading its cache.
        gc.collect()
        gc.freeze()
        results: list[ScheduleResult] = []
        events: list[Event] = []
        scheduler.subscribe(events.append)
        ref = {"seconds": 0.0, "cpuSeconds": 0.0}
        wall_total = cpu_total = 0.0
        scheduled = 0
        # Interleaved in chunks, each timed first for the reference (then undone) and then for the
        # scheduler on the same cluster state, so both see the same load on a shared machine.
        for start in range(0, len(infos), CHUNK):
            chunk = infos[start : start + CHUNK]
            if reference:
                wall, cpu = _clock()
                placed = [(info, kernel.schedule(info)) for info in chunk]
                wall_end, cpu_end = _clock()
                ref["seconds"] += wall_end - wall
                ref["cpuSeconds"] += cpu_end - cpu
                for info, i in reversed(placed):
                    if i is not None:
                        table.remove_pod(info, i)
            if profiler is not None:
                profiler.enable()
            wall, cpu = _clock()
            for info in chunk:
                result = scheduler.schedule_pod(table, info)
                if result.selected is not None:
                    scheduler.bind(table, info, result.selected, result.state)
                    scheduled += 1
                results.append(result)
            wall_end, cpu_end = _clock()
            if profiler is not None:
                profiler.disable()
            wall_total += wall_end - wall
            cpu_total += cpu_end - cpu
        scheduler.framework.emitter.sinks.clear()
        measured = {
            "pods": len(infos),
            "scheduled": scheduled,
            "seconds": wall_total,
            "cpuSeconds": cpu_total,
            "events": len(events),
        }
        del results, events
        gc.unfreeze()
    pods = measured["pods"]

    def rate(seconds: float | None) -> float | None:
        return round(pods / seconds, 1) if seconds else None

    cpu_rate, ref_rate = rate(measured["cpuSeconds"]), rate(ref.get("cpuSeconds"))
    return {
        "workload": workload.name,
        "version": scheduler.framework.version.name,
        "nodes": table.n,
        "measuredPods": pods,
        "scheduled": measured["scheduled"],
        "unschedulable": pods - measured["scheduled"],
        "seconds": round(measured["seconds"], 3),
        "cpuSeconds": round(measured["cpuSeconds"], 3),
        "podsPerSecond": rate(measured["seconds"]),
        "podsPerCpuSecond": cpu_rate,
        "cpuMicrosecondsPerPod": round(1e6 * measured["cpuSeconds"] / pods, 1) if pods else None,
        "referencePodsPerCpuSecond": ref_rate,
        "ratioToReference": round(cpu_rate / ref_rate, 3) if cpu_rate and ref_rate else None,
        "memoryBytesPerNode": None if memory_per_node is None else round(memory_per_node),
        "events": measured.get("events", 0),
        "upstreamThresholdPodsPerSecond": workload.threshold,
        "loadAverage": round(os.getloadavg()[0], 1),
    }


TABLE_HEADER = (
    f"{'workload':<36} {'nodes':>6} {'pods':>5} {'pods/cpu-s':>10} {'wall pods/s':>11} {'reference':>9} "
    f"{'ratio':>6} {'floor':>5} {'cpu µs/pod':>10} {'B/node':>7} {'load':>5}"
)


def format_row(report: dict[str, Any]) -> str:
    memory = report["memoryBytesPerNode"]
    return (
        f"{report['workload']:<36} {report['nodes']:>6} {report['measuredPods']:>5} "
        f"{report['podsPerCpuSecond'] or 0:>10,.0f} {report['podsPerSecond'] or 0:>11,.0f} "
        f"{report['referencePodsPerCpuSecond'] or 0:>9,.0f} {report['ratioToReference'] or 0:>6.2f} "
        f"{report['upstreamThresholdPodsPerSecond'] or 0:>5} {report['cpuMicrosecondsPerPod'] or 0:>10,.0f} "
        f"{'' if memory is None else f'{memory:,}':>7} {report['loadAverage']:>5}\n"
    )


def format_curve(reports: list[dict[str, Any]]) -> str:
    """Per workload, CPU cost per pod against nodes, relative to the smallest size: linear
    growth means the cost ratio stays at or below the node ratio."""
    lines = ["cost per pod vs nodes (cpu µs/pod; ×cost / ×nodes relative to the smallest size):\n"]
    by_name: dict[str, list[dict[str, Any]]] = {}
    for report in reports:
        by_name.setdefault(report["workload"], []).append(report)
    for name, rows in by_name.items():
        rows.sort(key=lambda r: r["nodes"])
        base = rows[0]
        parts = []
        for row in rows:
            cost, grow = row["cpuMicrosecondsPerPod"] or 0, row["nodes"] / base["nodes"]
            factor = cost / base["cpuMicrosecondsPerPod"] if base["cpuMicrosecondsPerPod"] else 0
            parts.append(f"{row['nodes']}: {cost:,.0f} (×{factor:.2f} / ×{grow:.1f})")
        lines.append(f"  {name:<36} " + "  ".join(parts) + "\n")
    return "".join(lines)


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
