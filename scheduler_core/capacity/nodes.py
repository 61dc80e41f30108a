"""The nodes a capacity query names, cordons or adds."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from ..api.errors import InputError
from ..api.objects import Node
from ..framework.node_table import NodeTable
from ..framework.selectors import Selector, SelectorSyntaxError, parse_label_selector
from ..plugins.node_unschedulable import UNSCHEDULABLE_TAINT
from ..plugins.pod_topology_spread.common import HOSTNAME_KEY, ZONE_KEY

__all__ = ["NodeChoice", "cordon", "new_nodes", "node_at_name_order", "selected_nodes"]

ZONE_LABEL = ZONE_KEY
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
HOSTNAME_LABEL = HOSTNAME_KEY
# The node lifecycle controller taints a cordoned node (TaintNodesByCondition,
# pkg/controller/nodelifecycle) with node.kubernetes.io/unschedulable:NoSchedule, the taint
# NodeUnschedulable lets tolerating pods past.


@dataclass(frozen=True)
class NodeChoice:
    """Nodes by name, label selector, zone or instance type (all given must hold)."""

    names: tuple[str, ...] = ()
    selector: str = ""
    zone: str = ""
    instance_type: str = ""

    @property
    def empty(self) -> bool:
        return not (self.names or self.selector or self.zone or self.instance_type)

    def describe(self) -> str:
        parts = []
        if self.names:
            parts.append("nodes " + ", ".join(self.names))
        if self.selector:
            parts.append(f"selector {self.selector!r}")
        if self.zone:
            parts.append(f"zone {self.zone}")
        if self.instance_type:
            parts.append(f"instance type {self.instance_type}")
        return " and ".join(parts)


def _selector(text: str) -> Selector:
    try:
        return parse_label_selector(text)
    except SelectorSyntaxError as exc:
        raise InputError(f"--selector: {exc}") from None


def selected_nodes(table: NodeTable, choice: NodeChoice) -> list[int]:
    """The table positions of the chosen nodes (in the order named, else name order); an error
    naming what matched nothing."""
    if choice.empty:
        raise InputError("no nodes chosen: name them, or give --selector, --zone or --instance-type")
    missing = [name for name in choice.names if name not in table.index]
    if missing:
        raise InputError(f"nodes not found: {', '.join(missing)}")
    candidates = [table.index[name] for name in dict.fromkeys(choice.names)] if choice.names else range(table.n)
    selector = _selector(choice.selector) if choice.selector else None
    chosen = [
        i
        for i in candidates
        if (selector is None or selector.matches(table.labels[i]))
        and (not choice.zone or table.labels[i].get(ZONE_LABEL) == choice.zone)
        and (not choice.instance_type or table.labels[i].get(INSTANCE_TYPE_LABEL) == choice.instance_type)
    ]
    if not chosen:
        raise InputError(f"no node matches {choice.describe()}")
    return chosen


def cordon(table: NodeTable, i: int) -> None:
    """`kubectl cordon`: spec.unschedulable, and the taint the node lifecycle controller then adds."""
    node = table.nodes[i]
    taints = list(node.spec.taints)
    if not any(t.key == UNSCHEDULABLE_TAINT.key and t.effect == UNSCHEDULABLE_TAINT.effect for t in taints):
        taints.append(UNSCHEDULABLE_TAINT)
    spec = node.spec.model_copy(update={"unschedulable": True, "taints": taints})
    table.update_node(i, node.model_copy(update={"spec": spec}))


def node_at_name_order(table: NodeTable, name: str) -> int:
    """Where a new node goes so the table stays in name order (as the scheduler's snapshot lists them)."""
    return bisect.bisect_left(table.names, name)


def new_nodes(shape: Node, count: int, prefix: str, taken: Sequence[str]) -> list[Node]:
    """`count` nodes shaped like `shape`: its labels (hostname renamed), taints and allocatable,
    schedulable, with no images pulled yet; named `<prefix>1`, `<prefix>2`, … past any taken name."""
    if count < 1:
        raise InputError(f"--count must be at least 1 (got {count})")
    used = set(taken)
    nodes: list[Node] = []
    k = 0
    while len(nodes) < count:
        k += 1
        name = f"{prefix}{k}"
        if name in used:
            continue
        labels = dict(shape.metadata.labels)
        if HOSTNAME_LABEL in labels:
            labels[HOSTNAME_LABEL] = name
        meta = shape.metadata.model_copy(update={"name": name, "uid": None, "labels": labels})
        taints = [t for t in shape.spec.taints if t.key != UNSCHEDULABLE_TAINT.key]
        spec = shape.spec.model_copy(update={"unschedulable": False, "taints": taints})
        status = shape.status.model_copy(update={"images": []})
        nodes.append(shape.model_copy(update={"metadata": meta, "spec": spec, "status": status}))
    return nodes
