"""Constructors for CPU tensors: :func:`empty`, :func:`zeros` and :func:`from_buffer`."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ..bridge.gpu import check_webgpu, gpu_empty
from ..core.abi import FLAG_READ_ONLY, MAX_NDIM
from ..core.device import CPU
from ..core.device import device as parse_device
from ..core.dtype import dtype as parse_dtype
from ..core.dtype import dtype_from_format
from ..core.errors import ErrorCode, WebDLPackBufferError, WebDLPackTypeError, WebDLPackValueError
from ..core.layout import numel
from ..core.memory import alloc, buffer_address
from ..core.validate import SAFE_MAX
from ..core.view import TensorView
from ..tensor.tensor import Tensor

__all__ = ["empty", "zeros", "from_buffer", "parse_shape"]

_NOT_EXTENTS = (bool, float, complex, str, bytes, bytearray)


def _extent(n: Any, field: str) -> int:
    """One extent: an integer (``operator.index``), not a bool, float or string, in ``0..INT64_MAX``."""
    try:
        if isinstance(n, _NOT_EXTENTS):
            raise TypeError
        value = operator.index(n)
    except TypeError:
        raise WebDLPackTypeError(
            ErrorCode.BAD_SHAPE,
            "a shape extent must be an integer",
            field=field,
            value=n,
            expected="a non-negative int",
        ) from None
    if value < 0:
        raise WebDLPackValueError(
            ErrorCode.BAD_SHAPE, "negative extent", field=field, value=value, expected="a non-negative int"
        )
    if value > SAFE_MAX:
        raise WebDLPackValueError(
            ErrorCode.SIZE_OVERFLOW,
            "extent larger than any consumer accepts",
            field=field,
            value=value,
            expected=f"0 <= extent <= {SAFE_MAX} (2^53 - 1)",
        )
    return value


def parse_shape(shape: Any) -> tuple[int, ...]:
    """Check a shape argument and return it as a tuple of ints.

    Parameters
    ----------
    shape : int or tuple or list of int
        An int ``n`` means ``(n,)``. Extents are anything with ``__index__``
        (``int``, ``numpy.int64``...), never bool, float or str.

    Returns
    -------
    tuple of int

    Raises
    ------
    WebDLPackTypeError
        ``BAD_SHAPE``: ``shape`` is neither an int nor a tuple/list (a str,
        ``None``, a generator...), field ``shape``; or an extent is not an
        integer (``2.7``, ``nan``, ``inf``, ``True``, ``"3"``), field ``shape[i]``.
    WebDLPackValueError
        ``BAD_NDIM`` for more than 32 dimensions; ``BAD_SHAPE`` for a negative
        extent; ``SIZE_OVERFLOW`` for one above 2^53 - 1 (the codes consumers give).
    """
    if isinstance(shape, (tuple, list)):
        if len(shape) > MAX_NDIM:
            raise WebDLPackValueError(
                ErrorCode.BAD_NDIM,
                "too many dimensions",
                field="shape",
                value=len(shape),
                expected=f"at most {MAX_NDIM} dimensions (what every consumer accepts)",
            )
        return tuple(_extent(n, f"shape[{i}]") for i, n in enumerate(shape))
    if hasattr(shape, "__index__") and not isinstance(shape, _NOT_EXTENTS):
        return (_extent(shape, "shape"),)
    raise WebDLPackTypeError(
        ErrorCode.BAD_SHAPE,
        "shape must be an int or a tuple/list of ints",
        field="shape",
        value=shape,
        expected="e.g. 5 or (2, 3)",
    )


def _new(shape: Any, dtype: Any, device: Any, *, zero: bool) -> Tensor:
    target = CPU if device is None else parse_device(device)
    dims = parse_shape(shape)
    dt = parse_dtype(dtype)
    count = numel(dims)
    nbytes = dt.storage_bytes(count)
    if count > SAFE_MAX or nbytes > SAFE_MAX:
        raise WebDLPackValueError(
            ErrorCode.SIZE_OVERFLOW,
            "tensor larger than any consumer accepts",
            field="shape",
            value=dims,
            expected=f"element count and bytes <= {SAFE_MAX} (2^53 - 1)",
        )
    if target.is_cpu:
        block = alloc(nbytes)
        return Tensor._wrap(TensorView(block.address, 0, dims, None, dt, CPU, 0), block)
    check_webgpu(target)
    view, owner = gpu_empty(dims, dt, target, zero=zero)
    return Tensor._wrap(view, owner)


def empty(shape: int | Sequence[int], dtype: Any = "float32", *, device: Any = None) -> Tensor:
    """A new C-contiguous tensor whose memory the tensor owns.

    Parameters
    ----------
    shape : int or tuple/list of int
        Non-negative integer extents (``operator.index``: ``numpy.int64``
        works; bool, float and str do not).
    dtype : str or DType, default "float32"
    device : None, "cpu" or "webgpu:N"
        ``"webgpu:N"`` allocates a GPU buffer through the page's shared
        context (Pyodide with the webdlpack JS bridge, after
        ``getContext().setup()``); ``data_ptr`` is then its GPU pointer, freed
        exactly once when the tensor and every export of it are released.

    Returns
    -------
    Tensor
        Contents unspecified (CPU: currently zero-filled). CPU memory is
        256-byte aligned (DLPack's recommendation; JAX imports it without copying).

    Raises
    ------
    TypeError
        ``BAD_SHAPE``: a shape that is not an int or a tuple/list of ints
        (field ``shape`` or ``shape[i]``).
    ValueError
        More than 32 dimensions (``BAD_NDIM``), a negative extent
        (``BAD_SHAPE``), an extent, element count or size past 2^53 - 1
        (``SIZE_OVERFLOW``) — refused here with the code a consumer would give —,
        a bad dtype; ``webgpu:N`` where there is no WebGPU
        (``NO_WEBGPU``) or no device N (``UNKNOWN_DEVICE``).
    MemoryError
        ``OUT_OF_MEMORY`` (:class:`~webdlpack.WebDLPackMemoryError`, field
        ``nbytes``): the host memory cannot be allocated.
    """
    return _new(shape, dtype, device, zero=False)


def zeros(shape: int | Sequence[int], dtype: Any = "float32", *, device: Any = None) -> Tensor:
    """A new zero-filled C-contiguous tensor (on WebGPU cleared on the GPU).

    Parameters
    ----------
    shape : int or tuple/list of int
        As for :func:`empty`.
    dtype : str or DType, default "float32"
    device : None, "cpu" or "webgpu:N"
        As for :func:`empty`.

    Returns
    -------
    Tensor
        Every byte zero.

    Raises
    ------
    TypeError, ValueError, MemoryError
        As :func:`empty` raises them.
    """
    return _new(shape, dtype, device, zero=True)


def strided_buffer_error(mv: memoryview, why: str) -> WebDLPackBufferError:
    """BAD_STRIDES for the non-C-contiguous buffer ``mv``: its strides, labelled, and how to get a copy.

    Parameters
    ----------
    mv : memoryview
        The buffer, not C-contiguous.
    why : str
        Why the caller needs contiguous bytes.

    Returns
    -------
    WebDLPackBufferError
        To raise.
    """
    c_strides: list[int] = []
    step = mv.itemsize
    for extent in reversed(mv.shape or ()):
        c_strides.insert(0, step)
        step *= extent
    return WebDLPackBufferError(
        ErrorCode.BAD_STRIDES,
        f"the buffer is not C-contiguous: strides {tuple(mv.strides or ())} (bytes) for shape {tuple(mv.shape or ())} "
        f"of {mv.itemsize}-byte items, where C order has {tuple(c_strides)}; {why}. Copy it into C order first: "
        "webdlpack.asarray(obj) (or asarray(obj, copy=True)) does, as does numpy.ascontiguousarray(obj)",
        field="obj.strides",
        value=tuple(mv.strides or ()),
        expected=f"C-contiguous strides {tuple(c_strides)}, or a copy: webdlpack.asarray(obj)",
    )


def from_buffer(obj: Any, *, dtype: Any = None, shape: Sequence[int] | int | None = None) -> Tensor:
    """Wrap any buffer-protocol object as a CPU tensor, without copying.

    Parameters
    ----------
    obj : buffer
        ``bytearray``, ``array.array``, ``memoryview``, ``bytes``, a NumPy array, ...
        Must be C-contiguous. Read-only buffers (``bytes``) give read-only tensors.
    dtype : str or DType, optional
        Element type; by default read from the buffer's format (``array('f')`` → float32).
    shape : int or tuple/list of int, optional
        By default the buffer's own shape, or 1-D when ``dtype`` changes the
        item size. Checked as for :func:`empty`.

    Returns
    -------
    Tensor
        Keeps ``obj`` alive (and a ``bytearray`` un-resizable) while it or any export lives.

    Raises
    ------
    TypeError
        ``obj`` does not have the buffer protocol.
    BufferError
        A non-contiguous buffer.
    ValueError
        A format with no dtype, or a shape that does not cover the buffer exactly
        (sub-byte dtypes are bit-packed: 12 bytes hold 24 ``float4_e2m1fn``).
    """
    try:
        mv = memoryview(obj)
    except TypeError:
        raise WebDLPackTypeError(
            ErrorCode.INVALID_ARGUMENT,
            "from_buffer() needs an object with the buffer protocol",
            field="obj",
            value=type(obj).__name__,
            expected="a buffer: bytes, bytearray, array.array, memoryview, a NumPy array",
        ) from None
    if not mv.c_contiguous:
        raise strided_buffer_error(mv, "from_buffer() shares the buffer's bytes and so cannot take a strided view")
    native = None
    try:
        native = dtype_from_format(mv.format)
    except WebDLPackValueError:
        if dtype is None:
            raise
    dt = parse_dtype(dtype) if dtype is not None else native
    assert dt is not None
    nbytes = mv.nbytes
    bits = dt.bits * dt.lanes
    if shape is None:
        if dt == native:
            dims: tuple[int, ...] = tuple(mv.shape or ())
        elif dt.is_subbyte:  # packed: as many elements as the bits hold
            dims = ((nbytes * 8) // bits,)
        else:
            if nbytes % dt.itemsize:
                raise WebDLPackValueError(
                    ErrorCode.BAD_SHAPE,
                    "buffer size is not a multiple of the item size",
                    field="obj.nbytes",
                    value=nbytes,
                    expected=f"a multiple of {dt.itemsize}",
                )
            dims = (nbytes // dt.itemsize,)
    else:
        dims = parse_shape(shape)
    if dt.storage_bytes(numel(dims)) != nbytes:
        rule = f"ceil(numel * {bits} / 8)" if dt.is_subbyte else f"numel * {dt.itemsize}"
        raise WebDLPackValueError(
            ErrorCode.BAD_SHAPE,
            "shape and dtype do not cover the buffer exactly",
            field="shape",
            value=dims,
            expected=f"{rule} == {nbytes} bytes",
        )
    address = buffer_address(mv)
    flags = FLAG_READ_ONLY if mv.readonly else 0
    return Tensor._wrap(TensorView(address, 0, dims, None, dt, CPU, flags), mv)
