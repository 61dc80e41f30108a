"""`CycleState`: what plugins hand from one extension point to the next in a cycle."""

from __future__ import annotations

from typing import Any

__all__ = ["CycleState"]


class CycleState(dict[str, Any]):
    """Keys are named after the plugin and phase (`"PreFilter" + NAME`), as upstream does."""

    def clone(self) -> CycleState:
        """`CycleState.Clone`: each value that can clone itself (upstream's `StateData.Clone`) does."""
        return CycleState({key: value.clone() if hasattr(value, "clone") else value for key, value in self.items()})
