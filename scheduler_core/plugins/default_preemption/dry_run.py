"""The preemption dry run: `SelectVictimsOnNode` for every potential node, without re-running the world.

Upstream (defaultpreemption/default_preemption.go `SelectVictimsOnNode`, framework/preemption
`DryRunPreemption`): on a copy of the node, remove every pod of lower priority (RemovePod on the
PreFilter state through `PreFilterExtensions`), check the pod fits
(`RunFilterPluginsWithNominatedPods`), then reprieve the PDB-violating victims and then the others,
most important first, each kept only if the pod still fits.

PreFilter is never re-run: the cycle's state is reused and updated incrementally. When no plugin
that ran keeps pod counts in its state (no active `add_pod`/`remove_pod`), a Filter verdict on a
node depends only on that node's own pods, so every potential node's dry run advances in lockstep:
one columnar Filter pass per reprieve step serves all nodes at once, with the same outcome as
upstream's per-node runs. Otherwise (PodTopologySpread / InterPodAffinity active) each node runs
on its own clone of the state, with AddPod/RemovePod keeping the counts exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ...framework.cycle_state import CycleState
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.status import Code, Status
from .pdb import Budgets, split_by_pdb_violation

if TYPE_CHECKING:
    from ...framework.runtime import Framework

__all__ = ["ERR_NO_VICTIMS", "NodeVictims", "more_important_first", "select_victims", "start_time"]

ERR_NO_VICTIMS = "No preemption victims found for incoming pod"


def start_time(pod: PodInfo) -> float:
    """`GetPodStartTime` as seconds; a pod that has not started counts as starting now (latest)."""
    raw = pod.pod.status.start_time
    if not raw:
        return math.inf
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return math.inf


def more_important_first(pods: list[PodInfo]) -> list[PodInfo]:
    """`MoreImportantPod` order: higher priority, then earlier start."""
    return sorted(pods, key=lambda p: (-p.priority, start_time(p)))


@dataclass
class NodeVictims:
    """A node's victims, most important first, and which of them violate a budget."""

    node: int
    victims: list[PodInfo] = field(default_factory=list)
    violating: set[str] = field(default_factory=set)  # keys of victims that violate a PDB

    @property
    def num_pdb_violations(self) -> int:
        return len(self.violating)


class _Run:
    """One dry run over a batch of nodes that share `state` (see the module docstring)."""

    def __init__(self, handle: Framework, state: CycleState, pod: PodInfo, table: NodeTable, incremental: bool):
        self.handle = handle
        self.state = state
        self.pod = pod
        self.table = table
        self.incremental = incremental  # plugins keep pod counts: tell them about every change

    def add(self, state: CycleState, other: PodInfo, i: int) -> None:
        self.table.add_pod(other, i)
        if self.incremental:
            self.handle.run_pre_filter_extension_add_pod(state, self.pod, other, self.table, i)

    def remove(self, state: CycleState, other: PodInfo, i: int) -> None:
        self.table.remove_pod(other, i)
        if self.incremental:
            self.handle.run_pre_filter_extension_remove_pod(state, self.pod, other, self.table, i)

    def fits(self, nodes: list[int], nominated: dict[int, list[PodInfo]]) -> dict[int, Status]:
        """`RunFilterPluginsWithNominatedPods` for each of `nodes`: first with the nominated pods
        of equal or higher priority added, then (if that passed) without them."""
        handle = self.handle
        with_nominated = [i for i in nodes if nominated.get(i)]
        out: dict[int, Status] = {}
        if with_nominated:
            state = self.state.clone() if self.incremental else self.state
            for i in with_nominated:
                for other in nominated[i]:
                    self.add(state, other, i)
            try:
                first_fail, verdicts = handle.filter_columns(state, self.pod, self.table)
            finally:
                for i in with_nominated:
                    for other in nominated[i]:
                        self.table.remove_pod(other, i)
            for i in with_nominated:
                out[i] = handle.status_at(first_fail, verdicts, i)
        second = [i for i in nodes if i not in out or out[i].is_success()]
        if second:
            first_fail, verdicts = handle.filter_columns(self.state, self.pod, self.table)
            for i in second:
                out[i] = handle.status_at(first_fail, verdicts, i)
        return out

    def select(
        self,
        nodes: list[int],
        potential: dict[int, list[PodInfo]],
        budgets: Budgets,
        nominated: dict[int, list[PodInfo]],
    ) -> tuple[dict[int, NodeVictims], dict[int, Status]]:
        """`SelectVictimsOnNode` for every node of the batch, one reprieve step at a time."""
        originals = {i: list(self.table.pods[i]) for i in nodes}
        for i in nodes:
            for victim in potential[i]:
                self.remove(self.state, victim, i)
        results: dict[int, NodeVictims] = {}
        statuses: dict[int, Status] = {}
        order: dict[int, list[PodInfo]] = {}
        violating: dict[int, int] = {}
        try:
            for i, status in self.fits(nodes, nominated).items():
                if not status.is_success():
                    statuses[i] = status
                    continue
                bad, good = split_by_pdb_violation(more_important_first(potential[i]), budgets)
                order[i] = bad + good
                violating[i] = len(bad)
                results[i] = NodeVictims(i)
            step = 0
            while True:
                batch = [i for i in order if len(order[i]) > step]
                if not batch:
                    break
                for i in batch:
                    self.add(self.state, order[i][step], i)
                for i, status in self.fits(batch, nominated).items():
                    if status.is_success():
                        continue
                    victim = order[i][step]
                    self.remove(self.state, victim, i)
                    results[i].victims.append(victim)
                    if step < violating[i]:
                        results[i].violating.add(victim.key)
                step += 1
            for i, found in results.items():
                if violating[i] and violating[i] < len(order[i]):
                    # Violating victims were tried first: sort back to most important first.
                    found.victims = more_important_first(found.victims)
        finally:
            for i in nodes:
                present = {id(p) for p in self.table.pods[i]}
                for other in originals[i]:
                    if id(other) not in present:
                        self.table.add_pod(other, i)
                self.table.pods[i][:] = originals[i]
        return results, statuses


def select_victims(
    handle: Framework, state: CycleState, pod: PodInfo, table: NodeTable, nodes: list[int], budgets: Budgets
) -> tuple[dict[int, NodeVictims], dict[int, Status]]:
    """Victims per node where the pod fits after preemption, and the status of every other node.

    The table is left as it was found. `state` is the scheduling cycle's state after PreFilter.
    """
    nominated = {
        i: [p for p in table.nominated.get(i, ()) if p.priority >= pod.priority and p.key != pod.key] for i in nodes
    }
    potential = {i: [p for p in table.pods[i] if p.priority < pod.priority] for i in nodes}
    statuses = {i: Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VICTIMS,)) for i in nodes if not potential[i]}
    with_victims = [i for i in nodes if potential[i]]
    results: dict[int, NodeVictims] = {}
    if handle.pre_filter_extensions_active(state):
        for i in with_victims:
            run = _Run(handle, state.clone(), pod, table, incremental=True)
            found, failed = run.select([i], potential, budgets, nominated)
            results.update(found)
            statuses.update(failed)
    elif with_victims:
        run = _Run(handle, state, pod, table, incremental=False)
        found, failed = run.select(with_victims, potential, budgets, nominated)
        results.update(found)
        statuses.update(failed)
    return results, statuses
