"""One scheduling cycle: find_nodes_that_fit_pod → prioritize_nodes → select_host (→ PostFilter).

Upstream: pkg/scheduler/schedule_one.go (v1.34). Teaching mode scores every feasible node unless
the profile sets `percentageOfNodesToScore`, in which case upstream's `numFeasibleNodesToFind`
and rotating `nextStartNodeIndex` are applied (sequentially, so the outcome is reproducible).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from .framework.columns import compact
from .framework.cycle_state import CycleState
from .framework.diagnosis import NO_NODES_AVAILABLE, Diagnosis
from .framework.events import (
    CYCLE_FINISHED,
    CYCLE_STARTED,
    FILTER_FINISHED,
    HOST_SELECTED,
    PHASE_STARTED,
    PLUGIN_EVALUATED,
    Deferred,
    EventSink,
    NodeNames,
    PerNode,
)
from .framework.interface import PostFilterResult
from .framework.node_table import NodeTable
from .framework.pod_info import PodInfo
from .framework.runtime import SKIP_SCORE_PLUGINS, FilterOutcome, Framework, PluginScores
from .framework.status import SUCCESS, Code, Status
from .plugins.registry import new_framework

__all__ = ["ScheduleResult", "Scheduler", "num_feasible_nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
_NONE_REJECTED = PerNode(np.empty(0, dtype=object), np.empty(0, dtype=np.int64))  # filter.finished, all feasible


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """`numFeasibleNodesToFind` (schedule_one.go)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class ScheduleResult:
    """Everything one cycle decided and why, for every node."""

    cycle: int
    pod: PodInfo
    table: NodeTable
    status: Status
    selected: int | None = None
    message: str = ""
    pre_filter_status: Status | None = None
    filter: FilterOutcome | None = None
    diagnosis: Diagnosis | None = None
    candidates: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    not_evaluated: np.ndarray | None = None  # bool per node: left out by sampling
    skipped_score_plugins: list[str] = field(default_factory=list)
    scores: list[PluginScores] = field(default_factory=list)
    best_total: int | None = None  # the top total score, when the candidates were scored
    post_filter_status: Status | None = None
    post_filter_result: PostFilterResult | None = None
    # the cycle's state, which Reserve and PreBind read (`Scheduler.bind` drops it)
    state: CycleState | None = field(default=None, repr=False)
    _totals: np.ndarray | None = field(default=None, repr=False)

    @property
    def totals(self) -> np.ndarray | None:
        """Per candidate, the sum of the weighted scores (None: not scored). Summed again when first
        read, so a kept result holds only the score columns it is made of."""
        if self.best_total is None:
            return None
        if self._totals is None:
            self._totals = total_scores(self.scores, len(self.candidates))
        return self._totals

    @property
    def tied_top(self) -> list[int] | np.ndarray:
        """The candidates with the top total (the selected node alone when there was no scoring)."""
        if self.best_total is None:
            return [] if self.selected is None else [self.selected]
        totals = self.totals
        assert totals is not None
        return self.candidates[totals == self.best_total]

    @property
    def scheduled(self) -> bool:
        return self.selected is not None

    @property
    def selected_node(self) -> str | None:
        return None if self.selected is None else self.table.names[self.selected]

    @property
    def nominated_node(self) -> str:
        return self.post_filter_result.nominated_node if self.post_filter_result else ""


