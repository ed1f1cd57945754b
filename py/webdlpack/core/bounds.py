"""Which addresses may be read: the wasm memory in Pyodide, the whole address space on CPython.

In Pyodide a read past the end of the wasm memory traps, and Pyodide "can no
longer be used" afterwards; so every pointer a caller hands over (a managed
struct, its shape and strides arrays, a CPU tensor's bytes) is checked against
the memory size before anything is read through it — the same checks, codes
and fields as the JS codec (spec/validation-rules.json).

The memory size is asked from emscripten (``emscripten_get_heap_size``) only
when a range does not fit the size seen last: wasm memory never shrinks, so a
range inside the last size is inside the current one, and the common case
costs one comparison.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from .errors import ErrorCode, WebDLPackValueError
from .host import IS_PYODIDE, MAX_ADDRESS

__all__ = ["memory_end", "end_seen", "check_readable"]


def _heap_size_function() -> Callable[[], int] | None:
    """emscripten's ``emscripten_get_heap_size`` (bytes of wasm memory) in Pyodide; None on CPython."""
    if not IS_PYODIDE:
        return None
    fn = ctypes.CDLL(None).emscripten_get_heap_size
    fn.restype = ctypes.c_size_t
    fn.argtypes = []
    return fn


_heap_size = _heap_size_function()
#: One past the highest readable address, as last seen (Pyodide: the wasm memory size; CPython: 2**64).
_end: int = int(_heap_size()) if _heap_size is not None else MAX_ADDRESS + 1


def memory_end() -> int:
    """One past the highest readable address now: the wasm memory size in Pyodide, ``2**POINTER_BITS`` on CPython."""
    global _end
    if _heap_size is not None:
        _end = int(_heap_size())
    return _end


def end_seen() -> int:
    """The memory end as last seen (no call into emscripten): a range below it is readable now."""
    return _end


def check_readable(address: int, size: int, align: int, field: str) -> None:
    """Raise unless ``[address, address + size)`` is non-NULL, ``align``-aligned and inside memory.

    Parameters
    ----------
    address : int
        First byte a caller's pointer names.
    size : int
        Bytes that will be read from it.
    align : int
        Alignment the pointer must have (8 for structs and int64 arrays).
    field : str
        The field the pointer came from, for the error.

    Raises
    ------
    WebDLPackValueError
        ``NULL_POINTER`` (address 0), ``INVALID_POINTER`` (misaligned) or
        ``OUT_OF_BOUNDS`` (past the end of the wasm memory), naming ``field``.
    """
    if address + size <= _end and address and not address % align:
        return
    if not address:
        raise WebDLPackValueError(
            ErrorCode.NULL_POINTER, "pointer is NULL", field=field, value=0, expected="a non-NULL address"
        )
    if address % align:
        raise WebDLPackValueError(
            ErrorCode.INVALID_POINTER,
            f"pointer is not {align}-byte aligned",
            field=field,
            value=address,
            expected=f"a multiple of {align}",
        )
    end = memory_end()
    if address + size > end:
        raise WebDLPackValueError(
            ErrorCode.OUT_OF_BOUNDS,
            f"[{address:#x}, {address + size:#x}) is outside memory",
            field=field,
            value=address,
            expected=f"address + {size} <= memory size {end:#x}",
        )
