"""Read a ``DLTensor`` from memory into a :class:`TensorView`, checking every field.

The rules are spec/validation-rules.json, the one rule set the C validator
and the JS codec are tested against too (tests/py/test_validation_rules.py
runs it here): ndim range, NULL shape, negative extents, sizes and offsets
within 2^53 - 1, unknown dtype codes and bad bit widths, unknown flag bits,
NULL data with a nonzero size; and, before anything is read, that the shape
and strides arrays and (CPU) every byte of the tensor lie inside memory —
in Pyodide the wasm memory, whose end a read must never pass
(:mod:`webdlpack.core.bounds`). Every failure is a
:class:`~webdlpack.core.errors.WebDLPackValueError` naming the field and the value.
"""

from __future__ import annotations

from .abi import FLAG_IS_SUBBYTE_TYPE_PADDED, KNOWN_FLAGS, MAX_NDIM, DLDeviceType
from .bounds import check_readable, end_seen, memory_end
from .device import Device
from .dtype import DType, check_dtype
from .errors import ErrorCode, WebDLPackValueError
from .layout import is_c_contiguous
from .raw import int64_array, unpack_at
from .view import TensorView

__all__ = ["SAFE_MAX", "check_flags", "read_dltensor_fields"]

#: Every size, offset and stride stays at most 2^53 - 1, the range the JS codec holds exactly
#: (spec/validation-rules.json: one rule set for C, JS and Python).
SAFE_MAX = (1 << 53) - 1


def check_flags(flags: int, field: str = "DLManagedTensorVersioned.flags") -> None:
    """Raise ``BAD_FLAGS`` when ``flags`` has a bit DLPack 1.1 does not define.

    Parameters
    ----------
    flags : int
        A managed struct's ``flags``.
    field : str, default "DLManagedTensorVersioned.flags"
        The field named in the error.

    Raises
    ------
    WebDLPackValueError
        ``BAD_FLAGS`` with the flags found and the known bits.
    """
    if flags & ~KNOWN_FLAGS:
        raise WebDLPackValueError(
            ErrorCode.BAD_FLAGS,
            "unknown flag bits",
            field=field,
            value=flags,
            expected=f"only bits of {KNOWN_FLAGS:#x} (READ_ONLY, IS_COPIED, IS_SUBBYTE_TYPE_PADDED)",
        )


_DEVICES: dict[tuple[int, int], Device] = {}
_DTYPES: dict[tuple[int, int, int], DType] = {}
_VIEWS: dict[tuple[object, ...], TensorView] = {}  # validated fields -> their view (cleared when full)
_VIEWS_MAX = 256


def _device(dev_type: int, dev_id: int) -> Device:
    """The (cached) Device of a DLDevice, after checking it the first time it is seen."""
    found = _DEVICES.get((dev_type, dev_id))
    if found is not None:
        return found
    if dev_type not in DLDeviceType.__members__.values():
        raise WebDLPackValueError(
            ErrorCode.BAD_DEVICE,
            "unknown device type",
            field="DLTensor.device.device_type",
            value=dev_type,
            expected="a DLDeviceType value (1 = CPU, 15 = WebGPU, ...)",
        )
    if dev_id < 0 or (dev_type == DLDeviceType.kDLCPU and dev_id != 0):
        raise WebDLPackValueError(
            ErrorCode.BAD_DEVICE,
            "bad device id",
            field="DLTensor.device.device_id",
            value=dev_id,
            expected="0 for CPU, >= 0 otherwise",
        )
    if len(_DEVICES) < 256:
        _DEVICES[(dev_type, dev_id)] = found = Device(dev_type, dev_id)
        return found
    return Device(dev_type, dev_id)  # pragma: no cover - more distinct devices than the cache holds


