"""Constant columns: a score every node shares (0, 100, 300…) as a read-only broadcast view of one
number (8 bytes whatever the length), instead of a new array per cycle that a kept result holds."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["constant", "scaled"]


@lru_cache(maxsize=1024)  # views of one number each: a few hundred bytes in all
def constant(value: int, n: int) -> np.ndarray:
    """`np.full(n, value, int64)` as a read-only view of a single value (shared: never written)."""
    return np.broadcast_to(np.int64(value), (n,))


def scaled(column: np.ndarray, factor: int) -> np.ndarray:
    """`column * factor`; a constant again when `column` is one."""
    if column.ndim == 1 and len(column) and column.strides == (0,):
        return constant(int(column[0]) * factor, len(column))
    return column * factor
