"""Which victims would violate a PodDisruptionBudget (default_preemption.go `filterPodsWithPDBViolation`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...api.policy import PodDisruptionBudget
from ...framework.pod_info import PodInfo
from ...framework.selectors import Selector

__all__ = ["Budgets", "split_by_pdb_violation"]


def _valid(pdb: PodDisruptionBudget) -> bool:
    """`LabelSelectorAsSelector` fails on In/NotIn without values and Exists/DoesNotExist with
    values; upstream then skips the budget ("it does not match the pod")."""
    selector = pdb.spec.selector
    if selector is None:
        return True
    for expression in selector.match_expressions:
        if expression.operator in ("In", "NotIn") and not expression.values:
            return False
        if expression.operator in ("Exists", "DoesNotExist") and expression.values:
            return False
    return True


@dataclass(frozen=True)
class Budgets:
    """The cluster's budgets with their selectors compiled once per preemption."""

    pdbs: tuple[PodDisruptionBudget, ...]
    selectors: tuple[Selector | None, ...]  # None: an invalid selector, matches nothing

    @classmethod
    def of(cls, pdbs: Sequence[PodDisruptionBudget]) -> Budgets:
        return cls(tuple(pdbs), tuple(pdb.selector() if _valid(pdb) else None for pdb in pdbs))


def split_by_pdb_violation(pods: Sequence[PodInfo], budgets: Budgets) -> tuple[list[PodInfo], list[PodInfo]]:
    """(violating, non-violating), each keeping the input order.

    Every matching budget's allowance is decremented once per pod, except for pods already in its
    `status.disruptedPods` (processed by the API server); a pod is violating when any matching
    budget's allowance goes below zero. A nil or empty selector matches nothing, and so does
    any budget for a pod without labels.
    """
    allowed = [pdb.status.disruptions_allowed for pdb in budgets.pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for k, (pdb, selector) in enumerate(zip(budgets.pdbs, budgets.selectors, strict=True)):
                if pdb.namespace != pod.namespace or selector is None:
                    continue
                if selector.empty or not selector.matches(pod.labels):
                    continue
                if pod.name in pdb.status.disrupted_pods:
                    continue
                allowed[k] -= 1
                if allowed[k] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating
