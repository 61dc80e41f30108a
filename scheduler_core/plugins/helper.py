"""Shared plugin helpers (pkg/scheduler/framework/plugins/helper)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..api.objects import Taint, Toleration
from ..framework.columns import constant
from ..framework.interface import MAX_NODE_SCORE

__all__ = ["default_normalize_score", "find_untolerated_taint", "tolerates"]


def default_normalize_score(scores: np.ndarray, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> np.ndarray:
    """`DefaultNormalizeScore`: scale to [0, max] by the maximum (integer division); optionally reverse."""
    if len(scores) == 0:
        return scores
    max_count = max(int(scores.max()), 0)
    if max_count == 0:
        return constant(max_priority, len(scores)) if reverse else scores
    out = max_priority * scores // max_count
    return max_priority - out if reverse else out


def tolerates(tolerations: Iterable[Toleration], taint: Taint, comparison_operators: bool = False) -> bool:
    """`TolerationsTolerateTaint` (`comparison_operators`: the TaintTolerationComparisonOperators gate)."""
    return any(t.tolerates(taint, comparison_operators) for t in tolerations)


#: The gate under which `Lt`/`Gt` tolerations compare values (KEP-5471, alpha in v1.35), read by the
#: plugins that match tolerations and by the controllers that do (DaemonSet, taint eviction).
COMPARISON_OPERATORS_GATE = "TaintTolerationComparisonOperators"


def find_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Iterable[Toleration],
    effects: tuple[str, ...] = ("NoSchedule", "NoExecute"),
    comparison_operators: bool = False,
) -> Taint | None:
    """`FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`: first untolerated taint, in order."""
    tolerations = tuple(tolerations)
    for taint in taints:
        if taint.effect in effects and not tolerates(tolerations, taint, comparison_operators):
            return taint
    return None
