"""The preemption dry run: `SelectVictimsOnNode` for every potential node, without re-running the world.

Upstream (defaultpreemption/default_preemption.go `SelectVictimsOnNode`, framework/preemption
`DryRunPreemption`): on a copy of the node, remove every pod of lower priority (RemovePod on the
PreFilter state through `PreFilterExtensions`), check the pod fits
(`RunFilterPluginsWithNominatedPods`), then reprieve the PDB-violating victims and then the others,
most important first, each kept only if the pod still fits.

PreFilter is never re-run: the cycle's state is reused and updated through AddPod/RemovePod.
A Filter verdict on node i depends only on node i's own pods and, for PodTopologySpread and
InterPodAffinity, on their state, which records each node's changes apart (`per_node_extensions`).
So every potential node's dry run advances in lockstep: the victims are held as columns, each
reprieve step adds one pod per node on all nodes at once and runs one columnar Filter pass, with
the same outcome as upstream's per-node runs. A plugin with extensions that cannot keep nodes
apart makes each node run on its own clone of the state instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ...framework.cycle_state import CycleState
from ...framework.node_table import NodeTable, PodColumns
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
    return _parse_time(raw) if raw else math.inf


@lru_cache(maxsize=1 << 16)
def _parse_time(raw: str) -> float:
    """An RFC 3339 time as seconds since the epoch (inf if unreadable); each string parsed once."""
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
    reprieved: list[PodInfo] = field(default_factory=list)  # lower-priority pods that may stay
    protected: set[str] = field(default_factory=set)  # keys of reprieved pods a PDB covers (tried first)

    @property
    def num_pdb_violations(self) -> int:
        return len(self.violating)


class _Run:
    """One dry run over a batch of nodes that share `state` (see the module docstring).

    The potential victims (and the nominated pods) are held as columns, so each step adds or
    removes one pod per node on every node of the batch in one pass over the table's columns.
    """

    def __init__(
        self,
        handle: Framework,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        nodes: list[int],
        potential: dict[int, list[PodInfo]],
        nominated: dict[int, list[PodInfo]],
        incremental: bool,
    ) -> None:
        self.handle = handle
        self.state = state
        self.pod = pod
        self.table = table
        self.nodes = nodes
        self.incremental = incremental  # plugins keep pod counts: tell them about every change
        self.extensions = handle.pre_filter_extensions(state) if incremental else []
        self.victims = PodColumns.of([(victim, i) for i in nodes for victim in potential[i]])
        self.column_of = {id(victim): k for k, victim in enumerate(self.victims.pods)}
        self.nominated = PodColumns.of([(other, i) for i in nodes for other in nominated.get(i, ())])
        self.with_nominated = {int(i) for i in self.nominated.nodes.tolist()}

    def shift(self, state: CycleState, columns: PodColumns, which: np.ndarray, sign: int) -> None:
        """Add (+1) or remove (-1) the selected pods, on the table and through AddPod / RemovePod."""
        self.table.shift(columns, which, sign)
        for plugin in self.extensions:
            extension = plugin.add_pod if sign > 0 else plugin.remove_pod
            for k, i in zip(which.tolist(), columns.nodes[which].tolist(), strict=True):
                extension(state, self.pod, columns.pods[k], self.table, i)

    def fits(self, nodes: list[int], statuses: bool = True) -> dict[int, Status | None]:
        """`RunFilterPluginsWithNominatedPods` for each of `nodes`: first with the nominated pods
        of equal or higher priority added, then (if that passed) without them. Returns the
        nodes where the pod does not fit, with their status (None unless `statuses`)."""
        handle = self.handle
        failed: dict[int, Status | None] = {}
        with_nominated = [i for i in nodes if i in self.with_nominated]
        if with_nominated:
            state = self.state.clone() if self.incremental else self.state
            which = np.flatnonzero(np.isin(self.nominated.nodes, with_nominated))
            self.shift(state, self.nominated, which, +1)
            try:
                first_fail, verdicts = handle.filter_columns(state, self.pod, self.table)
            finally:
                self.table.shift(self.nominated, which, -1)
            for i in with_nominated:
                if first_fail[i] >= 0:
                    failed[i] = handle.status_at(first_fail, verdicts, i) if statuses else None
        first_fail, verdicts = handle.filter_columns(self.state, self.pod, self.table)
        where = np.asarray(nodes, dtype=np.int64)
        for i in where[first_fail[where] >= 0].tolist():
            if i not in failed:
                failed[i] = handle.status_at(first_fail, verdicts, i) if statuses else None
        return failed

    def select(self, budgets: Budgets) -> tuple[dict[int, NodeVictims], dict[int, Status]]:
        """`SelectVictimsOnNode` for every node of the batch, one reprieve step at a time."""
        victims = self.victims
        originals = {i: list(self.table.pods[i]) for i in self.nodes}
        out = np.ones(len(victims.pods), dtype=bool)  # removed from their node right now
        self.shift(self.state, victims, np.arange(len(victims.pods)), -1)
        results: dict[int, NodeVictims] = {}
        try:
            statuses: dict[int, Status] = {i: s for i, s in self.fits(self.nodes).items() if s is not None}
            by_node: dict[int, list[PodInfo]] = {}
            for victim, i in zip(victims.pods, victims.nodes.tolist(), strict=True):
                by_node.setdefault(i, []).append(victim)
            order: dict[int, list[PodInfo]] = {}
            violating: dict[int, int] = {}
            for i in self.nodes:
                if i in statuses:
                    continue
                bad, good = split_by_pdb_violation(more_important_first(by_node[i]), budgets)
                order[i] = bad + good
                violating[i] = len(bad)
                results[i] = NodeVictims(i)
            step = 0
            while True:
                batch = [i for i in order if len(order[i]) > step]
                if not batch:
                    break
                which = np.array([self.column_of[id(order[i][step])] for i in batch], dtype=np.int64)
                self.shift(self.state, victims, which, +1)
                out[which] = False
                rejected = set(self.fits(batch, statuses=False))
                if rejected:
                    again = np.array([self.column_of[id(order[i][step])] for i in rejected], dtype=np.int64)
                    self.shift(self.state, victims, again, -1)
                    out[again] = True
                for i in batch:
                    tried, found = order[i][step], results[i]
                    kept = i not in rejected
                    (found.reprieved if kept else found.victims).append(tried)
                    if step < violating[i]:
                        (found.protected if kept else found.violating).add(tried.key)
                step += 1
            for i, found in results.items():
                if violating[i] and violating[i] < len(order[i]):
                    # Violating victims were tried first: sort back to most important first.
                    found.victims = more_important_first(found.victims)
        finally:
            self.table.shift(victims, np.flatnonzero(out), +1)
            for i, pods in originals.items():
                self.table.pods[i][:] = pods
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
    incremental = handle.pre_filter_extensions_active(state)
    if incremental and not handle.extensions_per_node(state):
        for i in with_victims:  # a plugin whose state cannot hold several nodes' changes apart
            run = _Run(handle, state.clone(), pod, table, [i], potential, nominated, incremental=True)
            found, failed = run.select(budgets)
            results.update(found)
            statuses.update(failed)
    elif with_victims:
        run = _Run(
            handle, state.clone() if incremental else state, pod, table, with_victims, potential, nominated, incremental
        )
        found, failed = run.select(budgets)
        results.update(found)
        statuses.update(failed)
    return results, statuses