class Scheduler:
    """Runs cycles of one profile; holds the seeded tie-breaker and the rotating start index."""

    def __init__(self, framework: Framework | None = None, seed: int | None = None) -> None:
        self.framework = framework or new_framework()
        self.rng = random.Random(seed)
        self.framework.rng = self.rng
        self.next_start_node_index = 0
        self.cycle = 0

    def subscribe(self, sink: EventSink) -> None:
        self.framework.emitter.sinks.append(sink)

    def schedule_pod(self, table: NodeTable, pod: PodInfo) -> ScheduleResult:
        fw = self.framework
        self.cycle += 1
        fw.emitter.cycle = self.cycle
        fw.emitter._seq = 0
        fw.emitter.emit(CYCLE_STARTED, pod=pod.key, priority=pod.priority, nodes=table.n)
        result = self._find_and_prioritize(table, pod)
        fw.emitter.emit(
            CYCLE_FINISHED,
            pod=pod.key,
            scheduled=result.scheduled,
            node=result.selected_node,
            nominatedNode=result.nominated_node or None,
            message=result.message,
            code=result.status.code,
        )
        return result

    def bind(self, table: NodeTable, pod: PodInfo, i: int, state: CycleState | None = None) -> Status:
        """The binding cycle: Reserve, PreBind, then DefaultBinder accounts the pod on node i.

        `state` is the scheduling cycle's (`ScheduleResult.state`): DynamicResources reserves the
        devices its Filter found on node i and PreBind writes the claims' allocation. A Reserve or
        PreBind failure runs every Reserve plugin's Unreserve in reverse order (schedule_one.go
        `handleBindingCycleError`) and the pod is not bound."""
        state = CycleState() if state is None else state
        status = self.reserve_and_pre_bind(table, pod, i, state)
        if not status.is_success():
            return status
        return self._run_binders(table, pod, i, state)

    def reserve_and_pre_bind(self, table: NodeTable, pod: PodInfo, i: int, state: CycleState) -> Status:
        """The binding cycle up to Bind (for a caller that binds the pod itself, as the app does
        through its store): Reserve and PreBind, Unreserve on a failure."""
        fw = self.framework
        emit = fw.emitter.emit
        for point, plugins, method in (
            ("Reserve", fw.reserve_plugins, "reserve"),
            ("PreBind", fw.pre_bind_plugins, "pre_bind"),
        ):
            for plugin in plugins:
                status = getattr(plugin, method)(state, pod, table, i)
                if status.code == Code.SKIP:
                    continue
                emit(
                    PLUGIN_EVALUATED,
                    point=point,
                    plugin=plugin.name,
                    status=status.with_plugin(plugin.name),
                    node=table.names[i],
                )
                if not status.is_success():
                    for reserved in reversed(fw.reserve_plugins):
                        if hasattr(reserved, "unreserve"):
                            reserved.unreserve(state, pod, table, i)
                    return status.with_plugin(plugin.name)
        return SUCCESS

    def _run_binders(self, table: NodeTable, pod: PodInfo, i: int, state: CycleState) -> Status:
        fw = self.framework
        emit = fw.emitter.emit
        emit(PHASE_STARTED, point="Bind")
        status = SUCCESS
        for plugin in fw.bind_plugins:
            status = plugin.bind(state, pod, table, i)
            emit(
                PLUGIN_EVALUATED,
                point="Bind",
                plugin=plugin.name,
                status=status.with_plugin(plugin.name),
                node=table.names[i],
            )
            if status.code != Code.SKIP:
                break
        return status

    # --- the cycle ----------------------------------------------------------------------------

    def _find_and_prioritize(self, table: NodeTable, pod: PodInfo) -> ScheduleResult:
        fw = self.framework
        state = CycleState()
        result = ScheduleResult(self.cycle, pod, table, SUCCESS, state=state)
        if table.n == 0:
            result.status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_NODES_AVAILABLE,))
            result.message = NO_NODES_AVAILABLE
            return result
        diagnosis = Diagnosis(num_nodes=table.n)
        result.diagnosis = diagnosis
        pre_result, status, with_nodes = fw.run_pre_filter_plugins(state, pod, table)
        if not status.is_success():
            if not status.is_rejected():
                result.status = status
                result.message = status.message()
                return result
            result.pre_filter_status = status
            diagnosis.absent_status = status
            diagnosis.pre_filter_msg = status.message()
            if status.plugin:
                diagnosis.unschedulable_plugins.add(status.plugin)
            return self._fail(state, table, pod, result)
        outcome = fw.run_filter_plugins(state, pod, table)
        result.filter = outcome
        diagnosis.plugins = outcome.plugins
        diagnosis.verdicts = outcome.verdicts
        first_fail = outcome.first_fail
        in_scope: np.ndarray | None = None  # None: every node
        if pre_result is not None and pre_result.node_names is not None:
            in_scope = np.zeros(table.n, dtype=bool)
            for name in pre_result.node_names:
                if name in table.index:
                    in_scope[table.index[name]] = True
            diagnosis.absent = ~in_scope
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]",),
            )
            first_fail = np.where(in_scope, first_fail, -1).astype(first_fail.dtype)
            fw.emit_skipped(np.flatnonzero(~in_scope), diagnosis.absent_status.message())
        diagnosis.first_fail = first_fail
        any_failed = bool(len(first_fail)) and int(first_fail.max()) >= 0
        # the plugins that are some node's first rejection, in order (a bincount: np.unique sorts)
        rejecting = np.flatnonzero(np.bincount(first_fail[first_fail >= 0])).tolist() if any_failed else []
        error = _filter_error(outcome, first_fail, rejecting)
        if error is not None:  # an Error ends the cycle (findNodesThatPassFilters)
            result.status = error
            result.message = error.message()
            return result
        for k in rejecting:
            diagnosis.unschedulable_plugins.add(outcome.plugins[k])
        feasible = first_fail < 0
        if in_scope is not None:
            feasible &= in_scope
        if fw.emitter.sinks:
            self._emit_filter_finished(outcome, first_fail, feasible)
        candidates = self._candidates(table, pod, feasible, in_scope, result)
        # kept by the result and the score events in the smallest index dtype; the plugins gather
        # by the int64 indexes (numpy gathers by a narrower index type at twice the cost)
        kept = candidates if candidates is table.every_node else compact(candidates, low=0, high=table.n)
        result.candidates = kept
        if len(candidates) == 0:
            return self._fail(state, table, pod, result)
        if len(candidates) == 1:
            return self._select(result, candidates, None)
        pre_score_status = fw.run_pre_score_plugins(state, pod, table, candidates)
        if not pre_score_status.is_success():
            result.status = pre_score_status
            result.message = pre_score_status.message()
            return result
        result.skipped_score_plugins = [p.name for p in fw.score_plugins if p.name in state.get(SKIP_SCORE_PLUGINS, ())]
        scores, score_status = fw.run_score_plugins(state, pod, table, candidates, kept)
        result.scores = scores
        if not score_status.is_success():
            result.status = score_status
            result.message = score_status.message()
            return result
        return self._select(result, candidates, total_scores(scores, len(candidates)))

    def _emit_filter_finished(self, outcome: FilterOutcome, first_fail: np.ndarray, feasible: np.ndarray) -> None:
        """Per rejected node, the plugin whose status upstream records (the first failing one)."""
        if feasible.all():  # nothing rejected: the shared empty column
            rejected_by = _NONE_REJECTED
        else:
            rejected = np.flatnonzero(first_fail >= 0)
            rejected_by = PerNode(np.asarray(outcome.plugins, dtype=object)[first_fail[rejected]], rejected)
        self.framework.emitter.emit(
            FILTER_FINISHED,
            point="Filter",
            rejectedBy=rejected_by,
            feasible=int(np.count_nonzero(feasible)),
        )

    def _candidates(
        self, table: NodeTable, pod: PodInfo, feasible: np.ndarray, in_scope: np.ndarray | None, result: ScheduleResult
    ) -> np.ndarray:
        """The feasible nodes upstream would score: the nominated node alone if it fits, else
        all (teaching default) or the first `numFeasibleNodesToFind` from the rotating start."""
        nominated = pod.pod.status.nominated_node_name
        if nominated and nominated in table.index and feasible[table.index[nominated]]:
            return np.array([table.index[nominated]], dtype=np.int64)
        percentage = self.framework.profile.percentage_of_nodes_to_score
        if percentage is None:
            in_scope_count = table.n if in_scope is None else int(np.count_nonzero(in_scope))
            self.next_start_node_index = (self.next_start_node_index + in_scope_count) % table.n
            # every node feasible: the table's shared 0..n-1 (read-only), not a new copy per cycle
            return table.every_node if np.count_nonzero(feasible) == table.n else np.flatnonzero(feasible)
        if in_scope is None:
            in_scope = np.ones(table.n, dtype=bool)
        scope = np.flatnonzero(in_scope)
        limit = num_feasible_nodes_to_find(percentage, len(scope))
        start = self.next_start_node_index % len(scope) if len(scope) else 0
        order = np.roll(scope, -start)
        hits = np.flatnonzero(feasible[order])
        if len(hits) > limit:
            # The search is cancelled by the next feasible node: failures before it were recorded
            # (schedule_one.go findNodesThatPassFilters), the extra success is discarded.
            processed = int(hits[limit])
            chosen = order[hits[:limit]]
            evaluated = np.zeros(table.n, dtype=bool)
            evaluated[order[:processed]] = True
            result.not_evaluated = in_scope & ~evaluated
            self.framework.emit_skipped(
                np.flatnonzero(result.not_evaluated), f"not evaluated: numFeasibleNodesToFind ({limit}) reached"
            )
        else:
            processed = len(order)
            chosen = order[hits]
        self.next_start_node_index = (self.next_start_node_index + processed) % table.n
        return np.asarray(chosen, dtype=np.int64)

    def _select(self, result: ScheduleResult, candidates: np.ndarray, totals: np.ndarray | None) -> ScheduleResult:
        """`selectHost`: the top total; ties broken uniformly at random (seeded)."""
        if totals is None:
            chosen = int(candidates[0])
            tied_top: NodeNames | Deferred = NodeNames(np.asarray([chosen]))
        else:
            best = result.best_total = int(totals.max())
            tied = candidates[totals == best]
            chosen = int(tied[self.rng.randrange(len(tied))]) if len(tied) > 1 else int(tied[0])
            # the kept result and event name the tied nodes from its scores when read
            tied_top = Deferred(lambda names: NodeNames(np.asarray(result.tied_top)))
        result.selected = chosen
        pod = result.pod
        node = result.table.names[chosen]
        result.message = f"Successfully assigned {pod.namespace}/{pod.name} to {node}"
        self.framework.emitter.emit(HOST_SELECTED, node=node, total=result.best_total, tiedTop=tied_top)
        return result

    def _fail(self, state: CycleState, table: NodeTable, pod: PodInfo, result: ScheduleResult) -> ScheduleResult:
        """No node fits: run PostFilter (preemption) and build the FailedScheduling message."""
        diagnosis = result.diagnosis
        assert diagnosis is not None
        result.status = Status(Code.UNSCHEDULABLE)
        if self.framework.post_filter_plugins:
            outcome, status = self.framework.run_post_filter_plugins(state, pod, table, diagnosis)
            result.post_filter_status = status
            result.post_filter_result = outcome
            diagnosis.post_filter_msg = status.message()
        result.message = diagnosis.message()
        return result


