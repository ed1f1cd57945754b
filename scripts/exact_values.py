"""Test-model weights and inputs made by integer arithmetic: the same bytes on every CPU.

NumPy's ``sin``/``cos``/``exp`` and its matrix products may differ in the last bit between CPUs (SIMD and BLAS
kernels are chosen per CPU), so a weight computed with them could make a model file that regenerates differently
elsewhere. The values here are small multiples of a power of two, computed from integers: exact in float32, and
products and sums of a few of them stay exact too, so the linear layers' references are exact as well.
"""

from __future__ import annotations

import math

import numpy as np

#: The pattern's period (prime, so neighbouring rows and columns do not repeat each other).
PERIOD = 17


def exact_pattern(shape: tuple[int, ...], steps: tuple[int, ...], offset: int, scale: float) -> np.ndarray:
    """float32 ``scale * ((sum_k steps[k] * i_k + offset) mod 17 - 8) / 8`` over the indices ``i`` of ``shape``.

    Parameters
    ----------
    shape : tuple of int
        The array's shape.
    steps : tuple of int
        One integer per axis: how far the pattern moves per index along it.
    offset : int
        Shifts the whole pattern.
    scale : float
        A power of two: the values are multiples of ``scale / 8`` in ``[-scale, scale]``, with both signs.

    Returns
    -------
    numpy.ndarray
        float32, each value exact (no rounding happened anywhere).
    """
    if math.frexp(scale)[0] != 0.5:
        raise ValueError(f"scale must be a power of two, got {scale!r}")
    if len(steps) != len(shape):
        raise ValueError(f"one step per axis: shape {shape}, steps {steps}")
    index = np.indices(shape, dtype=np.int64)
    n = sum((s * i for s, i in zip(steps, index)), np.zeros(shape, dtype=np.int64)) + offset
    return ((n % PERIOD - 8) * (scale / 8)).astype(np.float32)
