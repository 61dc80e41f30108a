"""`fit`: how many more copies of a pod fit, placed one after another as the scheduler would.

Like kubernetes-sigs/cluster-capacity, copies are scheduled until one does not fit (each copy sees
the ones before it: topology spread and anti-affinity count them as they fill), and nothing is
preempted: the answer is the room there is. The copy that stays Pending carries the exact
FailedScheduling message, with what preemption would have done.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..dra.templates import create_template_claims
from ..framework.node_table import NodeTable
from ..framework.profile import Profile
from .allocation import allocation
from .replay import Placement, Progress, Replay
from .templates import PodTemplate

__all__ = ["FitReport", "fit"]


@dataclass
class FitReport:
    template: str
    placed: list[Placement] = field(default_factory=list)
    stopped: Placement | None = None  # the copy that did not fit (None: the limit was reached first)
    limit: int | None = None
    nodes: int = 0
    before: dict[str, dict[str, int]] = field(default_factory=dict)
    after: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.placed)

    def per_node(self) -> dict[str, int]:
        """Copies per node, most first (then by name)."""
        counts = Counter(p.node for p in self.placed if p.node)
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def to_json(self) -> dict[str, Any]:
        return {
            "query": "fit",
            "template": self.template,
            "fits": self.count,
            "limit": self.limit,
            "limitReached": self.stopped is None,
            "nodes": self.nodes,
            "perNode": self.per_node(),
            "placements": [p.to_json() for p in self.placed],
            "next": self.stopped.to_json() if self.stopped else None,
            "allocation": {"before": self.before, "after": self.after},
        }


def fit(
    table: NodeTable,
    template: PodTemplate,
    profile: Profile | None = None,
    *,
    limit: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> FitReport:
    """Place copies of `template` on `table` (which keeps them: pass a copy the caller owns) until
    one does not fit or `limit` are placed."""
    replay = Replay(table, profile, seed, preempt=False)
    report = FitReport(template.source, limit=limit, nodes=table.n, before=allocation(table))
    uses_dra = bool(template.info.pod.spec.resource_claims)
    k = 0
    while limit is None or k < limit:
        copy = template.copy(k)
        if uses_dra:
            create_template_claims(table.dra, [copy], f"fit{k}-")
        placement, _ = replay.place(copy)
        k += 1
        if not placement.scheduled:
            report.stopped = placement
            break
        report.placed.append(placement)
        if progress is not None:
            progress(k, limit or 0)
    report.after = allocation(table)
    return report
