"""`add`: N more nodes of a shape; which of the pending pods would then schedule, and where.

The new nodes are copies of an existing node (its labels, taints and allocatable; a fresh hostname,
schedulable, no images pulled) or a Node written out. The pods waiting for a node (unbound, not
finished, for this profile's scheduler) are then placed in queue order, as the scheduler does once
the nodes register (their arrival is a NodeAdd event, which requeues every unschedulable pod).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..api.errors import InputError
from ..api.objects import Node, Pod
from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.profile import Profile
from .allocation import allocation
from .drain import replacement_of
from .nodes import new_nodes, node_at_name_order
from .replay import Placement, Progress, Replay

__all__ = ["AddReport", "add_nodes", "pending_pods", "shape_of"]


@dataclass
class AddReport:
    shape: str
    added: list[str]
    placements: list[Placement] = field(default_factory=list)
    before: dict[str, dict[str, int]] = field(default_factory=dict)
    after: dict[str, dict[str, int]] = field(default_factory=dict)
    preempted: list[dict[str, str]] = field(default_factory=list)
    anyway: set[str] | None = None  # the pods that schedule without the new nodes too (None: not asked)

    @property
    def thanks_to_new_nodes(self) -> list[Placement]:
        """The pods that schedule with the new nodes and stay Pending without them (random tie-breaks
        falling differently can move a pod too, so the counts are the figure to read)."""
        return [p for p in self.scheduled if self.anyway is not None and p.pod not in self.anyway]

    @property
    def scheduled(self) -> list[Placement]:
        return [p for p in self.placements if p.scheduled]

    @property
    def on_new_nodes(self) -> list[Placement]:
        added = set(self.added)
        return [p for p in self.placements if p.node in added]

    def to_json(self) -> dict[str, Any]:
        return {
            "query": "add",
            "shape": self.shape,
            "added": self.added,
            "pending": len(self.placements),
            "scheduled": len(self.scheduled),
            "onNewNodes": len(self.on_new_nodes),
            "scheduleAnyway": None if self.anyway is None else len(self.anyway),
            "thanksToNewNodes": [p.pod for p in self.thanks_to_new_nodes] if self.anyway is not None else None,
            "placements": [p.to_json() for p in self.placements],
            "preempted": self.preempted,
            "allocation": {"before": self.before, "after": self.after},
        }


def pending_pods(pods: Iterable[Pod], scheduler_name: str) -> list[PodInfo]:
    """The pods waiting for this scheduler, in creation order (the queue's timestamps)."""
    waiting = [
        pod
        for pod in pods
        if not pod.spec.node_name
        and pod.status.phase not in ("Succeeded", "Failed")
        and pod.metadata.deletion_timestamp is None
        and (pod.spec.scheduler_name or "default-scheduler") == scheduler_name
    ]
    waiting.sort(key=lambda pod: pod.metadata.creation_timestamp or "")
    return [PodInfo.of(pod) for pod in waiting]


def shape_of(table: NodeTable, like: str | None, written: Node | None) -> tuple[Node, str]:
    """The node to copy, and how the report names it."""
    if written is not None:
        return written, f"node {written.metadata.name} (written)"
    if not like:
        raise InputError("add: name a node to copy (--like NODE) or give a Node (--node FILE)")
    if like not in table.index:
        raise InputError(f'nodes "{like}" not found')
    return table.nodes[table.index[like]], f"node {like}"


def add_nodes(
    table: NodeTable,
    shape: Node,
    shape_text: str,
    count: int,
    pending: list[PodInfo],
    profile: Profile | None = None,
    *,
    prefix: str | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    baseline: NodeTable | None = None,
) -> AddReport:
    """Add `count` nodes like `shape` to `table` (which keeps them: pass a copy the caller owns) and
    place the `pending` pods; with `baseline` (another copy of the same cluster) they are placed on it
    first, without the new nodes, so the report tells the pods the new nodes make room for from those
    that schedule anyway (a snapshot's Pending pods are often just not scheduled yet)."""
    prefix = prefix if prefix is not None else f"{shape.metadata.name}-new-"
    nodes = new_nodes(shape, count, prefix, table.names)
    report = AddReport(shape_text, [node.metadata.name for node in nodes], before=allocation(table))
    if baseline is not None:
        without = Replay(baseline, profile, seed, preempt=True, replacement=replacement_of).run(pending)
        report.anyway = {p.pod for p in without if p.scheduled}
    in_name_order = all(a <= b for a, b in zip(table.names, table.names[1:], strict=False))
    for node in nodes:
        table.insert_node(node_at_name_order(table, node.metadata.name) if in_name_order else table.n, node)
    replay = Replay(table, profile, seed, preempt=True, replacement=replacement_of, progress=progress)
    report.placements = replay.run(pending)
    report.preempted = [{"pod": v.key, "node": node, "by": by} for v, node, by in replay.victims]
    report.after = allocation(table)
    return report
