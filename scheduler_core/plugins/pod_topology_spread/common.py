"""Spread constraints as the plugin sees them (plugins/podtopologyspread/common.go, plugin.go,
plugins/helper/spread.go `DefaultSelector`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...api.objects import LabelSelector, TopologySpreadConstraint
from ...framework.node_table import NodeTable
from ...framework.pod_info import PodInfo
from ...framework.selectors import LabelRequirement, Selector, compile_label_selector
from ..helper import find_untolerated_taint
from ..node_affinity import required_node_affinity

__all__ = ["HOSTNAME_KEY", "Constraint", "default_selector", "explicit_constraints", "inclusion_mask"]

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"


@dataclass(frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str


SYSTEM_DEFAULT_CONSTRAINTS = (
    (HOSTNAME_KEY, 3),
    (ZONE_KEY, 5),
)


def explicit_constraints(pod: PodInfo, action: str) -> list[Constraint]:
    """The pod's own constraints for `action`, matchLabelKeys merged with the pod's label values."""
    out = []
    labels = pod.labels
    for c in pod.pod.spec.topology_spread_constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = compile_label_selector(c.label_selector)
        if c.match_label_keys and c.label_selector is not None:
            extra = tuple(
                LabelRequirement(key, "In", frozenset([labels[key]])) for key in c.match_label_keys if key in labels
            )
            selector = selector.and_requirements(extra)
        out.append(_constraint(c, selector))
    return out


def _constraint(c: TopologySpreadConstraint, selector: Selector) -> Constraint:
    return Constraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        selector=selector,
        min_domains=c.min_domains or 1,
        node_affinity_policy=c.node_affinity_policy or "Honor",
        node_taints_policy=c.node_taints_policy or "Ignore",
    )


def default_selector(pod: PodInfo, table: NodeTable) -> Selector:
    """`helper.DefaultSelector`: Services selecting the pod, and its controller's selector."""
    merged: dict[str, str] = {}
    for namespace, selector in table.services:
        if namespace == pod.namespace and selector and all(pod.labels.get(k) == v for k, v in selector.items()):
            merged.update(selector)
    extra: tuple[LabelRequirement, ...] = ()
    owner = next((ref for ref in pod.pod.metadata.owner_references if ref.controller), None)
    if owner is not None:
        raw = table.controllers.get((owner.api_version, owner.kind, pod.namespace, owner.name))
        if raw is not None:
            if (owner.api_version, owner.kind) == ("v1", "ReplicationController"):
                merged.update({str(k): str(v) for k, v in raw.items()})
            elif (owner.api_version, owner.kind) in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
                try:
                    extra = compile_label_selector(LabelSelector.model_validate(raw)).requirements
                except ValueError:
                    extra = ()
    requirements = tuple(LabelRequirement(k, "In", frozenset([v])) for k, v in sorted(merged.items())) + extra
    return Selector(requirements)


def default_constraints(
    pod: PodInfo, table: NodeTable, defaults: list[tuple[str, int, str]] | None, action: str
) -> list[Constraint]:
    """`buildDefaultConstraints`: the System (or configured List) defaults for `action`, with the
    default selector; none when that selector is empty."""
    spec = (
        defaults if defaults is not None else [(key, skew, SCHEDULE_ANYWAY) for key, skew in SYSTEM_DEFAULT_CONSTRAINTS]
    )
    spec = [entry for entry in spec if entry[2] == action]
    if not spec:
        return []
    selector = default_selector(pod, table)
    if selector.empty:
        return []
    return [Constraint(skew, key, selector, 1, "Honor", "Ignore") for key, skew, _ in spec]


def inclusion_mask(
    pod: PodInfo, table: NodeTable, constraint: Constraint, comparison_operators: bool = False
) -> np.ndarray:
    """`matchNodeInclusionPolicies`: nodes counted for this constraint."""
    mask = np.ones(table.n, dtype=bool)
    if constraint.node_affinity_policy == "Honor":
        mask &= required_node_affinity(pod).mask(table)
    if constraint.node_taints_policy == "Honor":
        tolerated = np.array(
            [
                find_untolerated_taint(taints, pod.tolerations, comparison_operators=comparison_operators) is None
                for taints in table.taint_sets
            ],
            dtype=bool,
        )
        mask &= tolerated[table.taint_sig]
    return mask


def count_per_node(pod: PodInfo, table: NodeTable, constraint: Constraint) -> np.ndarray:
    """`countPodsMatchSelector` for every node: same namespace, not terminating, selector matches."""
    if constraint.selector.empty or constraint.selector.nothing:
        return np.zeros(table.n, dtype=np.int64)
    return table.count_matching(constraint.selector, pod.namespace, include_terminating=False)