def _dtype(code: int, bits: int, lanes: int) -> DType:
    """The (cached) DType of a DLDataType, after checking it the first time it is seen."""
    found = _DTYPES.get((code, bits, lanes))
    if found is None:
        check_dtype(code, bits, lanes, field="DLTensor.dtype")
        found = DType(code, bits, lanes)
        if len(_DTYPES) < 256:
            _DTYPES[(code, bits, lanes)] = found
    return found


def read_dltensor_fields(
    data: int | None,
    dev_type: int,
    dev_id: int,
    ndim: int,
    code: int,
    bits: int,
    lanes: int,
    shape_ptr: int | None,
    strides_ptr: int | None,
    byte_offset: int,
    flags: int = 0,
) -> TensorView:
    """Validate the fields of a ``DLTensor`` (as read from memory) and describe it as a :class:`TensorView`.

    The shape and strides arrays are read here, from ``shape_ptr`` and
    ``strides_ptr``, once those are known to be usable.

    Parameters
    ----------
    data, dev_type, dev_id, ndim, code, bits, lanes, shape_ptr, strides_ptr, byte_offset : int
        The DLTensor's fields in declaration order (pointers may be None for NULL).
    flags : int
        The managing struct's flags (0 for a legacy tensor); checked here too.

    Returns
    -------
    TensorView

    Raises
    ------
    WebDLPackValueError
        The first field found wrong, with its name and value.
    """
    if flags & ~KNOWN_FLAGS:
        check_flags(flags)
    device = _DEVICES.get((dev_type, dev_id)) or _device(dev_type, dev_id)
    if not 0 <= ndim <= MAX_NDIM:
        raise WebDLPackValueError(
            ErrorCode.BAD_NDIM,
            "ndim out of range",
            field="DLTensor.ndim",
            value=ndim,
            expected=f"0 <= ndim <= {MAX_NDIM}",
        )
    dtype = _DTYPES.get((code, bits, lanes)) or _dtype(code, bits, lanes)
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] | None = None
    if ndim > 0:
        if not shape_ptr:
            raise WebDLPackValueError(
                ErrorCode.NULL_POINTER,
                "shape is NULL but ndim > 0",
                field="DLTensor.shape",
                value=0,
                expected=f"a pointer to {ndim} int64 extents",
            )
        layout = int64_array(ndim)
        check_readable(shape_ptr, layout.size, 8, "DLTensor.shape")
        shape = unpack_at(layout, shape_ptr)
        if strides_ptr:
            check_readable(strides_ptr, layout.size, 8, "DLTensor.strides")
            strides = unpack_at(layout, strides_ptr)
    # The checks below depend only on these values (and on the memory size, which only grows): a tensor seen
    # before (the same one handed over again) gets the view they produced then.
    key = (data, dev_type, dev_id, code, bits, lanes, byte_offset, flags, shape, strides)
    known = _VIEWS.get(key)
    if known is not None:
        return known
    data = data or 0
    view = TensorView.checked(
        data, byte_offset, shape, _checked_strides(shape, strides, dtype, flags, byte_offset), dtype, device, flags
    )
    _check_data(view)
    if len(_VIEWS) >= _VIEWS_MAX:
        _VIEWS.clear()
    _VIEWS[key] = view
    return view


def _too_big(what: str, field: str, value: object) -> WebDLPackValueError:
    return WebDLPackValueError(
        ErrorCode.SIZE_OVERFLOW,
        f"{what} too large",
        field=field,
        value=value,
        expected=f"at most {SAFE_MAX} (2^53 - 1)",
    )


