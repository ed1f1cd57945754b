"""``webdlpack.Tensor``: a DLPack tensor in Python, exporter and importer of the protocol."""

from __future__ import annotations

import builtins
import ctypes
import struct
from typing import Any, NamedTuple, NoReturn

from ._abi import DLPACK_MAJOR_VERSION, FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED, DLDataTypeCode, DLDeviceType
from ._device import Device, device as parse_device
from ._dtype import DType
from ._errors import ErrorCode, WebDLPackBufferError, WebDLPackTypeError, WebDLPackValueError
from ._export import ExportTemplate, export_template, make_capsule
from ._memory import alloc, copy_view
from ._nocopy import NotCopyable, raise_not_copyable
from ._transfer import check_copy, target_device
from ._scope import _OPEN as _OPEN_SCOPES
from ._scope import track as track_in_scope
from ._view import TensorView

__all__ = ["Tensor", "TensorFlags"]


class TensorFlags(NamedTuple):
    """The DLPack flags of a tensor.

    Attributes
    ----------
    read_only : bool
        Consumers must not write (``DLPACK_FLAG_BITMASK_READ_ONLY``).
    is_copied : bool
        The producer made a copy for this exchange (``DLPACK_FLAG_BITMASK_IS_COPIED``).
    """

    read_only: bool
    is_copied: bool


_CTYPES_OF_FORMAT: dict[str, Any] = {
    "?": ctypes.c_bool, "b": ctypes.c_int8, "B": ctypes.c_uint8, "h": ctypes.c_int16, "H": ctypes.c_uint16,
    "i": ctypes.c_int32, "I": ctypes.c_uint32, "q": ctypes.c_int64, "Q": ctypes.c_uint64,
    "f": ctypes.c_float, "d": ctypes.c_double,
}


def _want_versioned(max_version: Any) -> bool:
    if max_version is None:
        return False
    if (
        not isinstance(max_version, tuple)
        or len(max_version) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in max_version)
    ):
        raise WebDLPackValueError(ErrorCode.INVALID_ARGUMENT, "max_version must be a (major, minor) tuple",
                                  field="max_version", value=max_version, expected="None or (int, int), e.g. (1, 1)")
    # Same major (or newer consumer): our 1.1 struct. An older major: the legacy struct.
    return bool(max_version[0] >= DLPACK_MAJOR_VERSION)


def _parse_dl_device(dl_device: Any) -> Device:
    if not isinstance(dl_device, tuple) or len(dl_device) != 2:
        raise WebDLPackValueError(ErrorCode.BAD_DEVICE, "dl_device must be a (device_type, device_id) tuple",
                                  field="dl_device", value=dl_device, expected="a tuple like __dlpack_device__() returns")
    try:
        return parse_device(dl_device)
    except WebDLPackValueError as err:
        raise WebDLPackBufferError(ErrorCode.BAD_DEVICE, "cannot export to this device", field="dl_device",
                                   value=dl_device, expected="this tensor's own device or (1, 0) for CPU") from err


#: ``PyBUF_WRITABLE`` (``inspect.BufferFlags.WRITABLE`` on Python >= 3.12).
_PYBUF_WRITABLE = 0x1


