"""Shape and stride arithmetic shared by export, import, copies and views.

Strides here are counted in *elements* (the DLPack convention), never bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["numel", "c_strides", "is_c_contiguous", "extent"]


def numel(shape: Sequence[int]) -> int:
    """Number of elements of ``shape`` (1 for a 0-d tensor)."""
    return math.prod(shape)


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major (C-contiguous) strides in elements for ``shape``."""
    out = [0] * len(shape)
    step = 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = step
        step *= max(shape[i], 1)
    return tuple(out)


def is_c_contiguous(shape: Sequence[int], strides: Sequence[int] | None) -> bool:
    """True when ``strides`` (elements) address ``shape`` in compact row-major order.

    ``None`` strides mean C-contiguous. Strides of extent-1 dimensions are
    ignored, and an empty tensor (an extent of 0) counts as contiguous, the
    same rules NumPy uses.

    Parameters
    ----------
    shape : sequence of int
        Extents.
    strides : sequence of int or None
        Strides in elements, one per extent.
    """
    if strides is None or numel(shape) == 0:
        return True
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def extent(shape: Sequence[int], strides: Sequence[int] | None) -> tuple[int, int]:
    """Element offsets ``(lowest, highest)`` reached from the first element.

    Parameters
    ----------
    shape : sequence of int
        Non-empty tensor shape (every extent >= 1).
    strides : sequence of int or None
        Strides in elements; None for C-contiguous.

    Returns
    -------
    (lo, hi) : tuple of int
        ``lo <= 0 <= hi``; the tensor touches elements ``lo .. hi`` inclusive.
    """
    if strides is None:
        return 0, numel(shape) - 1
    lo = hi = 0
    for n, s in zip(shape, strides):
        reach = (n - 1) * s
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi
