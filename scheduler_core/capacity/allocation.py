"""What is requested of what is allocatable: on the whole cluster, on a set of nodes, per node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..framework.node_table import NodeTable

__all__ = ["RESOURCES", "allocation", "changed_nodes", "per_node"]

RESOURCES = ("cpu", "memory", "pods")  # cpu in millicores, memory in bytes


def _requested(table: NodeTable, resource: str) -> np.ndarray:
    if resource == "pods":
        return table.pod_count
    return table.requested.get(resource, np.zeros(table.n, dtype=np.int64))


def allocation(table: NodeTable, nodes: Sequence[int] | None = None) -> dict[str, dict[str, int]]:
    """Per resource, {"requested", "allocatable"} summed over `nodes` (None: every node)."""
    where = slice(None) if nodes is None else np.asarray(nodes, dtype=np.int64)
    return {
        resource: {
            "requested": int(_requested(table, resource)[where].sum()),
            "allocatable": int(table.alloc.get(resource, np.zeros(table.n, dtype=np.int64))[where].sum()),
        }
        for resource in RESOURCES
    }


def per_node(table: NodeTable) -> dict[str, np.ndarray]:
    """Per resource, each node's requested amount (a copy: the table moves on)."""
    return {resource: _requested(table, resource).copy() for resource in RESOURCES}


def changed_nodes(table: NodeTable, before: dict[str, np.ndarray], names_before: list[str]) -> dict[str, Any]:
    """The nodes whose requests moved, with their figures before and after (a node added since has
    nothing before)."""
    after = per_node(table)
    position = {name: k for k, name in enumerate(names_before)}
    changed: dict[str, Any] = {}
    for i, name in enumerate(table.names):
        k = position.get(name)
        figures = {
            resource: [int(before[resource][k]) if k is not None else 0, int(after[resource][i])]
            for resource in RESOURCES
        }
        if k is None or any(a != b for a, b in figures.values()):
            changed[name] = figures
    return changed