class Tensor(NotCopyable):
    """A tensor whose bytes live in host (wasm) memory or on a WebGPU device.

    Tensors are made by :func:`webdlpack.empty`, :func:`webdlpack.zeros`,
    :func:`webdlpack.from_buffer` and :func:`webdlpack.from_dlpack`, not by
    calling the class. A tensor implements the array API DLPack protocol
    (``__dlpack__`` / ``__dlpack_device__``), so ``numpy.from_dlpack(t)``
    shares its memory.

    Notes
    -----
    Strides are counted in elements and :attr:`strides` is ``None`` for a
    C-contiguous tensor (the DLPack convention). :meth:`dispose` (or leaving a
    ``with`` block) drops this tensor's hold on the memory; memory still used by
    an export or a memoryview stays valid until that user lets go.

    A tensor is a view of memory it shares: ``copy.copy(t)`` is ``t`` itself,
    ``copy.deepcopy(t)`` is :meth:`copy` (new memory, on the same device), and
    pickling raises :class:`~webdlpack.WebDLPackTypeError` (the memory is
    named by address; pickle ``t.tolist()`` or ``bytes(t.memoryview())``).

    On Python >= 3.12 (Pyodide) a CPU tensor has the buffer protocol:
    ``memoryview(t)`` is :meth:`memoryview`, with the same rules. On 3.11
    ``memoryview(t)`` raises TypeError (a Python class cannot export a buffer
    there); call ``t.memoryview()``.
    """

    __slots__ = ("_view", "_owner", "_templates", "__weakref__")

    _view: TensorView | None
    _owner: Any
    _templates: list[Any] | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise WebDLPackTypeError(ErrorCode.INVALID_ARGUMENT, "Tensor cannot be constructed directly",
                                 expected="webdlpack.empty, zeros, from_buffer or from_dlpack")

    @classmethod
    def _wrap(cls, view: TensorView, owner: Any) -> Tensor:
        self = object.__new__(cls)
        self._view = view
        self._owner = owner
        self._templates = None
        if _OPEN_SCOPES.get():
            track_in_scope(self)
        return self

    # -- state -------------------------------------------------------------
    def _live(self) -> TensorView:
        view = self._view
        if view is None:
            raise WebDLPackValueError(ErrorCode.DISPOSED, "tensor was disposed", field="tensor",
                                      expected="a tensor that was not disposed")
        return view

    @property
    def disposed(self) -> bool:
        """True after :meth:`dispose`."""
        return self._view is None

    def dispose(self) -> None:
        """Drop this tensor's hold on its memory; safe to call twice.

        An imported tensor's producer deleter runs now, unless an export or a
        memoryview of this tensor still uses the memory (then it runs when the
        last of them is released).
        """
        self._view = None
        self._owner = None
        self._templates = None

    def __enter__(self) -> Tensor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.dispose()

    # -- description ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """Extents, one per dimension."""
        return self._live().shape

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._live().ndim

    @property
    def size(self) -> int:
        """Number of elements."""
        return self._live().size

    @property
    def dtype(self) -> DType:
        """Element type."""
        return self._live().dtype

    @property
    def device(self) -> Device:
        """Where the data lives (``str(t.device)`` is ``"cpu"`` or ``"webgpu:0"``)."""
        return self._live().device

    @property
    def strides(self) -> tuple[int, ...] | None:
        """Strides in elements, or None when the tensor is C-contiguous."""
        return self._live().strides

    @property
    def byte_offset(self) -> int:
        """Bytes from :attr:`data_ptr` to the first element."""
        return self._live().byte_offset

    @property
    def data_ptr(self) -> int:
        """Base address (CPU: a host/wasm address; WebGPU: a GPU pointer). Unsigned."""
        return self._live().data

    @property
    def nbytes(self) -> int:
        """Bytes the elements take (``size * itemsize``)."""
        return self._live().nbytes

    @property
    def flags(self) -> TensorFlags:
        """The tensor's DLPack flags (read_only, is_copied)."""
        view = self._live()
        return TensorFlags(view.read_only, view.is_copied)

    def __repr__(self) -> str:
        if self._view is None:
            return "webdlpack.Tensor(<disposed>)"
        v = self._view
        extra = "" if v.strides is None else f", strides={v.strides}"
        ro = ", read_only=True" if v.read_only else ""
        return f"webdlpack.Tensor(shape={v.shape}, dtype={v.dtype.name}, device={v.device}{extra}{ro})"

    # -- copying -------------------------------------------------------------------
    def __copy__(self) -> Tensor:
        """``copy.copy(t)``: ``t`` itself — a tensor is a view, and a shallow copy would share the same memory."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """``copy.deepcopy(t)``: :meth:`copy` — new memory on the same device with the same values.

        A WebGPU tensor is copied on the GPU (contiguous tensors only; a
        strided one raises ``UNSUPPORTED`` saying how to copy it). The copy is
        writable even when ``t`` is read-only.
        """
        copied = self.copy()
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        """Refuse pickling: the tensor names memory by address (see :meth:`__reduce__`)."""
        self.__reduce__()

    def __reduce__(self) -> NoReturn:
        """Refuse pickling with :class:`~webdlpack.WebDLPackTypeError` (``INVALID_ARGUMENT``, field ``tensor``).

        Raises
        ------
        WebDLPackTypeError
            Always; pickle ``t.tolist()`` or ``bytes(t.memoryview())`` instead.
        """
        raise_not_copyable(self, "pickled", field="tensor",
                           expected="copy to bytes first, e.g. t.tolist() / bytes(t.memoryview())")

    # -- DLPack protocol ---------------------------------------------------------
    def _template(self, view: TensorView, versioned: bool) -> ExportTemplate:
        """The cached export template of this tensor's own ``view`` (built on first use)."""
        cache = self._templates
        if cache is None or cache[0] is not view:
            cache = self._templates = [view, None, None]
        template: ExportTemplate | None = cache[1 + versioned]
        if template is None:
            template = cache[1 + versioned] = ExportTemplate(view, versioned)
        return template

    def _export(self, versioned: bool = True) -> int:
        """Export this tensor (as it is) as a new managed struct; returns its address.

        The receiver must call the deleter once; until then the memory stays alive.
        """
        view = self._view
        cache = self._templates
        if view is not None and cache is not None and cache[0] is view:
            template = cache[1 + versioned]
            if template is not None:  # the common case: one lookup, no further calls
                return export_template(template, self._owner)
        view = self._live()
        return export_template(self._template(view, versioned), self._owner)

    def __dlpack_device__(self) -> tuple[DLDeviceType, int]:
        """``(device_type, device_id)`` of the data, e.g. ``(DLDeviceType.kDLCPU, 0)``."""
        return self._live().device.to_dlpack()

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[Any, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """Export the tensor as a new DLPack capsule (array API standard, v2023.12).

        Parameters
        ----------
        stream : None or -1
            The consumer's stream on ``dl_device`` (see docs/stream-semantics.md).
            None: the producer's default — for WebGPU the device's one queue,
            where this tensor's writes were already submitted (submission order
            is exchange order), so nothing waits. -1: no synchronization, the
            same here. The CPU has no streams. Other values raise ValueError
            (``INVALID_ARGUMENT``, field ``stream``).
        max_version : (int, int) or None
            Highest DLPack version the consumer understands. None or a major
            below 1 gives a legacy ``"dltensor"`` capsule; otherwise a
            ``"dltensor_versioned"`` capsule holding DLPack 1.1.
        dl_device : (int, int) or None
            Device the consumer wants; None means this tensor's device.
            ``(1, 0)`` for a WebGPU tensor reads it back into the wasm heap
            (blocking through JSPI: only from code entered with
            ``runPythonAsync``; else use ``await webdlpack.to_cpu_async(x)``);
            ``(15, N)`` for a CPU tensor uploads it.
        copy : bool or None
            True: always copy (the struct has ``IS_COPIED``). False: never copy
            (another ``dl_device`` is then a ``BufferError``). None: copy only if
            needed, e.g. to change device (as the array API standard allows).

        Returns
        -------
        PyCapsule
            Consume it once; an unconsumed capsule frees its struct when collected.

        Raises
        ------
        ValueError
            ``stream`` is neither None nor -1, or ``max_version`` / ``dl_device`` is malformed.
        TypeError
            ``copy`` is not None, True or False (``INVALID_ARGUMENT``, field ``copy``).
        BufferError
            A device this tensor cannot be exported to, a copy required while
            ``copy=False`` (code ``COPY_REQUIRED``), or a read-only tensor asked
            for as a legacy capsule (DLPack 0.x cannot mark read-only data).
        """
        view = self._live()
        if copy is not None and copy is not True and copy is not False:
            check_copy(copy)
        versioned = _want_versioned(max_version)
        target = view.device if dl_device is None else _parse_dl_device(dl_device)
        if stream is not None:
            from ._transfer import check_stream

            check_stream(stream, target)
        owner: Any = self._owner
        if target != view.device:
            from ._transfer import move_view, refuse_copy

            if copy is False:
                raise refuse_copy(view.device, target, "dl_device")
            # copy=None or True: the array API lets (None) or makes (True) the producer copy across devices.
            view, owner = move_view(view, target)
        elif copy:
            view, owner = self._copy(view)
        elif not versioned and view.read_only:
            raise WebDLPackBufferError(ErrorCode.UNSUPPORTED,
                                       "a read-only tensor cannot be exported as a legacy capsule "
                                       "(DLPack 0.x cannot mark data read-only)",
                                       field="max_version", value=max_version, expected="(1, 0) or newer, or copy=True")
        else:
            return make_capsule(view, owner, versioned=versioned, template=self._template(view, versioned))
        return make_capsule(view, owner, versioned=versioned)

    @staticmethod
    def _copy(view: TensorView) -> tuple[TensorView, Any]:
        from ._transfer import copy_view_on_device

        return copy_view_on_device(view)

    def copy(self) -> Tensor:
        """A new C-contiguous, writable tensor on the same device with the same values (``is_copied`` set).

        A WebGPU tensor is copied on the GPU (queued now; contiguous tensors only).
        """
        view, owner = self._copy(self._live())
        return Tensor._wrap(view, owner)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        """This tensor on ``device`` (array API): ``self`` if already there, else a copy.

        Parameters
        ----------
        device : str or Device or tuple
            ``"cpu"`` or ``"webgpu:N"``; another device raises ValueError
            (``BAD_DEVICE``) unless it is this tensor's own.
        stream : None or -1
            As for :meth:`__dlpack__`: None (the device queue; nothing waits) or -1
            (no synchronization); anything else raises ValueError naming ``stream``.

        Returns
        -------
        Tensor
            WebGPU → CPU blocks through JSPI: call it from code entered with
            ``runPythonAsync``, or use ``await webdlpack.to_cpu_async(x)``.
        """
        view = self._live()
        target = parse_device(device)
        target_device(target, view.device)  # refuses devices webdlpack cannot move data to
        if stream is not None:
            from ._transfer import check_stream

            check_stream(stream, target)
        if target == view.device:
            return self
        from ._transfer import move_view

        moved, owner = move_view(view, target)
        return Tensor._wrap(moved, owner)

    # -- host access -------------------------------------------------------------
    def _host_view(self, what: str) -> TensorView:
        view = self._live()
        if not view.device.is_cpu:
            raise WebDLPackBufferError(ErrorCode.BAD_DEVICE, f"{what} needs host memory; data is on {view.device}",
                                       field="device", value=str(view.device),
                                       expected="a CPU tensor: x.to_device('cpu') inside runPythonAsync, "
                                                "or await webdlpack.to_cpu_async(x)")
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
            raise WebDLPackBufferError(ErrorCode.UNSUPPORTED, "this dtype has no Python buffer format",
                                       field="dtype", value=view.dtype.name,
                                       expected="bool, int8..uint64, float16/32/64 or complex64/128")
        if not view.contiguous:
            raise WebDLPackBufferError(ErrorCode.BAD_STRIDES,
                                       "memoryview() needs C-contiguous data (the view is built over ctypes "
                                       "memory, which has no strides); call .copy() first",
                                       field="strides", value=view.strides, expected="None (C-contiguous)")
        shape = list(view.shape) + ([2] if view.dtype.code == DLDataTypeCode.kDLComplex else [])
        if view.size == 0:
            mv = self._empty_memoryview(fmt, shape)
        else:
            raw = (ctypes.c_ubyte * view.nbytes).from_address(view.address)
            raw._webdlpack_owner = self._owner  # type: ignore[attr-defined]
            try:
                mv = builtins.memoryview(raw).cast("B").cast(fmt, shape)  # type: ignore[call-overload]  # fmt is a runtime format
            except ValueError:  # 'e' (float16) casts arrived in Python 3.12
                raise WebDLPackBufferError(ErrorCode.UNSUPPORTED,
                                           f"this Python cannot make a memoryview with format {fmt!r}",
                                           field="dtype", value=view.dtype.name,
                                           expected="Python >= 3.12 for float16; or use tolist()") from None
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
            raise WebDLPackBufferError(ErrorCode.BAD_FLAGS, "a writable buffer was asked of a read-only tensor",
                                       field="flags", value=flags,
                                       expected="a read-only request (no BufferFlags.WRITABLE), or t.copy() "
                                                "for writable memory")
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
        raise WebDLPackBufferError(ErrorCode.UNSUPPORTED,
                                   "Python cannot make an empty multi-dimensional memoryview of this dtype",
                                   field="shape", value=tuple(shape), expected="a non-empty tensor or ndim <= 1")

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
                return struct.unpack("<f", b"\0\0" + buf[off:off + 2])[0]
        elif dt.format is None:
            raise WebDLPackBufferError(ErrorCode.UNSUPPORTED, "this dtype has no Python scalar type", field="dtype",
                                       value=dt.name, expected="bool, integer, float or complex dtypes")
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
