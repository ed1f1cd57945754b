"""``TensorView``: the plain-Python description of a tensor's bytes (no ownership)."""

from __future__ import annotations

import dataclasses
import functools

from .abi import FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED, FLAG_READ_ONLY
from .device import Device
from .dtype import DType
from .layout import c_strides, extent, is_c_contiguous, numel

__all__ = ["TensorView"]


@dataclasses.dataclass(frozen=True)
class TensorView:
    """Where a tensor's elements are and how to walk them.

    Attributes
    ----------
    data : int
        Base address (CPU) or GPU pointer (WebGPU); 0 only for empty tensors.
    byte_offset : int
        Bytes from ``data`` to the first element.
    shape : tuple of int
    strides : tuple of int or None
        Strides in elements; None when C-contiguous (normalised on creation).
    dtype : DType
    device : Device
    flags : int
        DLPack flag bits (``FLAG_READ_ONLY``, ``FLAG_IS_COPIED``, ...).
    """

    data: int
    byte_offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    dtype: DType
    device: Device
    flags: int = 0

    def __post_init__(self) -> None:
        if self.strides is not None and is_c_contiguous(self.shape, self.strides):
            object.__setattr__(self, "strides", None)

    @classmethod
    def checked(
        cls,
        data: int,
        byte_offset: int,
        shape: tuple[int, ...],
        strides: tuple[int, ...] | None,
        dtype: DType,
        device: Device,
        flags: int,
    ) -> TensorView:
        """Make a view from fields the caller already validated and normalised.

        ``strides`` must already be None when C-contiguous (what ``__post_init__``
        would do); the import path uses this to skip the dataclass machinery.
        """
        self = object.__new__(cls)
        self.__dict__.update(
            data=data, byte_offset=byte_offset, shape=shape, strides=strides, dtype=dtype, device=device, flags=flags
        )
        return self

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @functools.cached_property
    def size(self) -> int:
        """Number of elements (computed once: a view never changes)."""
        return numel(self.shape)

    @functools.cached_property
    def nbytes(self) -> int:
        """Bytes the elements take (packed sub-byte types round up to whole bytes); computed once."""
        return self.dtype.storage_bytes(self.size, bool(self.flags & FLAG_IS_SUBBYTE_TYPE_PADDED))

    @property
    def contiguous(self) -> bool:
        """True when the elements are compact and row-major."""
        return self.strides is None

    @property
    def full_strides(self) -> tuple[int, ...]:
        """Strides in elements, computed for C-contiguous views."""
        return self.strides if self.strides is not None else c_strides(self.shape)

    @property
    def address(self) -> int:
        """Address of the first element: ``data + byte_offset``."""
        return self.data + self.byte_offset

    @property
    def read_only(self) -> bool:
        """True when ``FLAG_READ_ONLY`` is set."""
        return bool(self.flags & FLAG_READ_ONLY)

    @property
    def is_copied(self) -> bool:
        """True when ``FLAG_IS_COPIED`` is set."""
        return bool(self.flags & FLAG_IS_COPIED)

    def byte_span(self) -> tuple[int, int]:
        """Byte offsets ``(lo, hi_exclusive)`` from the first element that the elements touch.

        ``(0, 0)`` for an empty tensor, ``(0, nbytes)`` for a C-contiguous one
        (bit-packed sub-byte elements too; those are never strided).
        """
        if self.size == 0:
            return 0, 0
        if self.strides is None:
            return 0, self.nbytes
        lo, hi = extent(self.shape, self.strides)
        item = self.dtype.itemsize
        return lo * item, (hi + 1) * item
