"""Explain one pod against a cluster snapshot: the whole cycle, every node, every plugin.

`explain()` runs a cycle without binding; `result_to_json()` gives the CLI's JSON contract and
`format_text()` the readable report.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .api.loading import ClusterObjects
from .api.objects import Pod, Workload
from .api.workloads import WorkloadIndex, WorkloadRef
from .dra.index import DraIndex
from .explain_devices import device_report, device_text
from .framework.events import Event
from .framework.node_table import NodeTable
from .framework.pod_info import PodInfo
from .framework.profile import Profile
from .framework.status import Code, Status
from .framework.volume_index import VolumeIndex
from .plugins.names import DYNAMIC_RESOURCES
from .plugins.registry import new_framework
from .schedule_one import Scheduler, ScheduleResult

__all__ = ["Explanation", "build_table", "explain", "explain_on", "format_text", "result_to_json", "wire_events"]


def add_workloads(table: NodeTable, workloads: Iterable[Workload]) -> None:
    """Register Services and controllers for PodTopologySpread's default selector."""
    for workload in workloads:
        namespace = workload.metadata.namespace or "default"
        selector = workload.spec.get("selector")
        if workload.kind == "Service":
            if isinstance(selector, dict) and selector:
                table.services.append((namespace, {str(k): str(v) for k, v in selector.items()}))
        elif isinstance(selector, dict):
            key = (workload.api_version, workload.kind, namespace, workload.metadata.name)
            table.controllers[key] = selector


def build_table(cluster: ClusterObjects) -> NodeTable:
    """The scheduler's snapshot of a loaded cluster: nodes with their bound pods."""
    table = NodeTable.build(cluster.nodes, (PodInfo.of(p) for p in cluster.pods), cluster.namespaces)
    add_workloads(table, cluster.workloads)
    table.volumes = VolumeIndex.of(
        cluster.claims,
        cluster.volumes,
        cluster.storage_classes,
        cluster.csi_nodes,
        cluster.csi_drivers,
        cluster.storage_capacities,
    )
    table.pdbs = list(cluster.pdbs)
    table.dra = DraIndex.of(
        cluster.resource_claims, cluster.device_classes, cluster.resource_slices, cluster.resource_claim_templates
    )
    return table


@dataclass
class Explanation:
    result: ScheduleResult | None
    events: list[Event] = field(default_factory=list)
    gated: Status | None = None  # PreEnqueue rejection (scheduling gates): no cycle ran
    pod: PodInfo | None = None
    workload: WorkloadRef | None = None  # the pod's controller, up the owner chain
    devices: dict[str, Any] | None = None  # DRA: the claims and, per node with devices, who got what


def explain(cluster: ClusterObjects, pod: Pod, profile: Profile | None = None, seed: int | None = None) -> Explanation:
    """Run one cycle for `pod` (a what-if: the cluster is not changed)."""
    workload = WorkloadIndex(cluster.workloads).workload_of(pod.metadata)
    return explain_on(build_table(cluster), pod, profile, seed, workload)


def explain_on(
    table: NodeTable,
    pod: Pod,
    profile: Profile | None = None,
    seed: int | None = None,
    workload: WorkloadRef | None = None,
) -> Explanation:
    """`explain` against a table already built (a cycle changes it only temporarily); `workload`
    is the pod's controller, when known."""
    scheduler = Scheduler(new_framework(profile), seed=seed)
    info = PodInfo.of(pod)
    for plugin in scheduler.framework.pre_enqueue_plugins:
        status = plugin.pre_enqueue(info, table)
        if not status.is_success():
            return Explanation(None, [], status.with_plugin(plugin.name), info, workload)
    events: list[Event] = []
    scheduler.subscribe(events.append)
    result = scheduler.schedule_pod(table, info)
    devices = None
    if pod.spec.resource_claims and DYNAMIC_RESOURCES in scheduler.framework.filter_plugin_names:
        devices = device_report(scheduler.framework.plugin(DYNAMIC_RESOURCES), result.state, table)
    return Explanation(result, events, None, info, workload, devices)


def wire_events(explanation: Explanation) -> list[dict[str, Any]]:
    """The cycle's events as the stream carries them (node names resolved)."""
    names = explanation.result.table.names if explanation.result else []
    return [event.to_dict(names) for event in explanation.events]


def _status_json(status: Status | None) -> dict[str, Any] | None:
    if status is None:
        return None
    return {"plugin": status.plugin, "code": status.code.label, "reasons": list(status.reasons)}


