"""Pods placed one after another, as kube-scheduler's queue and binding cycle would place them.

`Replay` keeps one `Scheduler` over a table it changes for good (a capacity query's own copy of the
cluster): each pod's cycle runs every plugin on every node, a pod that fits is bound (Reserve,
PreBind, Bind account it on its node, so the next cycle sees it), and the queue hands out the
higher priority first (PrioritySort; equal priorities in the order given, as the queue's timestamps).

Preemption, when carried out, does what the cluster does after a PostFilter nominated a node: the
victims are deleted (their controllers may make replacements, which join the queue) and the
preemptor, now carrying `status.nominatedNodeName`, is tried again next; the nominated node is
then evaluated first (schedule_one.go `evaluateNominatedNode`).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..framework.node_table import NodeTable
from ..framework.pod_info import PodInfo
from ..framework.profile import Profile
from ..plugins.registry import new_framework
from ..schedule_one import Scheduler

__all__ = ["Placement", "Progress", "Replay", "renamed", "with_nominated_node"]

Progress = Callable[[int, int], None]  # (pods done, pods known so far)
#: Cycles one pod may take: preempting, then landing (a pod nominated again and again stops here).
MAX_ATTEMPTS = 3


@dataclass
class Placement:
    """Where one pod went: a node, or Pending with the exact FailedScheduling message."""

    pod: str  # namespace/name
    priority: int
    node: str | None
    message: str
    nominated: str | None = None  # preemption nominated this node, and was not carried out
    preempted: list[str] = field(default_factory=list)  # the pods its preemption deleted
    gated: bool = False  # a scheduling gate kept it out of the queue (no cycle ran)
    origin: str | None = None  # drain: the node it was evicted from

    @property
    def scheduled(self) -> bool:
        return self.node is not None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "pod": self.pod,
            "priority": self.priority,
            "node": self.node,
            "scheduled": self.scheduled,
            "message": self.message,
        }
        if self.origin is not None:
            data["from"] = self.origin
        if self.nominated:
            data["nominatedNode"] = self.nominated
        if self.preempted:
            data["preempted"] = list(self.preempted)
        if self.gated:
            data["gated"] = True
        return data


def renamed(info: PodInfo, name: str) -> PodInfo:
    """A copy of a pod under another name (everything computed from its spec is shared)."""
    pod = info.pod
    meta = pod.metadata.model_copy(update={"name": name, "uid": None})  # a new object: a new uid
    status = pod.status.model_copy(update={"resource_claim_statuses": list(pod.status.resource_claim_statuses)})
    return info.as_pod(pod.model_copy(update={"metadata": meta, "status": status}))


def with_nominated_node(info: PodInfo, node: str) -> PodInfo:
    """The pod as preemption leaves it: `status.nominatedNodeName` set."""
    pod = info.pod
    return info.as_pod(pod.model_copy(update={"status": pod.status.model_copy(update={"nominated_node_name": node})}))


Replacement = Callable[[PodInfo], PodInfo | None]  # a deleted pod → the pod its controller makes, if any


class Replay:
    """Schedules and binds pods on `table`, which it changes (pass a copy the caller owns)."""

    def __init__(
        self,
        table: NodeTable,
        profile: Profile | None = None,
        seed: int = 0,
        *,
        preempt: bool = True,
        replacement: Replacement | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.table = table
        self.scheduler = Scheduler(new_framework(profile), seed=seed)
        self.preempt = preempt
        self.replacement = replacement
        self.progress = progress
        self.cycles = 0
        self.victims: list[tuple[PodInfo, str, str]] = []  # (deleted pod, its node, the preemptor)
        self._order = itertools.count()
        self._done = 0
        self._known = 0

    def gate(self, info: PodInfo) -> str | None:
        """The PreEnqueue rejection that keeps a pod out of the queue (scheduling gates), if any."""
        for plugin in self.scheduler.framework.pre_enqueue_plugins:
            status = plugin.pre_enqueue(info, self.table)
            if not status.is_success():
                return status.with_plugin(plugin.name).message()
        return None

    def place(self, info: PodInfo) -> tuple[Placement, Any]:
        """One scheduling cycle and, when a node fits, its binding cycle; the placement and the
        cycle's result (None when a gate kept the pod out)."""
        gated = self.gate(info)
        if gated is not None:
            return Placement(info.key, info.priority, None, gated, gated=True), None
        self.cycles += 1
        result = self.scheduler.schedule_pod(self.table, info)
        if result.selected is not None:
            status = self.scheduler.bind(self.table, info, result.selected, result.state)
            if status.is_success():
                self._forget_nomination(info.key)
                return Placement(info.key, info.priority, result.selected_node, result.message), result
            return Placement(info.key, info.priority, None, status.message()), result
        nominated = result.nominated_node or None
        return Placement(info.key, info.priority, None, result.message, nominated=nominated), result

    def _forget_nomination(self, key: str) -> None:
        """A bound pod is no longer nominated anywhere (the scheduler's nominator drops it)."""
        nominated = self.table.nominated
        for i in [i for i, pods in nominated.items() if any(p.key == key for p in pods)]:
            kept = [p for p in nominated[i] if p.key != key]
            if kept:
                nominated[i] = kept
            else:
                del nominated[i]

    def run(self, infos: Iterable[PodInfo], origins: dict[str, str] | None = None) -> list[Placement]:
        """Place `infos` in queue order (higher priority first, then the order given); with
        preemption carried out, the victims' replacements join the queue. One placement per pod,
        in the order they were settled."""
        queue: list[tuple[int, int, int, PodInfo]] = []
        for info in infos:
            heapq.heappush(queue, (-info.priority, next(self._order), 0, info))
        self._known += len(queue)
        placements: list[Placement] = []
        preempted_by: dict[str, list[str]] = {}
        while queue:
            _, order, attempts, info = heapq.heappop(queue)
            placement, result = self.place(info)
            if placement.nominated and self.preempt and attempts + 1 < MAX_ATTEMPTS:
                deleted = self._preempt(info, placement.nominated, result, queue)
                preempted_by.setdefault(info.key, []).extend(deleted)
                nominee = with_nominated_node(info, placement.nominated)
                self._forget_nomination(info.key)
                self.table.nominated.setdefault(self.table.index[placement.nominated], []).append(nominee)
                heapq.heappush(queue, (-info.priority, order, attempts + 1, nominee))
                continue
            placement.preempted = preempted_by.pop(info.key, [])
            if origins is not None:
                placement.origin = origins.get(info.key)
            placements.append(placement)
            self._done += 1
            if self.progress is not None:
                self.progress(self._done, self._known)
        return placements

    def _preempt(self, info: PodInfo, node: str, result: Any, queue: list[tuple[int, int, int, PodInfo]]) -> list[str]:
        """Delete the victims preemption chose on `node`; their replacements join the queue."""
        victims: list[PodInfo] = list(result.post_filter_result.detail.get("victims", ()))
        i = self.table.index[node]
        deleted = []
        for victim in victims:
            self.table.remove_pod(victim, i)
            self.victims.append((victim, node, info.key))
            deleted.append(victim.key)
            made = self.replacement(victim) if self.replacement is not None else None
            if made is not None:
                heapq.heappush(queue, (-made.priority, next(self._order), 0, made))
                self._known += 1
        return deleted