def total_scores(scores: list[PluginScores], n: int) -> np.ndarray:
    """Per scored node, the sum of every plugin's weighted score (int64)."""
    totals = np.zeros(n, np.int64)
    for entry in scores:
        totals += entry.weighted
    return totals


def _filter_error(outcome: FilterOutcome, first_fail: np.ndarray, rejecting: list[int]) -> Status | None:
    """The Error a filter plugin returned for the first node where it ran, worded as
    `RunFilterPlugins` wraps it: `running "VolumeBinding" filter plugin: <error>`."""
    found: tuple[int, int] | None = None  # (node, plugin)
    for k in rejecting:  # the plugins that are some node's first rejection
        verdicts = outcome.verdicts[k]
        if verdicts is None:
            continue
        errors = verdicts.codes == Code.ERROR
        if not errors.any():
            continue
        errored = np.flatnonzero((first_fail == k) & errors)
        if len(errored) and (found is None or errored[0] < found[0]):
            found = (int(errored[0]), k)
    if found is None:
        return None
    i, k = found
    plugin = outcome.plugins[k]
    inner = outcome.verdicts[k].status_of(i, plugin).message()  # type: ignore[union-attr]
    return Status(Code.ERROR, (f'running "{plugin}" filter plugin: {inner}',), plugin)
