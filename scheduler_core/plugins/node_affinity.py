"""NodeAffinity, including nodeSelector (plugins/nodeaffinity/node_affinity.go)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import ValidationError

from ..api.loading import InputError
from ..api.objects import NodeAffinity as NodeAffinitySpec
from ..framework.cycle_state import CycleState
from ..framework.events import NodeNames
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.selectors import NodeTermCompiled, compile_node_selector_term
from ..framework.status import SKIP, SUCCESS, Code, NodeVerdicts, PreFilterResult, Status
from .helper import default_normalize_score
from .names import NODE_AFFINITY

NAME = NODE_AFFINITY
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


class RequiredAffinity:
    """`GetRequiredNodeAffinity(pod)`: nodeSelector AND (OR of the required terms)."""

    def __init__(self, selector: dict[str, str], terms: list[NodeTermCompiled] | None) -> None:
        self.selector = selector
        self.terms = terms  # None: no required node affinity

    def mask(self, table: NodeTable) -> np.ndarray:
        mask = table.selector_mask(self.selector)
        if self.terms is not None:
            any_term = np.zeros(table.n, dtype=bool)
            for term in self.terms:
                any_term |= table.term_mask(term)
            mask &= any_term
        return mask

    def matches(self, name: str, labels: dict[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.selector.items()):
            return False
        return self.terms is None or any(t.matches(name, labels) for t in self.terms)


def required_node_affinity(pod: PodInfo) -> RequiredAffinity:
    spec = pod.pod.spec
    node_affinity = spec.affinity.node_affinity if spec.affinity else None
    required = node_affinity.required_during_scheduling_ignored_during_execution if node_affinity else None
    terms = [compile_node_selector_term(t) for t in required.node_selector_terms] if required is not None else None
    return RequiredAffinity(spec.node_selector, terms)


class NodeAffinity:
    name = NAME

    def __init__(self, added: NodeAffinitySpec | None) -> None:
        self.added_required: list[NodeTermCompiled] | None = None
        self.added_preferred: list[tuple[int, NodeTermCompiled]] = []
        if added is not None:
            req = added.required_during_scheduling_ignored_during_execution
            if req is not None:
                self.added_required = [compile_node_selector_term(t) for t in req.node_selector_terms]
            self.added_preferred = [
                (t.weight, compile_node_selector_term(t.preference))
                for t in added.preferred_during_scheduling_ignored_during_execution
            ]

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[PreFilterResult | None, Status]:
        spec = pod.pod.spec
        node_affinity = spec.affinity.node_affinity if spec.affinity else None
        required = node_affinity.required_during_scheduling_ignored_during_execution if node_affinity else None
        if required is None and not spec.node_selector and self.added_required is None:
            return None, SKIP
        state[PRE_FILTER_STATE_KEY] = required_node_affinity(pod)
        if required is None or not required.node_selector_terms:
            return None, SUCCESS
        # Only when every term names nodes via matchFields metadata.name In: the union of each term's intersection.
        union: set[str] = set()
        for term in required.node_selector_terms:
            names: set[str] | None = None
            for requirement in term.match_fields:
                if requirement.key == "metadata.name" and requirement.operator == "In":
                    values = set(requirement.values)
                    names = values if names is None else names & values
            if names is None:
                return None, SUCCESS
            union |= names
        if not union:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))
        return PreFilterResult(frozenset(union)), SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        codes = np.zeros(table.n, dtype=np.int8)
        reasons = []
        failed = np.zeros(table.n, dtype=bool)
        if self.added_required is not None:
            added = np.zeros(table.n, dtype=bool)
            for term in self.added_required:
                added |= table.term_mask(term)
            failed = ~added
            if failed.any():
                reasons.append((ERR_REASON_ENFORCED, failed))
        required: RequiredAffinity = state.get(PRE_FILTER_STATE_KEY) or required_node_affinity(pod)
        mismatch = ~required.mask(table) & ~failed
        if mismatch.any():
            reasons.append((ERR_REASON_POD, mismatch))
        if not reasons:
            return NodeVerdicts.all_pass(table.n)
        codes[failed | mismatch] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return NodeVerdicts(codes, reasons, _missing_labels(pod, table, mismatch) if mismatch.any() else None)

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        spec = pod.pod.spec
        node_affinity = spec.affinity.node_affinity if spec.affinity else None
        preferred = node_affinity.preferred_during_scheduling_ignored_during_execution if node_affinity else []
        if not preferred and not self.added_preferred:
            return SKIP
        terms = list(self.added_preferred)
        for k, t in enumerate(preferred):
            if t.weight == 0:
                continue
            compiled = compile_node_selector_term(t.preference)
            if not compiled.valid and (t.preference.match_expressions or t.preference.match_fields):
                # NewPreferredSchedulingTerms fails on a requirement that does not parse: an Error status.
                return Status(
                    Code.ERROR,
                    (f"preferredDuringSchedulingIgnoredDuringExecution[{k}]: invalid node selector requirement",),
                )
            terms.append((t.weight, compiled))
        state[PRE_SCORE_STATE_KEY] = terms
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        total = np.zeros(table.n, dtype=np.int64)
        for weight, term in state[PRE_SCORE_STATE_KEY]:
            total += np.where(table.term_mask(term), weight, 0)
        return total[idx]

    def normalize_score(
        self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        return default_normalize_score(scores, reverse=False)


def new(args: dict[str, Any], handle: object) -> NodeAffinity:
    added = args.get("addedAffinity")
    try:
        spec = NodeAffinitySpec.model_validate(added) if added else None
    except ValidationError as exc:
        raise InputError(f"profile: NodeAffinity args.addedAffinity: {exc.errors()[0]['msg']}") from None
    plugin = NodeAffinity(spec)
    # ValidateNodeAffinityArgs / NewNodeSelector: a term that does not parse is a configuration error
    # (an empty term is not: it is skipped and matches nothing).
    terms = [*(plugin.added_required or []), *(term for _, term in plugin.added_preferred)]
    if any(not term.valid and (term.label_requirements or term.field_requirements) for term in terms):
        raise InputError("profile: NodeAffinity args.addedAffinity: a node selector term does not parse")
    return plugin


def _missing_labels(pod: PodInfo, table: NodeTable, rejected: np.ndarray) -> dict[str, object] | None:
    """For the browser's fix: each nodeSelector pair with the rejected nodes that lack it."""
    missing = []
    for key, value in sorted(pod.pod.spec.node_selector.items()):
        lacking = rejected & ~table.selector_mask({key: value})
        if lacking.any():
            missing.append({"key": key, "value": value, "nodes": NodeNames(np.flatnonzero(lacking))})
    return {"missingLabels": missing} if missing else None
