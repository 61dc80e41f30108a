"""Shared read-only constant columns: a score every node shares (0, 100, 300…) costs one array per
(value, length) for the whole process instead of a new one per cycle that a kept result holds on to."""

from __future__ import annotations

import numpy as np

__all__ = ["constant", "scaled"]

_LIMIT = 256
_CACHE: dict[tuple[int, int], np.ndarray] = {}
_VALUE_OF: dict[int, int] = {}  # id of a cached column → its value


def constant(value: int, n: int) -> np.ndarray:
    """`np.full(n, value, int64)`, shared and read-only."""
    column = _CACHE.get((value, n))
    if column is None:
        if len(_CACHE) >= _LIMIT:
            _CACHE.clear()
            _VALUE_OF.clear()
        column = np.full(n, value, dtype=np.int64)
        column.flags.writeable = False
        _CACHE[(value, n)] = column
        _VALUE_OF[id(column)] = value
    return column


def scaled(column: np.ndarray, factor: int) -> np.ndarray:
    """`column * factor`; a shared constant again when `column` is one."""
    value = _VALUE_OF.get(id(column))
    if value is not None and _CACHE.get((value, len(column))) is column:
        return constant(value * factor, len(column))
    return column * factor
