"""InterPodAffinity (plugins/interpodaffinity/{filtering,scoring}.go).

Counts are per topology domain (label key, value). Existing pods are grouped by namespace and
labels (for selector matches) and by their own terms (for symmetry), so each distinct term is
matched once per cycle and the per-node counts are summed as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...api.loading import InputError
from ...framework.columns import constant
from ...framework.cycle_state import CycleState
from ...framework.interface import MAX_NODE_SCORE
from ...framework.node_table import PLUGIN_CACHE_LIMIT, AffinityGroup, LabelColumn, NodeTable, PodGroup
from ...framework.pod_info import AffinityTerm, PodInfo
from ...framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from ..names import INTER_POD_AFFINITY

NAME = INTER_POD_AFFINITY
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"


@dataclass
class _FilterState:
    """PreFilter's counts per topology value, plus per node the changes AddPod / RemovePod made on
    that node (upstream keeps one state copy per node; a change on node i moves only the values of
    node i's own labels, so `*_delta[...][i]` stands for node i's copy)."""

    affinity_terms: list[AffinityTerm]
    anti_affinity_terms: list[AffinityTerm]
    affinity_counts: list[np.ndarray]  # per term: matching pods per value code of its key
    anti_affinity_counts: list[np.ndarray]
    existing_anti: dict[str, np.ndarray] = field(default_factory=dict)  # key → pods per value code
    affinity_delta: list[np.ndarray] | None = None  # per term, per node
    anti_delta: list[np.ndarray] | None = None
    existing_delta: dict[str, np.ndarray] = field(default_factory=dict)  # key → per node

    def clone(self) -> _FilterState:
        return replace(
            self,
            affinity_delta=None if self.affinity_delta is None else [d.copy() for d in self.affinity_delta],
            anti_delta=None if self.anti_delta is None else [d.copy() for d in self.anti_delta],
            existing_delta={key: d.copy() for key, d in self.existing_delta.items()},
        )

    @property
    def affinity_empty(self) -> bool:
        return not any(c.any() for c in self.affinity_counts)


def _at_node(counts: np.ndarray | None, delta: np.ndarray | None, column: LabelColumn) -> np.ndarray:
    """Per node, the count of its own topology value as its copy of the state sees it (0 without the key)."""
    if counts is not None and len(counts):
        seen = counts if column.identity else column.spread(counts)
    else:
        seen = np.zeros(len(column.codes), dtype=np.int64)
    if delta is not None:
        seen = seen + delta
    return seen


def _counted_at_node(counts: np.ndarray | None, delta: np.ndarray | None, column: LabelColumn) -> np.ndarray:
    """Nodes carrying the key whose own topology value counts some pod (as `_at_node` sees it);
    decided per value, then looked up per node, while no AddPod/RemovePod changed the counts."""
    if delta is None:
        return column.lookup(counts > 0, False) if counts is not None else np.zeros(len(column.codes), dtype=bool)
    return column.present & (_at_node(counts, delta, column) > 0)


def _domain_counts(table: NodeTable, key: str, per_node: np.ndarray) -> np.ndarray:
    return table.domain_counts(key, per_node)


def _matching_pods(table: NodeTable, terms: list[AffinityTerm]) -> np.ndarray:
    """Per node, the existing pods that match every term (incoming terms: namespaces resolved)."""
    return table.count_pods(
        lambda g: all(t.matches(g, None) for t in terms),  # type: ignore[arg-type]
        key=(NAME, tuple(terms)),
        candidates=lambda: _candidate_groups(table, terms[0]),
    )


def _candidate_groups(table: NodeTable, term: AffinityTerm) -> list[PodGroup]:
    """The groups `term` can match: through the label index in each of its namespaces, when they are
    named (resolved terms carry no namespaceSelector, or one that matches nothing); else all."""
    if not term.namespace_selector.nothing:
        return table.group_list
    found: list[PodGroup] = []
    for namespace in term.namespaces:
        found.extend(table.candidate_groups(term.selector, namespace))
    return found


class InterPodAffinity:
    name = NAME
    per_node_extensions = True  # AddPod/RemovePod on node i change only node i's verdict

    def __init__(self, hard_pod_affinity_weight: int, ignore_preferred_of_existing: bool) -> None:
        self.hard_weight = hard_pod_affinity_weight
        self.ignore_preferred_of_existing = ignore_preferred_of_existing

    # --- Filter -------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        namespaces = table.namespace_labels
        incoming_ns_labels = namespaces.get(pod.namespace)
        existing_anti: dict[str, np.ndarray] = {}
        for group in table.affinity_groups.values():
            for term in group.pod.required_anti_affinity:
                if term.matches(pod, incoming_ns_labels):
                    per_node = existing_anti.get(term.topology_key)
                    existing_anti[term.topology_key] = group.counts if per_node is None else per_node + group.counts
        existing = {
            key: counts
            for key, per_node in existing_anti.items()
            if (counts := _domain_counts(table, key, per_node)).any()
        }
        affinity = [t.merge_namespaces(namespaces) for t in pod.required_affinity]
        anti = [t.merge_namespaces(namespaces) for t in pod.required_anti_affinity]
        if not existing and not affinity and not anti:
            return None, SKIP
        affinity_counts: list[np.ndarray] = []
        if affinity:
            matching = _matching_pods(table, affinity)
            affinity_counts = [_domain_counts(table, t.topology_key, matching) for t in affinity]
        anti_counts = [_domain_counts(table, t.topology_key, _matching_pods(table, [t])) for t in anti]
        state[PRE_FILTER_STATE_KEY] = _FilterState(affinity, anti, affinity_counts, anti_counts, existing)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        s: _FilterState = state[PRE_FILTER_STATE_KEY]
        n = table.n
        # 1. the incoming pod's required affinity
        affinity_fail = np.zeros(n, dtype=bool)
        if s.affinity_terms:
            lacks = np.zeros(n, dtype=bool)
            pods_exist = np.ones(n, dtype=bool)
            some_match = np.zeros(n, dtype=bool)  # any pod in the cluster matches (per node's copy)
            for k, (term, counts) in enumerate(zip(s.affinity_terms, s.affinity_counts, strict=True)):
                column = table.label_column(term.topology_key)
                lacks |= ~column.present
                delta = s.affinity_delta[k] if s.affinity_delta else None
                counted = _counted_at_node(counts, delta, column)
                pods_exist &= counted
                matching = int(np.count_nonzero(counts))
                if delta is None:  # every node's copy of the state holds the same counts
                    if matching:
                        some_match[:] = True
                    continue
                before = _counted_at_node(counts, None, column)
                some_match |= (matching - before + (_at_node(counts, delta, column) > 0)) > 0
            first_of_group = ~some_match & all(t.matches(pod, None) for t in s.affinity_terms)
            affinity_fail = lacks | (~pods_exist & ~first_of_group)
        # 2. the incoming pod's required anti-affinity
        anti_fail = np.zeros(n, dtype=bool)
        for k, (term, counts) in enumerate(zip(s.anti_affinity_terms, s.anti_affinity_counts, strict=True)):
            column = table.label_column(term.topology_key)
            anti_fail |= _counted_at_node(counts, s.anti_delta[k] if s.anti_delta else None, column)
        anti_fail &= ~affinity_fail
        # 3. existing pods' required anti-affinity
        existing_fail = np.zeros(n, dtype=bool)
        for key in {**s.existing_anti, **s.existing_delta}:
            column = table.label_column(key)
            existing_fail |= _counted_at_node(s.existing_anti.get(key), s.existing_delta.get(key), column)
        existing_fail &= ~affinity_fail & ~anti_fail
        codes_out = np.zeros(n, dtype=np.int8)
        codes_out[affinity_fail] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        codes_out[anti_fail | existing_fail] = Code.UNSCHEDULABLE
        reasons = [
            (reason, mask)
            for reason, mask in (
                (ERR_REASON_AFFINITY, affinity_fail),
                (ERR_REASON_ANTI_AFFINITY, anti_fail),
                (ERR_REASON_EXISTING_ANTI_AFFINITY, existing_fail),
            )
            if mask.any()
        ]
        return NodeVerdicts(codes_out, reasons)

    # --- PreFilterExtensions (filtering.go AddPod / RemovePod → preFilterState.updateWithPod) --

    def add_pod(self, state: CycleState, pod: PodInfo, added: PodInfo, table: NodeTable, i: int) -> None:
        self._update(state, pod, added, table, i, +1)

    def remove_pod(self, state: CycleState, pod: PodInfo, removed: PodInfo, table: NodeTable, i: int) -> None:
        self._update(state, pod, removed, table, i, -1)

    def _update(self, state: CycleState, pod: PodInfo, other: PodInfo, table: NodeTable, i: int, delta: int) -> None:
        """`other` added on (delta +1) or removed from (-1) node i, recorded as node i's change
        (see _FilterState); a term counts only if node i carries its topology key."""
        s: _FilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return

        def has_key(term: AffinityTerm) -> bool:
            return bool(table.label_column(term.topology_key).codes[i] >= 0)

        incoming_ns_labels = table.namespace_labels.get(pod.namespace)
        for term in other.required_anti_affinity:
            if has_key(term) and term.matches(pod, incoming_ns_labels):
                per_node = s.existing_delta.get(term.topology_key)
                if per_node is None:
                    per_node = s.existing_delta[term.topology_key] = np.zeros(table.n, dtype=np.int64)
                per_node[i] += delta
        if s.affinity_terms and all(t.matches(other, None) for t in s.affinity_terms):
            for k, term in enumerate(s.affinity_terms):
                if has_key(term):
                    if s.affinity_delta is None:
                        s.affinity_delta = [np.zeros(table.n, dtype=np.int64) for _ in s.affinity_terms]
                    s.affinity_delta[k][i] += delta
        for k, term in enumerate(s.anti_affinity_terms):
            if has_key(term) and term.matches(other, None):
                if s.anti_delta is None:
                    s.anti_delta = [np.zeros(table.n, dtype=np.int64) for _ in s.anti_affinity_terms]
                s.anti_delta[k][i] += delta

    # --- Score --------------------------------------------------------------------------------

    def _existing_terms(
        self, pod: PodInfo, table: NodeTable, incoming_ns_labels: dict[str, str] | None
    ) -> list[tuple[AffinityGroup, str, int]]:
        """The existing pods' scoring terms that match the incoming pod: (their group, topology
        key, signed weight). They depend on the pod's namespace and labels alone, and groups are
        only ever added: kept per (namespace, labels), only the groups added since are tested."""
        key = (
            NAME,
            self.hard_weight,
            pod.namespace,
            frozenset(pod.labels.items()),
            frozenset((incoming_ns_labels or {}).items()),
        )
        cache = table.plugin_cache
        seen, matched = cache.get(key, (0, []))
        groups = table.affinity_group_list
        if seen != len(groups):
            for group in groups[seen:]:
                existing = group.pod
                if self.hard_weight > 0:
                    for term in existing.required_affinity:
                        if term.matches(pod, incoming_ns_labels):
                            matched.append((group, term.topology_key, self.hard_weight))
                for weighted in existing.preferred_affinity:
                    if weighted.term.matches(pod, incoming_ns_labels):
                        matched.append((group, weighted.term.topology_key, weighted.weight))
                for weighted in existing.preferred_anti_affinity:
                    if weighted.term.matches(pod, incoming_ns_labels):
                        matched.append((group, weighted.term.topology_key, -weighted.weight))
            if key not in cache and len(cache) >= PLUGIN_CACHE_LIMIT:
                del cache[next(iter(cache))]
            cache[key] = (len(groups), matched)
        return matched

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        if self.ignore_preferred_of_existing and not has_constraints:
            return SKIP
        if not has_constraints and not table.affinity_groups:
            return SKIP  # nothing can produce a score entry
        namespaces = table.namespace_labels
        incoming_ns_labels = namespaces.get(pod.namespace)
        # per topology value: the summed weighted counts (integers) of the nodes carrying it
        topology_score: dict[str, np.ndarray] = {}
        produced = False

        def add(key: str, per_node: np.ndarray, weight: int) -> None:
            # Only nodes carrying `key` count (they have labels). Counts are not negative, so some
            # such node counts iff some domain's sum is non-zero; sums are linear, so summing each
            # term's domains is the same as summing the weighted per-node columns.
            nonlocal produced
            by_value = table.domain_counts(key, per_node)
            if not by_value.any():
                return
            produced = True
            current = topology_score.get(key)
            if current is None:
                topology_score[key] = by_value * weight
            else:
                current += by_value * weight

        if has_constraints:
            for weighted in pod.preferred_affinity:
                term = weighted.term.merge_namespaces(namespaces)
                add(term.topology_key, _matching_pods(table, [term]), weighted.weight)
            for weighted in pod.preferred_anti_affinity:
                term = weighted.term.merge_namespaces(namespaces)
                add(term.topology_key, _matching_pods(table, [term]), -weighted.weight)
        for group, topology_key, weight in self._existing_terms(pod, table, incoming_ns_labels):
            add(topology_key, group.counts, weight)
        if not produced:
            return SKIP
        state[PRE_SCORE_STATE_KEY] = topology_score
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        topology_score: dict[str, np.ndarray] = state[PRE_SCORE_STATE_KEY]
        total = np.zeros(len(idx), dtype=np.int64)
        for key, by_value in topology_score.items():
            column = table.label_column(key)
            total += table.take(by_value if column.identity else column.spread(by_value), idx)
        return total

    def normalize_score(
        self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        if not state.get(PRE_SCORE_STATE_KEY) or len(scores) == 0:
            return scores
        low, high = int(scores.min()), int(scores.max())
        diff = high - low
        if diff <= 0:
            return constant(0, len(scores))
        # Go: int64(float64(MaxNodeScore) * (float64(s-min) / float64(max-min))): divide first.
        return (float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / float(diff))).astype(np.int64)


def new(args: dict[str, Any], handle: object) -> InterPodAffinity:
    weight = args.get("hardPodAffinityWeight", 1)
    if not isinstance(weight, int) or isinstance(weight, bool) or not 0 <= weight <= 100:
        raise InputError("profile: InterPodAffinity args.hardPodAffinityWeight: must be an integer between 0 and 100")
    return InterPodAffinity(weight, bool(args.get("ignorePreferredTermsOfExistingPods", False)))
