"""PodTopologySpread (plugins/podtopologyspread/{filtering,scoring}.go).

Filter: per DoNotSchedule constraint, skew = pods in the node's domain + self-match − global
minimum (0 when fewer domains than minDomains) must not exceed maxSkew. Score: per ScheduleAnyway
constraint, count·ln(domains + 2) + (maxSkew − 1), rounded, then reversed by NormalizeScore.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...api.loading import InputError
from ...framework.cycle_state import CycleState
from ...framework.interface import MAX_NODE_SCORE
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.runtime import Framework
from ...framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..helper import COMPARISON_OPERATORS_GATE
from ..names import POD_TOPOLOGY_SPREAD
from .common import (
    DO_NOT_SCHEDULE,
    HOSTNAME_KEY,
    SCHEDULE_ANYWAY,
    Constraint,
    count_per_node,
    default_constraints,
    explicit_constraints,
    inclusion_mask,
)

NAME = POD_TOPOLOGY_SPREAD
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


@dataclass
class _FilterState:
    """PreFilter's counts, plus per node the matching pods added to or removed from that node since
    (AddPod / RemovePod). Upstream keeps one state copy per node; a change on node i moves only
    node i's domain, so `delta[k][i]` stands for node i's copy and all nodes' copies fit in one."""

    constraints: list[Constraint]
    domain_counts: list[np.ndarray]  # per constraint: matching pods per value code (eligible nodes only)
    min_match: list[int]
    present: list[np.ndarray]  # per constraint: value codes that are domains (bool per code)
    has_all: np.ndarray  # nodes carrying every constraint's topology key
    delta: list[np.ndarray] | None = None  # per constraint, per node

    def clone(self) -> _FilterState:
        return replace(self, delta=None if self.delta is None else [d.copy() for d in self.delta])

    def node_minimum(self, k: int, c: Constraint, codes: np.ndarray) -> np.ndarray | int:
        """The global minimum each node's copy of the state sees (scalar while nothing changed)."""
        if self.delta is None or int(self.present[k].sum()) < c.min_domains:
            return self.min_match[k]
        counts, present = self.domain_counts[k], self.present[k]
        domains = np.flatnonzero(present)
        if not len(domains):
            return 0
        first = int(domains[np.argmin(counts[domains])])
        rest = domains[domains != first]
        others = np.where(
            codes == first, int(counts[rest].min()) if len(rest) else np.iinfo(np.int64).max, counts[first]
        )
        own = present[codes] & (codes >= 0)
        return np.where(own, np.minimum(others, counts[np.maximum(codes, 0)] + self.delta[k]), counts[first])


@dataclass
class _ScoreState:
    constraints: list[Constraint]
    ignored: np.ndarray  # bool per scored node
    weights: list[float]
    domain_counts: list[np.ndarray | None]  # None for hostname (counted per node)
    codes: list[np.ndarray]


def _global_min(c: Constraint, counts: np.ndarray, present: np.ndarray) -> int:
    """The global minimum of matching pods over the domains; 0 when fewer domains than minDomains."""
    if int(present.sum()) < c.min_domains or not present.any():
        return 0
    return int(counts[present].min())


