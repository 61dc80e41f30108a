"""DefaultPreemption (plugins/defaultpreemption/default_preemption.go, framework/preemption/preemption.go).

Candidates are the nodes whose recorded status is exactly Unschedulable. On each, every pod of
strictly lower priority is removed; if the pod then fits, victims are reprieved most important
first (priority, then earlier start) while it still fits. The node is picked by upstream's
criteria: lowest highest-priority victim, smallest priority sum, fewest victims, latest start.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ...framework.cycle_state import CycleState
from ...framework.diagnosis import Diagnosis, fit_error_message
from ...framework.events import PREEMPTION_EVALUATED
from ...framework.interface import PostFilterResult
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.status import Code, Status
from ..names import DEFAULT_PREEMPTION

if TYPE_CHECKING:
    from ...framework.runtime import Framework

NAME = DEFAULT_PREEMPTION
ERR_NOT_HELPFUL = "Preemption is not helpful for scheduling"
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
ERR_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
PREFIX = "preemption: "


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


def _terminating_by_preemption(pod: PodInfo) -> bool:
    if pod.pod.metadata.deletion_timestamp is None:
        return False
    for condition in pod.pod.status.conditions:
        if condition.type == "DisruptionTarget":
            return condition.status == "True" and condition.reason == "PreemptionByScheduler"
    return False


class DefaultPreemption:
    name = NAME

    def __init__(self, handle: Framework) -> None:
        self.handle = handle

    def post_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        ineligible = self._not_eligible(pod, table, diagnosis)
        if ineligible:
            return None, Status(Code.UNSCHEDULABLE, (PREFIX + ineligible,))
        codes = diagnosis.codes()
        potential = np.flatnonzero(codes == Code.UNSCHEDULABLE).tolist()
        statuses: dict[int, Status] = {}
        candidates: list[tuple[int, list[PodInfo]]] = []
        for i in potential:
            victims, status = self.select_victims_on_node(pod, table, i)
            if status.is_success():
                candidates.append((i, victims))
            else:
                statuses[i] = status
        chosen = self._pick_one_node(candidates) if candidates else None
        self.handle.emitter.emit(
            PREEMPTION_EVALUATED,
            candidates={table.names[i]: [v.key for v in victims] for i, victims in candidates},
            statuses={table.names[i]: s.to_dict() for i, s in statuses.items()},
            notHelpful=[table.names[i] for i in np.flatnonzero(codes != Code.UNSCHEDULABLE).tolist()],
            nominatedNode=table.names[chosen[0]] if chosen else None,
            victims=[v.key for v in chosen[1]] if chosen else [],
            priorities={v.key: v.priority for _, victims in candidates for v in victims},
        )
        if chosen is None:
            counts: Counter[str] = Counter()
            for status in statuses.values():
                counts.update(status.reasons)
            counts[ERR_NOT_HELPFUL] += table.n - len(statuses)
            message = fit_error_message(table.n, counts.items())
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, (PREFIX + message,))
        i, victims = chosen
        return PostFilterResult(table.names[i], {"victims": victims}), Status()

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

    def _fits(self, pod: PodInfo, table: NodeTable, i: int) -> Status:
        state = CycleState()
        status = self.handle.run_pre_filter_plugins(state, pod, table, quiet=True)[1]
        if not status.is_success():
            return status
        return self.handle.run_filter_plugins_on_node(state, pod, table, i)

    def select_victims_on_node(self, pod: PodInfo, table: NodeTable, i: int) -> tuple[list[PodInfo], Status]:
        """`SelectVictimsOnNode` (without PodDisruptionBudgets, which clusterviz does not model)."""
        original = list(table.pods[i])
        potential = [p for p in original if p.priority < pod.priority]
        if not potential:
            return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VICTIMS,))
        for victim in potential:
            table.remove_pod(victim, i)
        victims: list[PodInfo] = []
        try:
            status = self._fits(pod, table, i)
            if not status.is_success():
                for victim in potential:
                    table.add_pod(victim, i)
                return [], status
            for candidate in more_important_first(potential):
                table.add_pod(candidate, i)
                if not self._fits(pod, table, i).is_success():
                    table.remove_pod(candidate, i)
                    victims.append(candidate)
            for victim in victims:
                table.add_pod(victim, i)
        finally:
            table.pods[i][:] = original
        return victims, Status()

    @staticmethod
    def _pick_one_node(candidates: list[tuple[int, list[PodInfo]]]) -> tuple[int, list[PodInfo]]:
        """`pickOneNodeForPreemption`: apply the criteria in order, keeping the best; first wins ties."""

        def earliest_top_start(victims: list[PodInfo]) -> float:
            top = victims[0].priority
            return min(start_time(v) for v in victims if v.priority == top)

        criteria = (
            lambda victims: -victims[0].priority,
            lambda victims: -sum(v.priority + 2**31 for v in victims),
            lambda victims: -len(victims),
            earliest_top_start,
        )
        remaining = candidates
        for criterion in criteria:
            scored = [(criterion(victims), (i, victims)) for i, victims in remaining]
            best = max(score for score, _ in scored)
            remaining = [entry for score, entry in scored if score == best]
            if len(remaining) == 1:
                break
        return remaining[0]


def new(args: dict[str, Any], handle: Framework) -> DefaultPreemption:
    return DefaultPreemption(handle)
