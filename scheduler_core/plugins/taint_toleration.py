"""TaintToleration (plugins/tainttoleration/taint_toleration.go), evaluated once per distinct taint set."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.columns import constant
from ..framework.cycle_state import CycleState
from ..framework.events import NodeNames
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.runtime import Framework
from ..framework.status import SUCCESS, Code, NodeVerdicts, Status
from .helper import COMPARISON_OPERATORS_GATE, default_normalize_score, find_untolerated_taint, tolerates
from .names import TAINT_TOLERATION

NAME = TAINT_TOLERATION
PRE_SCORE_STATE_KEY = "PreScore" + NAME


# v1.35+ (kubernetes/kubernetes#134740): one constant reason, the taint only in a log line.
UNTOLERATED_TAINTS = "node(s) had untolerated taint(s)"


def untolerated_taint_reason(key: str, value: str) -> str:
    """v1.34.0: `fmt.Sprintf("node(s) had untolerated taint {%s: %s}", key, value)`."""
    return f"node(s) had untolerated taint {{{key}: {value}}}"


class TaintToleration:
    name = NAME

    def __init__(self, constant_reason: bool = False, comparison_operators: bool = False) -> None:
        self.constant_reason = constant_reason
        self.comparison_operators = comparison_operators  # TaintTolerationComparisonOperators (v1.35 alpha)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts:
        by_reason: dict[str, list[int]] = {}
        taint_of: dict[str, dict[str, str]] = {}  # reason → the taint it names, for the browser's fix
        sigs_of: dict[tuple[str, str, str], list[int]] = {}  # each untolerated taint → its taint sets
        for sig, taints in enumerate(table.taint_sets):
            taint = find_untolerated_taint(taints, pod.tolerations, comparison_operators=self.comparison_operators)
            if taint is not None:
                reason = (
                    UNTOLERATED_TAINTS if self.constant_reason else untolerated_taint_reason(taint.key, taint.value)
                )
                by_reason.setdefault(reason, []).append(sig)
                taint_of.setdefault(reason, {"key": taint.key, "value": taint.value or "", "effect": taint.effect})
                sigs_of.setdefault((taint.key, taint.value or "", taint.effect), []).append(sig)
        if not by_reason:
            return NodeVerdicts.all_pass(table.n)
        codes = np.zeros(table.n, dtype=np.int8)
        reasons = []
        for reason, sigs in by_reason.items():
            mask = np.isin(table.taint_sig, sigs)
            codes[mask] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            reasons.append((reason, mask))
        detail: dict[str, Any] = {"taints": taint_of}
        if self.constant_reason:  # one reason for every taint: which nodes have which (the fix names each)
            detail["taintNodes"] = [
                {
                    "key": key,
                    "value": value,
                    "effect": effect,
                    "nodes": NodeNames(np.flatnonzero(np.isin(table.taint_sig, sigs))),
                }
                for (key, value, effect), sigs in sigs_of.items()
            ]
        return NodeVerdicts(codes, reasons, detail)

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status:
        state[PRE_SCORE_STATE_KEY] = tuple(t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule"))
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray:
        tolerations = state[PRE_SCORE_STATE_KEY]
        if not any(taints for taints in table.taint_sets):
            return constant(0, len(idx))
        per_sig = np.array(
            [
                sum(
                    1
                    for t in taints
                    if t.effect == "PreferNoSchedule" and not tolerates(tolerations, t, self.comparison_operators)
                )
                for taints in table.taint_sets
            ],
            dtype=np.int64,
        )
        return per_sig[table.take(table.taint_sig, idx)]

    def normalize_score(
        self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        return default_normalize_score(scores, reverse=True)


def new(args: dict[str, Any], handle: Framework) -> TaintToleration:
    return TaintToleration(
        constant_reason=handle.version.has("taint-reason-constant"),
        comparison_operators=handle.version.gates.enabled(COMPARISON_OPERATORS_GATE),
    )
