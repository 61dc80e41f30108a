"""DefaultPreemption (plugins/defaultpreemption/default_preemption.go, framework/preemption/preemption.go).

Candidates are the nodes whose recorded status is exactly Unschedulable (`nodesWherePreemptionMightHelp`).
On each, `SelectVictimsOnNode` (see `dry_run`) finds the victims, PodDisruptionBudgets and nominated
pods included; the node is then picked by `pickOneNodeForPreemption`'s criteria in order. Teaching
mode dry-runs every potential node (upstream stops after `max(10%, 100)` candidates from a random
offset, so which nodes it sees is not reproducible); every candidate and the criterion that
eliminated it are reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ...api.loading import InputError
from ...framework.cycle_state import CycleState
from ...framework.diagnosis import Diagnosis, fit_error_message
from ...framework.events import PREEMPTION_EVALUATED, Deferred
from ...framework.interface import PostFilterResult
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.status import SUCCESS, Code, Status
from ..names import DEFAULT_PREEMPTION
from .dry_run import ERR_NO_VICTIMS, NodeVictims, more_important_first, select_victims, start_time
from .pdb import Budgets

if TYPE_CHECKING:
    from ...framework.runtime import Framework

__all__ = [
    "CRITERIA",
    "ERR_NOT_HELPFUL",
    "ERR_NO_VICTIMS",
    "DefaultPreemption",
    "more_important_first",
    "pick_one_node",
    "start_time",
]

NAME = DEFAULT_PREEMPTION
ERR_NOT_HELPFUL = "Preemption is not helpful for scheduling"
ERR_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
PREFIX = "preemption: "
INT32_SHIFT = 2**31  # math.MaxInt32 + 1: makes every priority non-negative in the sum criterion


def _earliest_top_start(found: NodeVictims) -> float:
    """`GetEarliestPodStartTime`: the earliest start among the highest-priority victims."""
    top = max(v.priority for v in found.victims)
    return min(start_time(v) for v in found.victims if v.priority == top)


# pickOneNodeForPreemption (preemption.go), in order; each scores a candidate, higher is better.
CRITERIA: tuple[tuple[str, Callable[[NodeVictims], float]], ...] = (
    ("fewest PDB violations", lambda c: -c.num_pdb_violations),
    ("lowest highest-priority victim", lambda c: -c.victims[0].priority),
    ("smallest sum of victim priorities", lambda c: -sum(v.priority + INT32_SHIFT for v in c.victims)),
    ("fewest victims", lambda c: -len(c.victims)),
    ("latest start of the highest-priority victims", _earliest_top_start),
)
WIRE_KEYS = (
    "candidates",
    "statuses",
    "notHelpful",
    "notEvaluated",
    "dropped",
    "offset",
    "numCandidates",
    "nominatedNode",
    "victims",
)
TIE = "tie after every criterion: the first candidate wins"


def pick_one_node(candidates: list[NodeVictims]) -> tuple[NodeVictims, dict[int, str]]:
    """The chosen candidate, and for every other one the criterion that eliminated it.

    Upstream takes the first of the remaining nodes in Go map order (random); here the first in
    node order, so explanations are reproducible.
    """
    eliminated: dict[int, str] = {}
    remaining = candidates
    for name, criterion in CRITERIA:
        if len(remaining) == 1:
            break
        scored = [(criterion(c), c) for c in remaining]
        best = max(score for score, _ in scored)
        for score, c in scored:
            if score != best:
                eliminated[c.node] = name
        remaining = [c for score, c in scored if score == best]
    for c in remaining[1:]:
        eliminated[c.node] = TIE
    return remaining[0], eliminated


@dataclass
class Evaluation:
    """What the dry run found, for the explanation and the `preemption.evaluated` event."""

    candidates: list[NodeVictims]
    eliminated: dict[int, str]
    chosen: NodeVictims | None
    statuses: dict[int, Status]  # potential nodes the dry run rejected
    not_helpful: list[int]  # nodes whose status was not Unschedulable: never tried
    not_evaluated: list[int] = field(default_factory=list)  # enough candidates were found first
    dropped: list[int] = field(default_factory=list)  # candidates past a full candidate list
    offset: int = 0
    wanted: int = 0
    _wire: dict[str, Any] | None = field(default=None, repr=False)

    def wire(self, names: list[str]) -> dict[str, Any]:
        """The `preemption.evaluated` payload (also `explain`'s `preemption`), built once."""
        if self._wire is None:
            self._wire = self._build(names)
        return self._wire

    def _build(self, names: list[str]) -> dict[str, Any]:
        def victim(v: PodInfo, found: NodeVictims) -> dict[str, Any]:
            return {"pod": v.key, "priority": v.priority, "pdbViolating": v.key in found.violating}

        return {
            "candidates": [
                {
                    "node": names[c.node],
                    "victims": [victim(v, c) for v in c.victims],
                    "reprieved": [
                        {"pod": v.key, "priority": v.priority, "pdbProtected": v.key in c.protected}
                        for v in c.reprieved
                    ],
                    "pdbViolations": c.num_pdb_violations,
                    "chosen": self.chosen is not None and c.node == self.chosen.node,
                    "eliminatedBy": self.eliminated.get(c.node),
                }
                for c in self.candidates
            ],
            "statuses": {names[i]: s.to_dict() for i, s in sorted(self.statuses.items())},
            "notHelpful": [names[i] for i in self.not_helpful],
            "notEvaluated": [names[i] for i in self.not_evaluated],
            "dropped": [names[i] for i in self.dropped],
            "offset": self.offset,
            "numCandidates": self.wanted,
            "nominatedNode": names[self.chosen.node] if self.chosen else None,
            "victims": [v.key for v in self.chosen.victims] if self.chosen else [],
        }


def _terminating_by_preemption(pod: PodInfo) -> bool:
    if pod.pod.metadata.deletion_timestamp is None:
        return False
    for condition in pod.pod.status.conditions:
        if condition.type == "DisruptionTarget":
            return condition.status == "True" and condition.reason == "PreemptionByScheduler"
    return False


class DefaultPreemption:
    name = NAME

    def __init__(
        self, handle: Framework, min_candidate_nodes_percentage: int = 10, min_candidate_nodes_absolute: int = 100
    ):
        self.handle = handle
        self.min_candidate_nodes_percentage = min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = min_candidate_nodes_absolute

    def post_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        ineligible = self._not_eligible(pod, table, diagnosis)
        if ineligible:
            return None, Status(Code.UNSCHEDULABLE, (PREFIX + ineligible,))
        codes = diagnosis.codes()
        potential = np.flatnonzero(codes == Code.UNSCHEDULABLE).tolist()
        evaluation = self._dry_run(state, pod, table, potential)
        evaluation.not_helpful = np.flatnonzero(codes != Code.UNSCHEDULABLE).tolist()
        self.handle.emitter.emit(
            PREEMPTION_EVALUATED,
            **{key: Deferred(lambda names, key=key: evaluation.wire(names)[key]) for key in WIRE_KEYS},
        )
        chosen, statuses = evaluation.chosen, evaluation.statuses
        if chosen is None:
            errors = [s.message() for s in statuses.values() if s.code == Code.ERROR]
            if errors:  # Preempt: `err != nil && len(candidates) == 0` → the aggregated error
                message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
                return None, Status(Code.ERROR, (PREFIX + message,))
            counts: Counter[str] = Counter()
            for status in statuses.values():
                counts.update(status.reasons)
            counts[ERR_NOT_HELPFUL] += table.n - len(statuses)
            message = fit_error_message(table.n, counts.items())
            outcome = PostFilterResult("", {"preemption": evaluation})
            return outcome, Status(Code.UNSCHEDULABLE, (PREFIX + message,))
        outcome = PostFilterResult(table.names[chosen.node], {"victims": chosen.victims, "preemption": evaluation})
        return outcome, SUCCESS

    def num_candidates(self, num_nodes: int) -> int:
        """`calculateNumCandidates`: max(percentage of the nodes, the absolute minimum), at most all."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def _dry_run(self, state: CycleState, pod: PodInfo, table: NodeTable, potential: list[int]) -> Evaluation:
        """`DryRunPreemption` from a random offset, stopping once `num_candidates` are found with at
        least one that violates no budget. Upstream checks nodes in parallel; here in offset order,
        in lockstep chunks, cut exactly where a sequential search would stop."""
        evaluation = Evaluation([], {}, None, {}, [])
        if not potential:
            return evaluation
        offset = self.handle.rng.randrange(len(potential))
        wanted = self.num_candidates(len(potential))
        order = potential[offset:] + potential[:offset]
        budgets = Budgets.of(table.pdbs)
        non_violating: list[NodeVictims] = []
        violating: list[NodeVictims] = []
        pos = 0
        done = False
        while pos < len(order) and not done:
            chunk = order[pos : pos + max(wanted - len(non_violating) - len(violating), 16)]
            found, failed = select_victims(self.handle, state, pod, table, chunk, budgets)
            for k, i in enumerate(chunk):
                result = found.get(i)
                if result is None:
                    evaluation.statuses[i] = failed[i]
                elif not result.victims:  # DryRunPreemption: a success without victims is an error
                    message = f'expected at least one victim pod on node "{table.names[i]}"'
                    evaluation.statuses[i] = Status(Code.ERROR, (message,))
                else:
                    # candidateList.add: each list holds at most `wanted`; later ones are dropped.
                    kept = violating if result.num_pdb_violations else non_violating
                    if len(kept) < wanted:
                        kept.append(result)
                    else:
                        evaluation.dropped.append(i)
                    if non_violating and len(non_violating) + len(violating) >= wanted:
                        evaluation.not_evaluated = chunk[k + 1 :] + order[pos + len(chunk) :]
                        done = True
                        break
            pos += len(chunk)
        evaluation.candidates = non_violating + violating
        evaluation.offset, evaluation.wanted = offset, wanted
        if evaluation.candidates:
            evaluation.chosen, evaluation.eliminated = pick_one_node(evaluation.candidates)
        return evaluation

    def _not_eligible(self, pod: PodInfo, table: NodeTable, diagnosis: Diagnosis) -> str:
        """`PodEligibleToPreemptOthers`."""
        if pod.pod.spec.preemption_policy == "Never":
            return ERR_POLICY_NEVER
        nominated = pod.pod.status.nominated_node_name
        if nominated and nominated in table.index:
            i = table.index[nominated]
            status = diagnosis.status_of(i)
            if status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return ""
            for other in table.pods[i]:
                if other.priority < pod.priority and _terminating_by_preemption(other):
                    return ERR_TERMINATING_ON_NOMINATED
        return ""


def _arg(args: dict[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"profile: DefaultPreemption args.{key}: must be an integer")
    return value


def new(args: dict[str, Any], handle: Framework) -> DefaultPreemption:
    """`ValidateDefaultPreemptionArgs` (apis/config/validation/validation_pluginargs.go)."""
    percentage = _arg(args, "minCandidateNodesPercentage", 10)
    absolute = _arg(args, "minCandidateNodesAbsolute", 100)
    if not 0 <= percentage <= 100:
        raise InputError(
            f"profile: DefaultPreemption args.minCandidateNodesPercentage: Invalid value: {percentage}: "
            "not in valid range [0, 100]"
        )
    if absolute < 0:
        raise InputError(
            f"profile: DefaultPreemption args.minCandidateNodesAbsolute: Invalid value: {absolute}: "
            "not in valid range [0, inf)"
        )
    if percentage == 0 and absolute == 0:
        raise InputError(
            "profile: DefaultPreemption args: Invalid value: both minCandidateNodesPercentage and "
            "minCandidateNodesAbsolute cannot be zero"
        )
    return DefaultPreemption(handle, percentage, absolute)
