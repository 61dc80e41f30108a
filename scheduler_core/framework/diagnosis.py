"""Why a pod did not fit: per-node statuses and upstream's `FitError.Error()` message.

Upstream: pkg/scheduler/framework/types.go (`Diagnosis`, `FitError.Error`) and interface.go
(`NodeToStatus` with its absent-nodes status). Filter outcomes stay columnar: `first_fail[i]` is
the index of the plugin whose status upstream records for node i (-1: none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .status import Code, NodeVerdicts, Status

__all__ = ["NO_NODES_AVAILABLE", "Diagnosis", "fit_error_message", "truncate_event_message"]

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
EVENT_NOTE_LIMIT = 1024  # validation.NoteLengthLimit


@dataclass
class Diagnosis:
    """Statuses of the nodes that did not fit, plus the PreFilter and PostFilter messages.

    A node's status comes from `node_statuses` (explicit), else from the filter columns
    (`plugins`, `verdicts`, `first_fail`), else from `absent_status` if it is in `absent`.
    """

    num_nodes: int
    plugins: list[str] = field(default_factory=list)
    verdicts: list[NodeVerdicts | None] = field(default_factory=list)
    first_fail: np.ndarray | None = None
    node_statuses: dict[int, Status] = field(default_factory=dict)
    absent: np.ndarray | None = None  # bool per node: shares absent_status
    absent_status: Status | None = None
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)

    def status_of(self, i: int) -> Status | None:
        """The status upstream records for node i, or None when the node passed."""
        if i in self.node_statuses:
            return self.node_statuses[i]
        if self.first_fail is not None and self.first_fail[i] >= 0:
            k = int(self.first_fail[i])
            verdicts = self.verdicts[k]
            assert verdicts is not None
            return verdicts.status_of(i, self.plugins[k])
        if self.absent_status is not None and (self.absent is None or self.absent[i]):
            return self.absent_status
        return None

    def codes(self) -> np.ndarray:
        """Per node, the code of its recorded status (0 where none)."""
        codes = np.zeros(self.num_nodes, dtype=np.int8)
        if self.absent_status is not None:
            absent = np.ones(self.num_nodes, dtype=bool) if self.absent is None else self.absent
            codes[absent] = self.absent_status.code
        if self.first_fail is not None:
            for k, verdicts in enumerate(self.verdicts):
                if verdicts is not None:
                    hit = self.first_fail == k
                    codes[hit] = verdicts.codes[hit]
        for i, status in self.node_statuses.items():
            codes[i] = status.code
        return codes

    def reason_counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        explicit = np.zeros(self.num_nodes, dtype=bool)
        for i, status in self.node_statuses.items():
            counts.update(status.reasons)
            explicit[i] = True
        if self.first_fail is not None:
            for k, verdicts in enumerate(self.verdicts):
                if verdicts is None:
                    continue
                recorded = (self.first_fail == k) & ~explicit
                for reason, mask in verdicts.reasons:
                    hits = int(np.count_nonzero(mask & recorded))
                    if hits:
                        counts[reason] += hits
                explicit |= recorded
        if self.absent_status is not None:
            absent = ~explicit if self.absent is None else (self.absent & ~explicit)
            hits = int(np.count_nonzero(absent))
            for reason in self.absent_status.reasons:
                counts[reason] += hits
        return counts

    def message(self) -> str:
        return fit_error_message(
            self.num_nodes, self.reason_counts().items(), self.pre_filter_msg, self.post_filter_msg
        )


def fit_error_message(
    num_all_nodes: int, reason_counts: Iterable[tuple[str, int]], pre_filter_msg: str = "", post_filter_msg: str = ""
) -> str:
    """`FitError.Error()`: '0/N nodes are available: <sorted "count reason" items>. <PostFilter msg>'."""
    message = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        message += f" {pre_filter_msg}."
    else:
        items = sorted(f"{count} {reason}" for reason, count in reason_counts if count)
        if items:
            message += " " + ", ".join(items) + "."
    if post_filter_msg:
        message += f" {post_filter_msg}"
    return message


def truncate_event_message(message: str) -> str:
    """Event notes are cut to 1024 characters: `msg[:1020] + " ..."` (schedule_one.go truncateMessage)."""
    if len(message) <= EVENT_NOTE_LIMIT:
        return message
    return message[: EVENT_NOTE_LIMIT - 4] + " ..."


def unschedulable_code(codes: np.ndarray) -> np.ndarray:
    """Nodes whose recorded code is exactly Unschedulable (where preemption might help)."""
    return codes == Code.UNSCHEDULABLE