class PodTopologySpread:
    name = NAME
    per_node_extensions = True  # AddPod/RemovePod on node i change only node i's verdict

    def __init__(
        self,
        system_defaulted: bool,
        defaults: list[tuple[str, int, str]] | None,
        comparison_operators: bool = False,
    ) -> None:
        self.system_defaulted = system_defaulted
        self.defaults = defaults
        self.comparison_operators = comparison_operators  # TaintTolerationComparisonOperators (nodeTaintsPolicy)

    def _constraints(self, pod: PodInfo, table: NodeTable, action: str) -> list[Constraint]:
        if pod.pod.spec.topology_spread_constraints:
            return explicit_constraints(pod, action)
        return default_constraints(pod, table, self.defaults, action)

    # --- Filter -------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        constraints = self._constraints(pod, table, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        has_all = np.ones(table.n, dtype=bool)
        for c in constraints:
            has_all &= table.key_mask(c.topology_key)
        domain_counts: list[np.ndarray] = []
        min_match: list[int] = []
        domains_present: list[np.ndarray] = []
        for c in constraints:
            eligible = has_all & inclusion_mask(pod, table, c, self.comparison_operators)
            key, per_node = c.topology_key, count_per_node(pod, table, c)
            if eligible.all() and table.label_column(key).grouping is not None:
                # every node counts, and every value of the key is some node's: all are domains
                counts = table.domain_counts(key, per_node)
                present = np.ones(len(counts), dtype=bool)
            else:
                counts = table.domain_counts(key, per_node, eligible)
                present = table.domain_counts(key, eligible.view(np.uint8)) > 0
            domain_counts.append(counts)
            domains_present.append(present)
            min_match.append(_global_min(c, counts, present))
        state[PRE_FILTER_STATE_KEY] = _FilterState(constraints, domain_counts, min_match, domains_present, has_all)
        return None, SUCCESS

    # --- PreFilterExtensions (filtering.go AddPod / RemovePod → preFilterState.updateWithPod) --

    def add_pod(self, state: CycleState, pod: PodInfo, added: PodInfo, table: NodeTable, i: int) -> None:
        self._update(state, pod, added, table, i, +1)

    def remove_pod(self, state: CycleState, pod: PodInfo, removed: PodInfo, table: NodeTable, i: int) -> None:
        self._update(state, pod, removed, table, i, -1)

    def _update(self, state: CycleState, pod: PodInfo, other: PodInfo, table: NodeTable, i: int, delta: int) -> None:
        """Upstream checks the namespace and that node i carries every constraint's key, then
        counts `other` in node i's domain for each constraint whose selector matches it (no
        inclusion-policy or terminating check there). Recorded as node i's delta (see _FilterState)."""
        s: _FilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None or other.namespace != pod.namespace or not s.has_all[i]:
            return
        for k, c in enumerate(s.constraints):
            if c.selector.matches(other.labels):
                if s.delta is None:
                    s.delta = [np.zeros(table.n, dtype=np.int64) for _ in s.constraints]
                s.delta[k][i] += delta

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        s: _FilterState = state[PRE_FILTER_STATE_KEY]
        n = table.n
        decided = np.zeros(n, dtype=bool)
        missing = np.zeros(n, dtype=bool)
        skewed = np.zeros(n, dtype=bool)
        for k, (c, counts) in enumerate(zip(s.constraints, s.domain_counts, strict=True)):
            column = table.label_column(c.topology_key)
            codes = column.codes
            lacks = ~column.present & ~decided
            missing |= lacks
            decided |= lacks
            self_match = 1 if c.selector.matches(pod.labels) else 0
            if s.delta is None:  # every node sees the same counts: decide per domain, then per node
                over = column.lookup(counts + self_match - s.min_match[k] > c.max_skew, False)
            else:
                match_num = column.spread(counts)
                match_num = match_num + np.where(codes >= 0, s.delta[k], 0)
                over = match_num + self_match - s.node_minimum(k, c, codes) > c.max_skew
            too_skewed = over & ~decided
            skewed |= too_skewed
            decided |= too_skewed
        codes_out = np.zeros(n, dtype=np.int8)
        codes_out[missing] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        codes_out[skewed] = Code.UNSCHEDULABLE
        reasons = []
        if missing.any():
            reasons.append((ERR_REASON_NODE_LABEL_NOT_MATCH, missing))
        if skewed.any():
            reasons.append((ERR_REASON_CONSTRAINTS_NOT_MATCH, skewed))
        return NodeVerdicts(codes_out, reasons)

    # --- Score --------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        if table.n == 0:
            return SKIP
        constraints = self._constraints(pod, table, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        require_all = bool(pod.pod.spec.topology_spread_constraints) or not self.system_defaulted
        has_all = np.ones(table.n, dtype=bool)
        for c in constraints:
            has_all &= table.key_mask(c.topology_key)
        ignored = ~has_all[idx] if require_all else np.zeros(len(idx), dtype=bool)
        scored = idx[~ignored]
        weights: list[float] = []
        domain_counts: list[np.ndarray | None] = []
        codes_list: list[np.ndarray] = []
        for c in constraints:
            column = table.label_column(c.topology_key)
            # Upstream keys counts by `node.Labels[key]`, which is "" for a node without the key: such
            # nodes share the domain of the value "" (a synthetic code V when no node carries key="").
            empty = column.vocab.get("", len(column.values))
            codes = np.where(column.codes >= 0, column.codes, empty)
            codes_list.append(codes)
            if c.topology_key == HOSTNAME_KEY:
                weights.append(math.log(len(scored) + 2))
                domain_counts.append(None)
                continue
            in_scope = codes[scored] if not require_all else column.codes[scored]
            domains = np.zeros(len(column.values) + 1, dtype=bool)
            domains[in_scope] = True
            weights.append(math.log(int(domains.sum()) + 2))
            counted = inclusion_mask(pod, table, c, self.comparison_operators)
            if require_all:
                counted &= has_all
            counted &= domains[codes]
            per_node = count_per_node(pod, table, c)
            counts = np.bincount(codes[counted], weights=per_node[counted], minlength=len(column.values) + 1)
            domain_counts.append(counts.astype(np.int64))
        state[PRE_SCORE_STATE_KEY] = _ScoreState(constraints, ignored, weights, domain_counts, codes_list)
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        s: _ScoreState = state[PRE_SCORE_STATE_KEY]
        total = np.zeros(len(idx), dtype=np.float64)
        for c, weight, counts, codes in zip(s.constraints, s.weights, s.domain_counts, s.codes, strict=True):
            has_key = table.key_mask(c.topology_key)[idx]
            if counts is None:
                count = count_per_node(pod, table, c)[idx]
            else:
                count = counts[codes[idx]]
            total += np.where(has_key, count.astype(np.float64) * weight + float(c.max_skew - 1), 0.0)
        rounded = np.sign(total) * np.floor(np.abs(total) + 0.5)
        return np.where(s.ignored, 0, rounded).astype(np.int64)

    def normalize_score(
        self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        s: _ScoreState = state[PRE_SCORE_STATE_KEY]
        live = ~s.ignored
        if not live.any():
            return np.zeros(len(scores), dtype=np.int64)
        max_score = max(int(scores[live].max()), 0)
        min_score = int(scores[live].min())
        if max_score == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        else:
            out = MAX_NODE_SCORE * (max_score + min_score - scores) // max_score
        return np.where(live, out, 0)


def new(args: dict[str, Any], handle: Framework) -> PodTopologySpread:
    defaulting = args.get("defaultingType", "System") or "System"
    if defaulting not in ("System", "List"):
        raise InputError(
            f'profile: PodTopologySpread args.defaultingType: Unsupported value: "{defaulting}": '
            'supported values: "System", "List"'
        )
    defaults: list[tuple[str, int, str]] | None = None
    if defaulting == "List":
        defaults = []
        for k, raw in enumerate(args.get("defaultConstraints") or []):
            try:
                defaults.append((raw["topologyKey"], int(raw["maxSkew"]), raw["whenUnsatisfiable"]))
            except (KeyError, TypeError, ValueError):
                raise InputError(
                    f"profile: PodTopologySpread args.defaultConstraints[{k}]: invalid constraint"
                ) from None
    comparison = handle.version.gates.enabled(COMPARISON_OPERATORS_GATE)
    return PodTopologySpread(defaulting == "System", defaults, comparison)
