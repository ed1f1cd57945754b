"""Host memory: allocation, buffer addresses and strided copies, all through ctypes.

On CPython this is process memory; in Pyodide it is the wasm linear memory,
so every address here is also a valid offset into JavaScript's ``HEAPU8``.
"""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

from .errors import ErrorCode, WebDLPackBufferError, WebDLPackMemoryError
from .nocopy import NotCopyable
from .view import TensorView

__all__ = ["ALIGNMENT", "alloc", "buffer_address", "copy_view", "HostBlock"]


#: Alignment of every block :func:`alloc` makes: DLPack's recommended 256 bytes (JAX wants at least 64 to import
#: without copying).
ALIGNMENT = 256


class HostBlock(NotCopyable):
    """A block of host memory owned by Python, :data:`ALIGNMENT`-byte aligned and zero-filled.

    Parameters
    ----------
    nbytes : int
        Requested size; at least 8 bytes are allocated so the address is never NULL.

    Raises
    ------
    WebDLPackMemoryError
        ``OUT_OF_MEMORY`` (field ``nbytes``) when the memory cannot be allocated.

    Attributes
    ----------
    address : int
        Address of the first byte.
    nbytes : int
        The requested size.

    Notes
    -----
    Not copyable or picklable (a copy would name this block's address after
    it is freed); copy the tensor instead.
    """

    __slots__ = ("_buf", "address", "nbytes", "__weakref__")

    def __init__(self, nbytes: int) -> None:
        words = max(1, (nbytes + 7) // 8) + (ALIGNMENT - 8) // 8  # ctypes arrays of uint64 are 8-aligned
        try:
            self._buf = (ctypes.c_uint64 * words)()
        except (MemoryError, OverflowError):  # OverflowError: ctypes "array too large" for this address space
            raise WebDLPackMemoryError(
                ErrorCode.OUT_OF_MEMORY,
                f"cannot allocate {nbytes} bytes of host memory",
                field="nbytes",
                value=nbytes,
                expected="a size this process can allocate",
            ) from None
        self.address: int = -(-ctypes.addressof(self._buf) // ALIGNMENT) * ALIGNMENT
        self.nbytes = nbytes

    def __repr__(self) -> str:
        return f"<HostBlock {self.nbytes} bytes at {self.address:#x}>"


def alloc(nbytes: int) -> HostBlock:
    """Allocate ``nbytes`` of zeroed host memory (freed when the block is collected)."""
    return HostBlock(nbytes)


class _PyBuffer(ctypes.Structure):
    # Py_buffer from Include/pybuffer.h (stable ABI since 3.11).
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("suboffsets", ctypes.c_void_p),
        ("internal", ctypes.c_void_p),
    ]


_GetBuffer = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int)(
    ("PyObject_GetBuffer", ctypes.pythonapi)
)
_ReleaseBuffer = ctypes.PYFUNCTYPE(None, ctypes.POINTER(_PyBuffer))(("PyBuffer_Release", ctypes.pythonapi))
_PyBUF_SIMPLE = 0


def buffer_address(view: memoryview) -> int:
    """Address of the first byte of a C-contiguous memoryview (read-only ones too).

    The caller keeps ``view`` alive for as long as it uses the address; a live
    memoryview also stops a ``bytearray`` from being resized under it.
    """
    pybuf = _PyBuffer()
    _GetBuffer(view, ctypes.byref(pybuf), _PyBUF_SIMPLE)
    try:
        return int(pybuf.buf or 0)
    finally:
        _ReleaseBuffer(ctypes.byref(pybuf))


def copy_view(src: TensorView, dst_address: int) -> None:
    """Copy the elements of CPU view ``src`` to ``dst_address`` in C-contiguous order.

    Works for any strides (negative too); contiguous runs use one ``memmove``.

    Parameters
    ----------
    src : TensorView
        A checked CPU view (every byte it reaches is readable).
    dst_address : int
        Where to write ``src.nbytes`` bytes.

    Raises
    ------
    WebDLPackBufferError
        ``src`` is not on the CPU (code ``BAD_DEVICE``).
    """
    if not src.device.is_cpu:
        raise WebDLPackBufferError(
            ErrorCode.BAD_DEVICE,
            "only CPU tensors can be copied on the host",
            field="device",
            value=str(src.device),
            expected="cpu",
        )
    if src.size == 0:
        return
    item = src.dtype.itemsize
    if src.contiguous:
        ctypes.memmove(dst_address, src.address, src.nbytes)
        return
    shape, strides = src.shape, src.full_strides
    last_n, last_s = shape[-1], strides[-1]
    run = last_n * item if last_s == 1 else item
    out = dst_address
    outer: Any = itertools.product(*(range(n) for n in shape[:-1]))
    for idx in outer:
        base = src.address + sum(i * s for i, s in zip(idx, strides)) * item
        if last_s == 1:
            ctypes.memmove(out, base, run)
            out += run
        else:
            for j in range(last_n):
                ctypes.memmove(out, base + j * last_s * item, item)
                out += item
