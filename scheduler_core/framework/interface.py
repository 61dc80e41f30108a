"""Extension points (pkg/scheduler/framework/interface.go), batch-shaped.

A plugin opts into an extension point by defining its method. Every method sees the whole node
set at once (`NodeTable`); Score methods see the feasible node indices `idx` and return one raw
score per entry of `idx`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from .status import NodeVerdicts, PreFilterResult, Status

if TYPE_CHECKING:
    from .cycle_state import CycleState
    from .diagnosis import Diagnosis
    from .node_table import NodeTable
    from .pod_info import PodInfo

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "FilterPlugin",
    "Handle",
    "NormalizeScorePlugin",
    "Plugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreFilterPlugin",
    "PreScorePlugin",
    "ScorePlugin",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class PostFilterResult:
    """`PostFilterResult`: the node nominated by preemption, and the detail for display."""

    def __init__(self, nominated_node: str = "", detail: dict[str, Any] | None = None) -> None:
        self.nominated_node = nominated_node
        self.detail = detail or {}


class Handle(Protocol):
    """What a plugin may ask of the framework that runs it."""

    def filter_columns(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[np.ndarray, list[NodeVerdicts | None]]: ...

    def status_at(self, first_fail: np.ndarray, verdicts: list[NodeVerdicts | None], i: int) -> Status: ...

    def pre_filter_extensions(self, state: CycleState) -> list[PreFilterExtensions]: ...


class Plugin(Protocol):
    name: str


@runtime_checkable
class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """`PreFilterExtensions`: a PreFilter plugin whose state counts other pods implements both, so
    preemption's dry run and nominated pods update that state instead of re-running PreFilter.
    Its Filter must then read only its state and node i's own data for node i. Updates are copy on
    write (`state[key] = new`), so a cloned CycleState stays independent."""

    def add_pod(self, state: CycleState, pod: PodInfo, added: PodInfo, table: NodeTable, i: int) -> None: ...

    def remove_pod(self, state: CycleState, pod: PodInfo, removed: PodInfo, table: NodeTable, i: int) -> None: ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> NodeVerdicts: ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: str

    def post_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: str

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> Status: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class NormalizeScorePlugin(Protocol):
    name: str

    def normalize_score(
        self, state: CycleState, pod: PodInfo, table: NodeTable, idx: np.ndarray, scores: np.ndarray
    ) -> np.ndarray: ...