def result_to_json(explanation: Explanation) -> dict[str, Any]:
    """The JSON contract of `python -m scheduler_core explain -o json`."""
    result = explanation.result
    pod = explanation.pod
    assert pod is not None
    workload = explanation.workload.to_dict() if explanation.workload else None
    if result is None:
        gated = explanation.gated
        return {
            "pod": pod.key,
            "workload": workload,
            "scheduled": False,
            "selectedNode": None,
            "message": gated.message() if gated else "",
            "preEnqueue": _status_json(gated),
            "preFilter": None,
            "skippedScorePlugins": [],
            "tiedTop": [],
            "nodes": {},
        }
    table = result.table
    names = table.names
    diagnosis = result.diagnosis
    outcome = result.filter
    scored_at = {int(i): k for k, i in enumerate(result.candidates.tolist())} if result.scores else {}
    nodes: dict[str, Any] = {}
    for i, name in enumerate(names):
        recorded = diagnosis.status_of(i) if diagnosis is not None else None
        filters = []
        if outcome is not None:
            for plugin, verdicts in zip(outcome.plugins, outcome.verdicts, strict=True):
                if verdicts is None:
                    filters.append({"plugin": plugin, "code": Code.SKIP.label, "reasons": []})
                else:
                    filters.append(_status_json(verdicts.status_of(i, plugin)))
        scores: dict[str, Any] = {}
        total = None
        if i in scored_at:
            k = scored_at[i]
            for entry in result.scores:
                scores[entry.plugin] = {
                    "raw": int(entry.raw[k]),
                    "normalized": int(entry.normalized[k]),
                    "weight": entry.weight,
                    "weighted": int(entry.normalized[k]) * entry.weight,
                }
            total = int(result.totals[k]) if result.totals is not None else None
        feasible = recorded is None and result.pre_filter_status is None
        nodes[name] = {
            "feasible": feasible,
            "filter": _status_json(recorded),
            "filters": filters,
            "scores": scores,
            "total": total,
            "evaluated": not (result.not_evaluated is not None and result.not_evaluated[i]),
            # False: left out by a PreFilterResult (NodeAffinity's matchFields metadata.name, as
            # DaemonSet pods carry), so no filter verdict of this node counts.
            "inPreFilterResult": not (diagnosis is not None and diagnosis.absent is not None and diagnosis.absent[i]),
        }
    post = result.post_filter_status
    detail = result.post_filter_result.detail if result.post_filter_result else {}
    victims = detail.get("victims", [])
    evaluation = detail.get("preemption")
    return {
        "pod": pod.key,
        "workload": workload,
        "cycle": result.cycle,
        "scheduled": result.scheduled,
        "selectedNode": result.selected_node,
        "message": result.message,
        "code": result.status.code.label,
        "preFilter": _status_json(result.pre_filter_status),
        "postFilter": _status_json(post),
        "nominatedNode": result.nominated_node or None,
        "victims": [v.key for v in victims],
        "preemption": evaluation.wire(names) if evaluation is not None else None,
        "preFilterResult": (
            [names[i] for i in range(len(names)) if not diagnosis.absent[i]]
            if diagnosis is not None and diagnosis.absent is not None
            else None
        ),
        "skippedScorePlugins": list(result.skipped_score_plugins),
        "tiedTop": [names[i] for i in result.tied_top],
        "nodes": nodes,
        "devices": explanation.devices,
    }


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[c]) for row in [header, *rows]) for c in range(len(header))]
    return ["  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row)).rstrip() for row in [header, *rows]]


def _is_daemon(data: dict[str, Any]) -> bool:
    return bool(data.get("workload")) and data["workload"]["kind"] == "DaemonSet"


def _preemption_lines(preemption: dict[str, Any]) -> list[str]:
    """Every candidate with its victims, and why the others were not chosen."""
    candidates = preemption["candidates"]
    lines = [f"Preemption: {len(candidates)} candidate node(s)"]
    for candidate in candidates:
        victims = ", ".join(
            f"{v['pod']} (priority {v['priority']}{', violates a PodDisruptionBudget' if v['pdbViolating'] else ''})"
            for v in candidate["victims"]
        )
        verdict = "CHOSEN" if candidate["chosen"] else f"not chosen: {candidate['eliminatedBy']}"
        lines.append(f"  {candidate['node']}: {verdict}; victims: {victims}")
        if candidate["reprieved"]:
            kept = ", ".join(
                f"{v['pod']}{' (PodDisruptionBudget: tried first)' if v['pdbProtected'] else ''}"
                for v in candidate["reprieved"]
            )
            lines.append(f"    reprieved (the pod fits with them): {kept}")
    for name, status in preemption["statuses"].items():
        lines.append(
            f"  {name}: no candidate: {status['plugin'] or 'DefaultPreemption'}: {', '.join(status['reasons'])}"
        )
    if preemption["notHelpful"]:
        lines.append(f"  not tried (preemption cannot help): {', '.join(preemption['notHelpful'])}")
    if preemption["notEvaluated"]:
        lines.append(
            f"  not dry-run ({preemption['numCandidates']} candidates found first): "
            f"{len(preemption['notEvaluated'])} node(s)"
        )
    if preemption["dropped"]:
        lines.append(f"  dropped (the candidate list was full): {', '.join(preemption['dropped'])}")
    return lines


def format_text(explanation: Explanation) -> str:
    """A readable report: the outcome as kubectl would show it, then node × plugin tables."""
    data = result_to_json(explanation)
    gated = data.get("preEnqueue")
    if gated is not None:
        # a PreEnqueue rejection starts no cycle and records no FailedScheduling event (schedule_one.go)
        return (
            f"Pending  PreEnqueue  {gated['plugin']}: {data['message']}\n"
            "No scheduling attempt is made: the pod waits until an event this plugin registered lets it in.\n"
        )
    event = "Normal   Scheduled       " if data["scheduled"] else "Warning  FailedScheduling"
    lines = [f"{event}  default-scheduler  {data['message']}"]
    if data.get("workload"):
        w = data["workload"]
        lines.append(f"Workload: {w['kind']} {w['namespace']}/{w['name']}")
    if data.get("nominatedNode"):
        lines.append(f"Nominated node: {data['nominatedNode']} (victims: {', '.join(data['victims']) or 'none'})")
    nodes = data["nodes"]
    if not nodes:
        return "\n".join(lines) + "\n"
    first = next(iter(nodes.values()))
    filter_plugins = [f["plugin"] for f in first["filters"]]
    marks = {"Success": "ok", "Skip": "-"}
    rows = []
    for name, node in nodes.items():
        verdict = "SELECTED" if name == data["selectedNode"] else ("feasible" if node["feasible"] else "rejected")
        rows.append([name, verdict, *(marks.get(f["code"], "FAIL") for f in node["filters"])])
    lines += ["", "Filter (ok = passed, FAIL = rejected, - = skipped at PreFilter):"]
    lines += _table(["NODE", "RESULT", *filter_plugins], rows)
    score_plugins = list(dict.fromkeys(p for node in nodes.values() for p in node["scores"]))
    if score_plugins:
        rows = []
        for name, node in nodes.items():
            if node["total"] is None:
                continue
            cells = [f"{node['scores'][p]['normalized']}x{node['scores'][p]['weight']}" for p in score_plugins]
            rows.append([name, *cells, str(node["total"])])
        lines += ["", "Score (normalized x weight):"]
        lines += _table(["NODE", *score_plugins, "TOTAL"], rows)
    rejected = [(name, node["filter"]) for name, node in nodes.items() if node["filter"]]
    kept = data.get("preFilterResult")
    if kept is not None:
        why = " (a DaemonSet pod names its node in matchFields metadata.name)" if _is_daemon(data) else ""
        lines += ["", f"PreFilter kept only: {', '.join(kept) or 'no node'}{why}"]
    if rejected:
        lines += ["", "Rejected (the status upstream records):"]
        for name, status in rejected:
            reasons = ", ".join(status["reasons"])
            if not nodes[name]["inPreFilterResult"]:
                lines.append(f"  {name}: skipped, not kept by PreFilter: {status['code']}: {reasons}")
                continue
            plugin = status["plugin"] or "PreFilter"
            lines.append(f"  {name}: {plugin} {status['code']}: {reasons}")
    if data.get("preemption"):
        lines += ["", *_preemption_lines(data["preemption"])]
    if data.get("devices"):
        lines += ["", *device_text(data["devices"])]
    if data["skippedScorePlugins"]:
        lines += ["", "Skipped at PreScore: " + ", ".join(data["skippedScorePlugins"])]
    return "\n".join(lines) + "\n"