def _checked_strides(
    shape: tuple[int, ...], strides: tuple[int, ...] | None, dtype: DType, flags: int, byte_offset: int
) -> tuple[int, ...] | None:
    """Check shape, strides and byte_offset by spec/validation-rules.json; None when C-contiguous."""
    count = 1
    for i, n in enumerate(shape):
        if n < 0:
            raise WebDLPackValueError(
                ErrorCode.BAD_SHAPE, "negative extent", field=f"DLTensor.shape[{i}]", value=n, expected=">= 0"
            )
        if n > SAFE_MAX:
            raise _too_big("extent", f"DLTensor.shape[{i}]", n)
        count *= n
    if strides is not None:
        for i, s in enumerate(strides):
            if not -SAFE_MAX <= s <= SAFE_MAX:
                raise WebDLPackValueError(
                    ErrorCode.BAD_STRIDES,
                    "stride too large",
                    field=f"DLTensor.strides[{i}]",
                    value=s,
                    expected=f"|stride| <= {SAFE_MAX} (2^53 - 1)",
                )
    if byte_offset > SAFE_MAX:
        raise _too_big("byte_offset", "DLTensor.byte_offset", byte_offset)
    if count > SAFE_MAX:
        raise _too_big("element count", "DLTensor.shape", shape)
    packed = dtype.is_subbyte and not flags & FLAG_IS_SUBBYTE_TYPE_PADDED
    unit = dtype.bits * dtype.lanes if packed else dtype.itemsize  # bits per element when packed, else bytes
    if count * unit > SAFE_MAX:
        raise _too_big("tensor size", "DLTensor.shape", shape)
    contiguous = strides is None or is_c_contiguous(shape, strides)
    if not contiguous and packed:
        raise WebDLPackValueError(
            ErrorCode.BAD_STRIDES,
            "packed sub-byte tensors must be C-contiguous",
            field="DLTensor.strides",
            value=strides,
            expected="NULL or C-contiguous strides",
        )
    if count and not contiguous:
        assert strides is not None
        lo = hi = 0
        for i in range(len(shape) - 1, -1, -1):
            reach = (shape[i] - 1) * strides[i]
            if not -SAFE_MAX <= reach <= SAFE_MAX:
                raise _too_big("(extent - 1) * stride", f"DLTensor.strides[{i}]", strides[i])
            if reach < 0:
                lo += reach
            else:
                hi += reach
            if lo < -SAFE_MAX or hi > SAFE_MAX:
                raise _too_big("element offset", "DLTensor.strides", strides)
        if lo * unit < -SAFE_MAX or (hi + 1) * unit > SAFE_MAX:
            raise _too_big("byte offset", "DLTensor.strides", strides)
    return None if contiguous else strides


def _check_data(view: TensorView) -> None:
    """NULL data for a non-empty tensor (any device); for the CPU, every reachable byte inside memory."""
    count = view.size
    if not count:
        return
    data = view.data
    if not data:
        raise WebDLPackValueError(
            ErrorCode.NULL_POINTER,
            "data is NULL but the tensor is not empty",
            field="DLTensor.data",
            value=0,
            expected="a non-NULL pointer when numel > 0",
        )
    if view.device.type != DLDeviceType.kDLCPU:
        return
    lo_byte, hi_byte = view.byte_span()
    first = data + view.byte_offset
    nbytes = view.nbytes
    seen = end_seen()
    if nbytes <= seen and first + hi_byte <= seen and first + lo_byte >= 0:
        return
    end = memory_end()
    if nbytes > end:
        raise WebDLPackValueError(
            ErrorCode.SIZE_OVERFLOW,
            "tensor is larger than the whole memory",
            field="DLTensor.shape",
            value=view.shape,
            expected=f"size <= memory size {end}",
        )
    if first + lo_byte < 0:
        raise WebDLPackValueError(
            ErrorCode.OUT_OF_BOUNDS,
            "negative strides reach below address 0",
            field="DLTensor.strides",
            value=view.strides,
            expected="every element address >= 0",
        )
    if first + hi_byte > end:
        field = "DLTensor.byte_offset" if data < end <= first else "DLTensor.data"
        raise WebDLPackValueError(
            ErrorCode.OUT_OF_BOUNDS,
            f"tensor bytes [{first + lo_byte:#x}, {first + hi_byte:#x}) lie outside memory",
            field=field,
            value=view.byte_offset if field.endswith("byte_offset") else data,
            expected=f"all bytes inside [0, {end:#x})",
        )
