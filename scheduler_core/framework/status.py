"""Status codes and per-node verdicts (pkg/scheduler/framework/interface.go `Code`, `Status`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

__all__ = ["SKIP", "SUCCESS", "Code", "NodeVerdicts", "PreFilterResult", "Status"]


class Code(IntEnum):
    """Upstream's status codes, same numbering."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}
CODE_BY_LABEL = {label: code for code, label in _LABELS.items()}


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's answer: a code, the reasons, and the plugin that gave it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    def message(self) -> str:
        """`Status.Message()`: the reasons joined with ", "."""
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def with_plugin(self, plugin: str) -> Status:
        if self.reasons:
            return Status(self.code, self.reasons, plugin)
        # without reasons: one shared (immutable) Status per code and plugin, not one per cycle
        key = (self.code, plugin)
        status = _PLAIN.get(key)
        if status is None:
            status = _PLAIN[key] = Status(self.code, (), plugin)
        return status

    def to_dict(self) -> dict[str, object]:
        return {"plugin": self.plugin, "code": self.code.label, "reasons": list(self.reasons)}


SUCCESS = Status()  # statuses are immutable: plugins return these shared ones
SKIP = Status(Code.SKIP)
_PLAIN: dict[tuple[Code, str], Status] = {}
_ZEROS: dict[int, np.ndarray] = {}


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """`PreFilterResult`: the only nodes worth filtering (None: all)."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass
class NodeVerdicts:
    """One Filter plugin's answer for every node.

    `codes[i]` is node i's code; a node's reasons are those of `reasons` whose mask is set at i,
    in list order (upstream's order of checks). `detail` holds structured numbers for display
    (e.g. NodeResourcesFit's requested, used and allocatable per resource).
    """

    codes: np.ndarray
    reasons: list[tuple[str, np.ndarray]] = field(default_factory=list)
    detail: dict[str, object] | None = None
    passes_all: bool = False  # known to reject no node (the runtime then skips looking at codes)

    @classmethod
    def all_pass(cls, n: int) -> NodeVerdicts:
        """Every node passes; the codes are one shared read-only zero column per size."""
        zeros = _ZEROS.get(n)
        if zeros is None:
            zeros = _ZEROS[n] = np.zeros(n, dtype=np.int8)
            zeros.flags.writeable = False
        return cls(zeros, [], None, True)

    @classmethod
    def reject_where(cls, mask: np.ndarray, code: Code, reason: str) -> NodeVerdicts:
        if not mask.any():
            return cls.all_pass(len(mask))
        codes = np.where(mask, np.int8(code), np.int8(0)).astype(np.int8)
        return cls(codes, [(reason, mask)])

    def writable(self) -> NodeVerdicts:
        """Verdicts whose codes a plugin may still change in place."""
        if self.codes.flags.writeable:
            return self
        return NodeVerdicts(self.codes.copy(), self.reasons, self.detail, False)

    def status_of(self, i: int, plugin: str = "") -> Status:
        code = Code(int(self.codes[i]))
        if code == Code.SUCCESS:
            return Status(plugin=plugin)
        return Status(code, tuple(reason for reason, mask in self.reasons if mask[i]), plugin)
