"""A CPU tensor's bytes from Python: :meth:`memoryview`, the buffer protocol (PEP 688) and :meth:`tolist`."""

from __future__ import annotations

import builtins
import ctypes
import struct
from typing import Any

from ..core.abi import DLDataTypeCode
from ..core.errors import ErrorCode, WebDLPackBufferError
from ..core.view import TensorView
from .base import TensorBase

__all__ = ["HostAccess"]

_CTYPES_OF_FORMAT: dict[str, Any] = {
    "?": ctypes.c_bool,
    "b": ctypes.c_int8,
    "B": ctypes.c_uint8,
    "h": ctypes.c_int16,
    "H": ctypes.c_uint16,
    "i": ctypes.c_int32,
    "I": ctypes.c_uint32,
    "q": ctypes.c_int64,
    "Q": ctypes.c_uint64,
    "f": ctypes.c_float,
    "d": ctypes.c_double,
}


#: ``PyBUF_WRITABLE`` (``inspect.BufferFlags.WRITABLE`` on Python >= 3.12).
_PYBUF_WRITABLE = 0x1


class HostAccess(TensorBase):
    """The host-memory half of :class:`~webdlpack.Tensor`: zero-copy views and Python values of CPU data."""

    __slots__ = ()

    # -- host access -------------------------------------------------------------
    def _host_view(self, what: str) -> TensorView:
        view = self._live()
        if not view.device.is_cpu:
            raise WebDLPackBufferError(
                ErrorCode.BAD_DEVICE,
                f"{what} needs host memory; data is on {view.device}",
                field="device",
                value=str(view.device),
                expected="a CPU tensor: x.to_device('cpu') inside runPythonAsync, or await webdlpack.to_cpu_async(x)",
            )
        return view

    def memoryview(self) -> builtins.memoryview:
        """A zero-copy memoryview of the elements (CPU, C-contiguous tensors only).

        The format is the struct-module code of the dtype (``"f"``, ``"q"``,
        ``"?"``, ``"e"`` ...) and the shape is :attr:`shape`; complex tensors
        get one more trailing axis of 2 (real, imaginary) with format ``"f"``
        or ``"d"``, because ``memoryview.cast`` has no complex formats. The view
        is read-only when the tensor is, and keeps the memory alive.

        Raises
        ------
        BufferError
            Non-CPU data; non-contiguous strides (the view is built over
            ctypes memory, which has no strides — use :meth:`copy` first);
            dtypes with no struct format (bfloat16, float8/6/4, vectors).
        """
        view = self._host_view("memoryview()")
        fmt = view.dtype.format
        if fmt is None:
            raise WebDLPackBufferError(
                ErrorCode.UNSUPPORTED,
                "this dtype has no Python buffer format",
                field="dtype",
                value=view.dtype.name,
                expected="bool, int8..uint64, float16/32/64 or complex64/128",
            )
        if not view.contiguous:
            raise WebDLPackBufferError(
                ErrorCode.BAD_STRIDES,
                "memoryview() needs C-contiguous data (the view is built over ctypes "
                "memory, which has no strides); call .copy() first",
                field="strides",
                value=view.strides,
                expected="None (C-contiguous)",
            )
        shape = list(view.shape) + ([2] if view.dtype.code == DLDataTypeCode.kDLComplex else [])
        if view.size == 0:
            mv = self._empty_memoryview(fmt, shape)
        else:
            raw = (ctypes.c_ubyte * view.nbytes).from_address(view.address)
            raw._webdlpack_owner = self._owner  # type: ignore[attr-defined]
            try:
                mv = builtins.memoryview(raw).cast("B").cast(fmt, shape)  # type: ignore[call-overload]  # fmt is a runtime format
            except ValueError:  # 'e' (float16) casts arrived in Python 3.12
                raise WebDLPackBufferError(
                    ErrorCode.UNSUPPORTED,
                    f"this Python cannot make a memoryview with format {fmt!r}",
                    field="dtype",
                    value=view.dtype.name,
                    expected="Python >= 3.12 for float16; or use tolist()",
                ) from None
        return mv.toreadonly() if view.read_only else mv

    def __buffer__(self, flags: int, /) -> builtins.memoryview:
        """The buffer protocol (PEP 688, Python >= 3.12): ``memoryview(t)`` gives :meth:`memoryview`.

        The view keeps the memory alive until it is released, even after
        :meth:`dispose`. On Python 3.11 the interpreter never calls this
        (``memoryview(t)`` raises TypeError there); use ``t.memoryview()``.

        Parameters
        ----------
        flags : int
            The consumer's ``inspect.BufferFlags``.

        Returns
        -------
        memoryview

        Raises
        ------
        BufferError
            A writable buffer asked of a read-only tensor (``BAD_FLAGS``,
            field ``flags``), or anything :meth:`memoryview` refuses.
        """
        if flags & _PYBUF_WRITABLE and self._live().read_only:
            raise WebDLPackBufferError(
                ErrorCode.BAD_FLAGS,
                "a writable buffer was asked of a read-only tensor",
                field="flags",
                value=flags,
                expected="a read-only request (no BufferFlags.WRITABLE), or t.copy() for writable memory",
            )
        return self.memoryview()

    def __release_buffer__(self, buffer: builtins.memoryview, /) -> None:
        """End a buffer :meth:`__buffer__` gave (PEP 688): the memory is no longer held through it."""
        buffer.release()

    @staticmethod
    def _empty_memoryview(fmt: str, shape: list[int]) -> builtins.memoryview:
        if fmt in _CTYPES_OF_FORMAT:
            ctype = _CTYPES_OF_FORMAT[fmt]
            for n in reversed(shape):
                ctype = ctype * n
            return builtins.memoryview(ctype())
        if len(shape) == 1:
            try:
                empty: builtins.memoryview = builtins.memoryview(b"").cast(fmt)  # type: ignore[call-overload]  # fmt is a runtime format
                return empty
            except ValueError:  # 'e' (float16) casts arrived in Python 3.12
                pass
        raise WebDLPackBufferError(
            ErrorCode.UNSUPPORTED,
            "Python cannot make an empty multi-dimensional memoryview of this dtype",
            field="shape",
            value=tuple(shape),
            expected="a non-empty tensor or ndim <= 1",
        )

    def tolist(self) -> Any:
        """The elements as nested Python lists (a scalar for a 0-d tensor).

        Works for any strides. bool → bool, integers → int, floats (including
        float16 and bfloat16) → float, complex → complex.

        Raises
        ------
        BufferError
            Non-CPU data or a dtype Python has no scalar for (float8/6/4, vectors).
        """
        view = self._host_view("tolist()")
        dt = view.dtype
        if dt.name == "bfloat16":

            def read(buf: bytes, off: int) -> Any:
                return struct.unpack("<f", b"\0\0" + buf[off : off + 2])[0]
        elif dt.format is None:
            raise WebDLPackBufferError(
                ErrorCode.UNSUPPORTED,
                "this dtype has no Python scalar type",
                field="dtype",
                value=dt.name,
                expected="bool, integer, float or complex dtypes",
            )
        elif dt.code == DLDataTypeCode.kDLComplex:
            part = struct.Struct("<" + dt.format + dt.format)

            def read(buf: bytes, off: int) -> Any:
                re, im = part.unpack_from(buf, off)
                return complex(re, im)
        else:
            one = struct.Struct("<" + dt.format)

            def read(buf: bytes, off: int) -> Any:
                return one.unpack_from(buf, off)[0]

        lo, hi = view.byte_span()
        buf = ctypes.string_at(view.address + lo, hi - lo) if hi > lo else b""
        strides = [s * dt.itemsize for s in view.full_strides]

        def build(dim: int, off: int) -> Any:
            if dim == view.ndim:
                return read(buf, off - lo)
            return [build(dim + 1, off + i * strides[dim]) for i in range(view.shape[dim])]

        return build(0, 0)
