"""Per-node columns a cycle keeps: constant scores as a read-only broadcast view of one number
(8 bytes whatever the length), and integer columns in the smallest dtype that holds their values.

A kept result's fresh memory costs page faults when first touched (a 5,000-node int64 column is
ten pages), so what a cycle keeps is made small; `int()` and `tolist()` read the same numbers."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["compact", "constant", "is_constant", "scaled"]


@lru_cache(maxsize=1024)  # views of one number each: a few hundred bytes in all
def constant(value: int, n: int) -> np.ndarray:
    """`np.full(n, value, int64)` as a read-only view of a single value (shared: never written)."""
    return np.broadcast_to(np.int64(value), (n,))


def is_constant(column: np.ndarray) -> bool:
    """Whether `column` is a broadcast view of one number (see `constant`)."""
    return column.ndim == 1 and len(column) > 0 and column.strides == (0,)


def scaled(column: np.ndarray, factor: int) -> np.ndarray:
    """`column * factor` as int64; a constant again when `column` is one."""
    if is_constant(column):
        return constant(int(column[0]) * factor, len(column))
    return np.multiply(column, factor, dtype=np.int64)


def compact(column: np.ndarray, copy: bool = False, low: int | None = None, high: int | None = None) -> np.ndarray:
    """An integer column in the smallest integer dtype holding its values: the column itself when
    it already is (unless `copy`); a constant stays the shared view. `low` and `high`, bounds the
    caller knows the values lie within (e.g. node indexes), save the passes that find them. For
    columns a result keeps; arithmetic on them widens first."""
    if is_constant(column) or not len(column):
        return column.copy() if copy and not is_constant(column) else column
    if column.dtype.itemsize == 1:  # nothing smaller
        return column.copy() if copy else column
    low = int(column.min()) if low is None else low
    high = int(column.max()) if high is None else high
    return column.astype(_smallest(low, high), copy=copy)


_UNSIGNED = ((np.uint8, 2**8 - 1), (np.uint16, 2**16 - 1), (np.uint32, 2**32 - 1))
_SIGNED = ((np.int8, 2**7), (np.int16, 2**15), (np.int32, 2**31))


def _smallest(low: int, high: int) -> type[np.integer]:
    """The smallest integer dtype holding [low, high] (`np.min_scalar_type`'s choice, at less cost)."""
    if low >= 0:
        for dtype, top in _UNSIGNED:
            if high <= top:
                return dtype
        return np.int64
    for dtype, bound in _SIGNED:
        if -bound <= low and high < bound:
            return dtype
    return np.int64
