"""`drain`: cordon nodes and evict their pods as `kubectl drain` would; where does everything go?

kubectl cordons every named node first, then drains them one by one (drain.go `RunDrain`): the
pods its filters allow are evicted through the eviction API, which the PodDisruptionBudgets may
refuse (evictions.py). Each evicted pod's controller makes a replacement, which the scheduler
places by priority (with preemption carried out, as the cluster would); pods that declare no
controller (deleted with --force) and finished pods are gone for good. kubectl retries a refused
eviction every 5 s, and a replacement that was scheduled counts as healthy again, so a budget may
allow it later: rounds of evictions continue on a node while any succeeds, and what is still refused
then is reported (kubectl would wait for it until --timeout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..api.workloads import WorkloadIndex, controller_ref
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.profile import Profile
from .allocation import allocation, changed_nodes, per_node
from .evictions import Budgets, DrainOptions, deletions_on
from .nodes import NodeChoice, cordon, selected_nodes
from .replay import Placement, Progress, Replay

__all__ = ["DrainReport", "drain", "replacement_of"]


@dataclass
class Refusal:
    pod: str
    node: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"pod": self.pod, "node": self.node, "message": self.message}


@dataclass
class DrainReport:
    nodes: list[str]
    options: DrainOptions
    not_drained: dict[str, str] = field(default_factory=dict)  # node → kubectl's error
    warnings: dict[str, str] = field(default_factory=dict)  # node → kubectl's warning
    placements: list[Placement] = field(default_factory=list)  # the evicted pods' replacements
    deleted: list[Refusal] = field(default_factory=list)  # gone without a replacement (why)
    refused: list[Refusal] = field(default_factory=list)  # evictions the budgets still refuse
    preempted: list[dict[str, str]] = field(default_factory=list)
    rounds: int = 0
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    changed: dict[str, Any] = field(default_factory=dict)

    @property
    def evicted(self) -> int:
        return len(self.placements) + len(self.deleted)

    @property
    def pending(self) -> list[Placement]:
        return [p for p in self.placements if not p.scheduled]

    def to_json(self) -> dict[str, Any]:
        return {
            "query": "drain",
            "nodes": self.nodes,
            "options": {
                "ignoreDaemonsets": self.options.ignore_daemonsets,
                "force": self.options.force,
                "deleteEmptydirData": self.options.delete_emptydir_data,
            },
            "notDrained": self.not_drained,
            "warnings": self.warnings,
            "evicted": self.evicted,
            "rescheduled": sum(1 for p in self.placements if p.scheduled),
            "pending": len(self.pending),
            "placements": [p.to_json() for p in self.placements],
            "deleted": [d.to_json() for d in self.deleted],
            "refused": [r.to_json() for r in self.refused],
            "preempted": self.preempted,
            "rounds": self.rounds,
            "allocation": {"before": self.before, "after": self.after},
            "changedNodes": self.changed,
        }


def replacement_of(info: PodInfo) -> PodInfo | None:
    """The pod a deleted pod's controller creates in its place (None: nothing recreates it): the
    same template, not yet scheduled (a StatefulSet keeps the name; others get a new one, shown
    here as the old one's)."""
    pod = info.pod
    if info.terminating or pod.status.phase in ("Succeeded", "Failed"):
        return None
    controller = controller_ref(pod.metadata)
    if controller is None or controller.kind == "DaemonSet":
        return None
    spec = pod.spec.model_copy(update={"node_name": None})
    status = pod.status.model_copy(update={"phase": "Pending", "nominated_node_name": None, "conditions": []})
    return info.as_pod(pod.model_copy(update={"spec": spec, "status": status}))


def _gone_reason(info: PodInfo) -> str:
    if info.terminating:
        return "already terminating"
    if info.pod.status.phase in ("Succeeded", "Failed"):
        return f"finished ({info.pod.status.phase})"
    return "no controller recreates it"


def drain(
    table: NodeTable,
    choice: NodeChoice,
    workloads: WorkloadIndex,
    options: DrainOptions | None = None,
    profile: Profile | None = None,
    *,
    seed: int = 0,
    progress: Progress | None = None,
) -> DrainReport:
    """Drain the chosen nodes of `table` (which keeps the outcome: pass a copy the caller owns)."""
    options = options or DrainOptions()
    chosen = selected_nodes(table, choice)
    names = [table.names[i] for i in chosen]
    report = DrainReport(names, options)
    report.before = {"cluster": allocation(table), "drained": allocation(table, chosen)}
    names_before, figures_before = list(table.names), per_node(table)
    for i in chosen:
        cordon(table, i)
    budgets = Budgets(table)
    replay = Replay(table, profile, seed, preempt=True, replacement=replacement_of, progress=progress)
    for name in names:
        i = table.index[name]  # positions do not move: nothing is added or removed
        deletions = deletions_on(table, i, options, workloads)
        if deletions.warning:
            report.warnings[name] = deletions.warning
        if deletions.error:
            report.not_drained[name] = deletions.error
            continue
        waiting = list(deletions.delete)
        refusals: dict[str, str] = {}
        while waiting:
            report.rounds += 1
            evicted, still = [], []
            for info in waiting:
                refusal = budgets.refusal(info)
                if refusal is not None:
                    refusals[info.key] = refusal
                    still.append(info)
                    continue
                refusals.pop(info.key, None)
                table.remove_pod(info, i)
                evicted.append(info)
            if not evicted:
                break
            replacements = []
            for info in evicted:
                made = replacement_of(info)
                if made is None:
                    report.deleted.append(Refusal(info.key, name, _gone_reason(info)))
                else:
                    replacements.append(made)
            report.placements.extend(replay.run(replacements, {p.key: name for p in replacements}))
            waiting = still
        report.refused.extend(Refusal(info.key, name, refusals[info.key]) for info in waiting)
    report.preempted = [{"pod": v.key, "node": node, "by": by} for v, node, by in replay.victims]
    report.after = {"cluster": allocation(table), "drained": allocation(table, [table.index[n] for n in names])}
    report.changed = changed_nodes(table, figures_before, names_before)
    return report
