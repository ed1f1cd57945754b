"""Read host memory by address with the ``struct`` module, without ctypes objects.

Decoding a DLPack struct field by field through ctypes costs a foreign-object
access per field; one ``struct.unpack_from`` over a memoryview that spans the
address space reads a whole struct at once. The formats below use native
(``@``) alignment, which follows the C layout of the host exactly like the
ctypes mirror in :mod:`webdlpack.core.abi` does (checked at import).

Addresses the memory-wide view cannot reach (above ``sys.maxsize``, e.g. past
2 GiB in wasm32) are read through a small ctypes array instead.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from typing import Any

from .abi import DLManagedTensor, DLManagedTensorVersioned, DLTensor

__all__ = ["MANAGED_VERSIONED", "MANAGED_LEGACY", "POINTER_PAIR", "int64_array", "unpack_at"]

_SPAN = sys.maxsize
#: Every byte address below ``sys.maxsize``, as unsigned bytes.
MEMORY = memoryview((ctypes.c_ubyte * _SPAN).from_address(0))

_TENSOR = "PiiiBBHPPQ"  # data, device_type, device_id, ndim, code, bits, lanes, shape, strides, byte_offset
#: ``DLManagedTensorVersioned``: major, minor, manager_ctx, deleter, flags, then the DLTensor fields.
MANAGED_VERSIONED = struct.Struct("@IIPPQ" + _TENSOR)
#: Legacy ``DLManagedTensor``: the DLTensor fields, then manager_ctx and deleter.
MANAGED_LEGACY = struct.Struct("@" + _TENSOR + "PP")
#: The adjacent ``shape`` and ``strides`` pointers of a DLTensor.
POINTER_PAIR = struct.Struct("@PP")

if (
    MANAGED_VERSIONED.size != ctypes.sizeof(DLManagedTensorVersioned)
    or MANAGED_LEGACY.size != ctypes.sizeof(DLManagedTensor)
    or DLTensor.strides.offset != DLTensor.shape.offset + ctypes.sizeof(ctypes.c_void_p)
):  # pragma: no cover - a host whose C layout differs from what struct computes
    raise ImportError("webdlpack: struct formats do not match the ctypes DLPack layout on this host")

_INT64_ARRAYS: dict[int, struct.Struct] = {}


def int64_array(n: int) -> struct.Struct:
    """The (cached) native ``struct.Struct`` of ``n`` int64 values."""
    s = _INT64_ARRAYS.get(n)
    if s is None:
        s = _INT64_ARRAYS[n] = struct.Struct(f"@{n}q")
    return s


def unpack_at(s: struct.Struct, address: int) -> tuple[Any, ...]:
    """``s.unpack`` of the ``s.size`` bytes at host ``address``.

    The caller guarantees the bytes are readable (as with ``ctypes.from_address``).

    Parameters
    ----------
    s : struct.Struct
        The layout to read (native alignment).
    address : int
        Host address of the first byte.

    Returns
    -------
    tuple
        The unpacked fields.
    """
    if address + s.size <= _SPAN:
        return s.unpack_from(MEMORY, address)
    return s.unpack_from((ctypes.c_ubyte * s.size).from_address(address))
