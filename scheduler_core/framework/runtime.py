"""The framework runtime: calls every plugin of each extension point, in order, and is the one
place where the per-plugin events are emitted.

Upstream: pkg/scheduler/framework/runtime/framework.go (`RunPreFilterPlugins`, `RunFilterPlugins`,
`RunPostFilterPlugins`, `RunPreScorePlugins`, `RunScorePlugins`). Teaching mode: every filter
plugin runs on every node; `first_fail` marks the plugin upstream (which stops at the first
failure) records for each node.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api.loading import InputError
from .columns import compact, is_constant, scaled
from .cycle_state import CycleState
from .diagnosis import Diagnosis
from .events import (
    NODE_SKIPPED,
    PHASE_STARTED,
    PLUGIN_EVALUATED,
    SCORES_NORMALIZED,
    EventEmitter,
    PerNode,
)
from .interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    FilterPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from .node_table import NodeTable
from .pod_info import PodInfo
from .profile import Profile
from .status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status

__all__ = ["SKIP_FILTER_PLUGINS", "SKIP_SCORE_PLUGINS", "FilterOutcome", "Framework", "PluginFactory", "PluginScores"]

PluginFactory = Callable[[dict[str, Any], "Framework"], Any]
SKIP_FILTER_PLUGINS = "SkipFilterPlugins"
SKIP_SCORE_PLUGINS = "SkipScorePlugins"

_POINT_METHODS = {
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "queueSort": "less",
    "preEnqueue": "pre_enqueue",
    "reserve": "reserve",
    "preBind": "pre_bind",
    "bind": "bind",
}


@dataclass
class FilterOutcome:
    """Every filter plugin's verdicts (None: skipped) and the plugin upstream records per node."""

    plugins: list[str]
    verdicts: list[NodeVerdicts | None]
    first_fail: np.ndarray

    def feasible(self) -> np.ndarray:
        return self.first_fail < 0


@dataclass
class PluginScores:
    """One score plugin's numbers over the scored nodes `idx`, each column kept in the smallest
    integer dtype holding it (`columns.compact`)."""

    plugin: str
    weight: int
    raw: np.ndarray
    normalized: np.ndarray

    weighted: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        # weight 1 (most plugins): the normalized column itself; nothing writes to either
        self.weighted = self.normalized if self.weight == 1 else compact(scaled(self.normalized, self.weight))


class Framework:
    """A profile's plugins instantiated and ordered per extension point."""

    def __init__(self, profile: Profile, registry: dict[str, PluginFactory]) -> None:
        self.profile = profile
        self.version = profile.version  # plugins read their gates here (version.gates, version.has)
        self.emitter = EventEmitter()
        # The cycle's random source (the Scheduler hands its seeded one over): tie-breaks and
        # preemption's random offset (`GetOffsetAndNumCandidates`).
        self.rng = random.Random(0)
        implements: dict[str, set[str]] = {}
        self._instances: dict[str, Any] = {}
        names = [ref.name for ref in profile.multi_point.enabled]
        for plugin_set in profile.points.values():
            names.extend(ref.name for ref in plugin_set.enabled)
        for name in names:
            if name in self._instances:
                continue
            factory = registry.get(name)
            if factory is None:
                raise InputError(f'profile: plugin "{name}" is not registered')
            instance = factory(profile.plugin_args.get(name, {}), self)
            self._instances[name] = instance
            implements[name] = {point for point, method in _POINT_METHODS.items() if hasattr(instance, method)}
        self.pre_filter_plugins: list[PreFilterPlugin] = self._point("preFilter", implements)
        self.filter_plugins: list[FilterPlugin] = self._point("filter", implements)
        self.post_filter_plugins: list[PostFilterPlugin] = self._point("postFilter", implements)
        self.pre_score_plugins: list[PreScorePlugin] = self._point("preScore", implements)
        self.score_plugins: list[ScorePlugin] = self._point("score", implements)
        self.weights = {p.name: profile.weight_of(p.name) for p in self.score_plugins}
        self._normalizes = {p.name for p in self.score_plugins if hasattr(p, "normalize_score")}
        self.queue_sort = self._point("queueSort", implements)
        self.pre_enqueue_plugins = self._point("preEnqueue", implements)
        self.reserve_plugins = self._point("reserve", implements)
        self.pre_bind_plugins = self._point("preBind", implements)
        self.bind_plugins = self._point("bind", implements)

    def _point(self, point: str, implements: dict[str, set[str]]) -> list[Any]:
        return [self._instances[ref.name] for ref in self.profile.plugins_for(point, implements)]

    def plugin(self, name: str) -> Any:
        return self._instances.get(name)

    @property
    def filter_plugin_names(self) -> list[str]:
        return [p.name for p in self.filter_plugins]

    # --- PreFilter ----------------------------------------------------------------------------

    def run_pre_filter_plugins(
        self, state: CycleState, pod: PodInfo, table: NodeTable, quiet: bool = False
    ) -> tuple[PreFilterResult | None, Status, list[str]]:
        """Returns the merged PreFilterResult, the status, and the plugins that narrowed the nodes."""
        emit = self.emitter.emit if not quiet else _no_emit
        emit(PHASE_STARTED, point="PreFilter")
        skip: set[str] = set()
        state[SKIP_FILTER_PLUGINS] = skip
        result: PreFilterResult | None = None
        returned = SUCCESS
        with_nodes: list[str] = []
        for plugin in self.pre_filter_plugins:
            narrowed, status = plugin.pre_filter(state, pod, table)
            status = status.with_plugin(plugin.name) if not status.is_success() else status
            emit(
                PLUGIN_EVALUATED,
                point="PreFilter",
                plugin=plugin.name,
                status=status,
                nodes=sorted(narrowed.node_names) if narrowed and narrowed.node_names is not None else None,
            )
            if status.is_skip():
                skip.add(plugin.name)
                continue
            if not status.is_success():
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status, with_nodes
                if status.code == Code.UNSCHEDULABLE:
                    returned = status
                    continue
                return None, _error(f'running PreFilter plugin "{plugin.name}": {status.message()}'), with_nodes
            if narrowed is not None and narrowed.node_names is not None:
                with_nodes.append(plugin.name)
            result = narrowed if result is None else result.merge(narrowed)
            if result is not None and result.node_names is not None and not result.node_names:
                if len(with_nodes) == 1:
                    message = f"node(s) didn't satisfy plugin {with_nodes[0]}"
                else:
                    message = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}] simultaneously"
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,)), with_nodes
        return result, returned, with_nodes

    # --- Filter -------------------------------------------------------------------------------

    def run_filter_plugins(
        self, state: CycleState, pod: PodInfo, table: NodeTable, quiet: bool = False
    ) -> FilterOutcome:
        """Every filter plugin on every node; `first_fail` is what upstream records."""
        emit = self.emitter.emit if not quiet else _no_emit
        emit(PHASE_STARTED, point="Filter")
        first_fail, verdicts = self.filter_columns(state, pod, table)
        for plugin, result in zip(self.filter_plugins, verdicts, strict=True):
            if result is None:
                emit(PLUGIN_EVALUATED, point="Filter", plugin=plugin.name, status=SKIP.with_plugin(plugin.name))
        if table.nominated:
            first_fail = first_fail.copy()  # changed in place below
            self._with_nominated_pods(state, pod, table, verdicts, first_fail)
        for plugin, result in zip(self.filter_plugins, verdicts, strict=True):
            if result is not None and result.detail:
                emit(PLUGIN_EVALUATED, point="Filter", plugin=plugin.name, verdicts=result, detail=result.detail)
            elif result is not None:
                emit(PLUGIN_EVALUATED, point="Filter", plugin=plugin.name, verdicts=result)
        return FilterOutcome(self.filter_plugin_names, verdicts, first_fail)

    def filter_columns(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[np.ndarray, list[NodeVerdicts | None]]:
        """Every filter plugin (None where skipped at PreFilter) on every node, and per node the
        index of the first plugin that rejects it (-1: none). Quiet; no nominated pods."""
        skip: set[str] = state.get(SKIP_FILTER_PLUGINS, set())
        # a kept column: int8 holds the plugin indexes of any real profile; while no node is
        # rejected, the shared read-only column of -1
        dtype = np.int8 if len(self.filter_plugins) < 128 else np.int16
        first_fail = _no_failures(table.n, dtype)
        verdicts: list[NodeVerdicts | None] = []
        for k, plugin in enumerate(self.filter_plugins):
            if plugin.name in skip:
                verdicts.append(None)
                continue
            result = plugin.filter(state, pod, table)
            if not result.passes_all:
                failed = result.codes != 0
                if failed.any():
                    if not first_fail.flags.writeable:
                        first_fail = first_fail.copy()
                    first_fail[failed & (first_fail < 0)] = k
            verdicts.append(result)
        return first_fail, verdicts

    def status_at(self, first_fail: np.ndarray, verdicts: list[NodeVerdicts | None], i: int) -> Status:
        """Upstream `RunFilterPlugins`' answer for node i: the first rejecting plugin's status."""
        k = int(first_fail[i])
        if k < 0:
            return SUCCESS
        result = verdicts[k]
        assert result is not None
        return result.status_of(i, self.filter_plugins[k].name)

    # --- PreFilterExtensions (AddPod / RemovePod) ----------------------------------------------

    def pre_filter_extensions(self, state: CycleState) -> list[PreFilterExtensions]:
        """The PreFilter plugins that ran (not skipped) and keep pod counts in their state, so adding
        or removing a pod must update it (upstream: a non-nil `PreFilterExtensions()`)."""
        skip: set[str] = state.get(SKIP_FILTER_PLUGINS, set())
        return [p for p in self.pre_filter_plugins if hasattr(p, "add_pod") and p.name not in skip]

    def pre_filter_extensions_active(self, state: CycleState) -> bool:
        return bool(self.pre_filter_extensions(state))

    def extensions_per_node(self, state: CycleState) -> bool:
        """Whether every active plugin with PreFilterExtensions keeps per-node changes apart
        (`per_node_extensions`): then AddPod/RemovePod on several nodes of one state leave each
        node's verdict as its own copy of the state would give it, and nodes can be checked together."""
        return all(getattr(p, "per_node_extensions", False) for p in self.pre_filter_extensions(state))

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, added: PodInfo, table: NodeTable, i: int
    ) -> None:
        """`RunPreFilterExtensionAddPod`: `added` now runs on node i."""
        for plugin in self.pre_filter_extensions(state):
            plugin.add_pod(state, pod, added, table, i)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, removed: PodInfo, table: NodeTable, i: int
    ) -> None:
        """`RunPreFilterExtensionRemovePod`: `removed` no longer runs on node i."""
        for plugin in self.pre_filter_extensions(state):
            plugin.remove_pod(state, pod, removed, table, i)

    def _with_nominated_pods(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        verdicts: list[NodeVerdicts | None],
        first_fail: np.ndarray,
    ) -> None:
        """`RunFilterPluginsWithNominatedPods`: on a node with nominated pods of equal or higher
        priority, the pod must also fit with those pods added (`addGENominatedPods`: on a clone of
        the cycle state, through AddPod; PreFilter is not re-run); if it does not, that verdict counts.

        When the active PreFilter extensions keep per-node changes apart, every such node is checked
        in one pass."""
        extras = {
            i: extra
            for i, nominated in table.nominated.items()
            if (extra := [p for p in nominated if p.priority >= pod.priority and p.key != pod.key])
        }
        if not extras:
            return
        batches = [list(extras)] if self.extensions_per_node(state) else [[i] for i in extras]
        for batch in batches:
            cloned = state.clone()
            added = [(other, i) for i in batch for other in extras[i]]
            for other, i in added:
                table.add_pod(other, i)
                self.run_pre_filter_extension_add_pod(cloned, pod, other, table, i)
            try:
                theirs_first, theirs = self.filter_columns(cloned, pod, table)
            finally:
                for other, i in added:
                    table.remove_pod(other, i)
            for i in batch:
                if theirs_first[i] < 0:
                    continue
                first_fail[i] = -1
                for k, (mine, other_verdicts) in enumerate(zip(verdicts, theirs, strict=True)):
                    if mine is None or other_verdicts is None:
                        continue
                    verdicts[k] = mine = _replace_node(mine, other_verdicts, i)
                    if mine.codes[i] != 0 and first_fail[i] < 0:
                        first_fail[i] = k

    # --- PostFilter ---------------------------------------------------------------------------

    def run_post_filter_plugins(
        self, state: CycleState, pod: PodInfo, table: NodeTable, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        self.emitter.emit(PHASE_STARTED, point="PostFilter")
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        for plugin in self.post_filter_plugins:
            outcome, status = plugin.post_filter(state, pod, table, diagnosis)
            status = status.with_plugin(plugin.name)
            self.emitter.emit(
                PLUGIN_EVALUATED,
                point="PostFilter",
                plugin=plugin.name,
                status=status,
                nominatedNode=outcome.nominated_node if outcome else None,
            )
            if status.is_success() or status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return outcome, status
            if status.code != Code.UNSCHEDULABLE:
                return None, Status(Code.ERROR, status.reasons, plugin.name)
            if outcome is not None:
                result = outcome
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    # --- PreScore / Score ---------------------------------------------------------------------

    def run_pre_score_plugins(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        self.emitter.emit(PHASE_STARTED, point="PreScore")
        skip: set[str] = set()
        state[SKIP_SCORE_PLUGINS] = skip
        for plugin in self.pre_score_plugins:
            status = plugin.pre_score(state, pod, table, idx)
            self.emitter.emit(
                PLUGIN_EVALUATED, point="PreScore", plugin=plugin.name, status=status.with_plugin(plugin.name)
            )
            if status.is_skip():
                skip.add(plugin.name)
            elif not status.is_success():
                return _error(f'running PreScore plugin "{plugin.name}": {status.message()}')
        return SUCCESS

    def run_score_plugins(
        self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray, kept_idx: np.ndarray | None = None
    ) -> tuple[list[PluginScores], Status]:
        """Score and NormalizeScore on the nodes `idx`; the events name them by `kept_idx` (the
        same indexes as the result keeps them, default `idx`)."""
        shown = idx if kept_idx is None else kept_idx
        emit = self.emitter.emit
        emit(PHASE_STARTED, point="Score")
        skip: set[str] = state.get(SKIP_SCORE_PLUGINS, set())
        scored: list[tuple[ScorePlugin, np.ndarray]] = []
        for plugin in self.score_plugins:
            if plugin.name in skip:
                continue
            raw = compact(_integers(plugin.score(state, pod, table, idx)))
            scored.append((plugin, raw))
            emit(PLUGIN_EVALUATED, point="Score", plugin=plugin.name, raw=PerNode(raw, shown))
        emit(PHASE_STARTED, point="NormalizeScore")
        results: list[PluginScores] = []
        for plugin, raw in scored:
            if plugin.name in self._normalizes:
                # the plugin may rewrite an int64 copy of the raw scores in place (a constant
                # column, read-only, is handed over as it is: nothing to rewrite node by node)
                widened = raw if is_constant(raw) else raw.astype(np.int64)
                normalized = _integers(plugin.normalize_score(state, pod, table, idx, widened))
            else:
                normalized = raw
            weight = self.weights[plugin.name]
            if _out_of_range(normalized):
                bad = (normalized > MAX_NODE_SCORE) | (normalized < MIN_NODE_SCORE)
                value = int(normalized[np.argmax(bad)])
                return results, _error(
                    f'plugin "{plugin.name}" returns an invalid score {value}, '
                    f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                )
            entry = PluginScores(plugin.name, weight, raw, compact(normalized, low=0, high=MAX_NODE_SCORE))
            results.append(entry)
            emit(
                SCORES_NORMALIZED,
                point="NormalizeScore",
                plugin=plugin.name,
                normalized=PerNode(normalized, shown),
                weight=weight,
                weighted=PerNode(entry.weighted, shown),
            )
        return results, SUCCESS

    def emit_skipped(self, names_idx: np.ndarray, reason: str) -> None:
        if len(names_idx):
            self.emitter.emit(
                NODE_SKIPPED, point="Filter", nodes=PerNode(np.ones(len(names_idx), bool), names_idx), reason=reason
            )


def _replace_node(target: NodeVerdicts, source: NodeVerdicts, i: int) -> NodeVerdicts:
    """A copy of `target` whose node i carries `source`'s code and reasons."""
    codes = target.codes.copy()
    codes[i] = source.codes[i]
    reasons = [(reason, mask.copy()) for reason, mask in target.reasons]
    for _, mask in reasons:
        mask[i] = False
    known = {reason: mask for reason, mask in reasons}
    for reason, mask in source.reasons:
        if mask[i]:
            if reason not in known:
                known[reason] = np.zeros(len(codes), dtype=bool)
                reasons.append((reason, known[reason]))
            known[reason][i] = True
    return NodeVerdicts(codes, reasons, target.detail)


@functools.lru_cache(maxsize=64)
def _no_failures(n: int, dtype: type[np.integer]) -> np.ndarray:
    """`first_fail` where no node is rejected: -1 everywhere, read-only and shared."""
    column = np.full(n, -1, dtype=dtype)
    column.flags.writeable = False
    return column


def _integers(values: np.ndarray) -> np.ndarray:
    """A plugin's scores as integers: its own integer column as is, anything else as int64."""
    column = np.asarray(values)
    return column if column.dtype.kind in "iu" and column.dtype != np.uint64 else column.astype(np.int64)


def _out_of_range(scores: np.ndarray) -> bool:
    """Whether a normalized score lies outside [MIN_NODE_SCORE, MAX_NODE_SCORE], in one pass: with
    MIN_NODE_SCORE 0, a negative integer read as unsigned is above MAX_NODE_SCORE."""
    assert MIN_NODE_SCORE == 0
    if not len(scores):
        return False
    if is_constant(scores):
        return not MIN_NODE_SCORE <= int(scores[0]) <= MAX_NODE_SCORE
    unsigned = scores.view(scores.dtype.str.replace("i", "u")) if scores.dtype.kind == "i" else scores
    return int(unsigned.max()) > MAX_NODE_SCORE


def _error(message: str) -> Status:
    return Status(Code.ERROR, (message,))


def _no_emit(type_: str, **data: Any) -> None:
    return None
