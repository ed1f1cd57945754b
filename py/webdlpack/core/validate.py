"""Read a ``DLTensor`` from memory into a :class:`TensorView`, checking every field.

The same checks as the JS codec: ndim range, NULL shape, negative extents,
size overflow, unknown dtype codes and bad bit widths (fp4 must be 4 bits,
fp6 6 bits, fp8 8 bits), unknown flag bits, NULL data with a nonzero size,
and address arithmetic that would leave the pointer range. Every failure is a
:class:`~webdlpack.core.errors.WebDLPackValueError` naming the field and the value.
"""

from __future__ import annotations

from .abi import FLAG_IS_SUBBYTE_TYPE_PADDED, KNOWN_FLAGS, MAX_NDIM, DLDeviceType
from .device import Device
from .dtype import DType, check_dtype
from .errors import ErrorCode, WebDLPackValueError
from .host import MAX_ADDRESS
from .layout import extent, is_c_contiguous
from .raw import int64_array, unpack_at
from .view import TensorView

__all__ = ["check_flags", "read_dltensor_fields"]

_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


def check_flags(flags: int, field: str = "DLManagedTensorVersioned.flags") -> None:
    """Raise ``BAD_FLAGS`` when ``flags`` has a bit DLPack 1.1 does not define."""
    if flags & ~KNOWN_FLAGS:
        raise WebDLPackValueError(ErrorCode.BAD_FLAGS, "unknown flag bits", field=field, value=flags,
                                  expected=f"only bits of {KNOWN_FLAGS:#x} (READ_ONLY, IS_COPIED, IS_SUBBYTE_TYPE_PADDED)")


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
        raise WebDLPackValueError(ErrorCode.BAD_DEVICE, "unknown device type", field="DLTensor.device.device_type",
                                  value=dev_type, expected="a DLDeviceType value (1 = CPU, 15 = WebGPU, ...)")
    if dev_id < 0 or (dev_type == DLDeviceType.kDLCPU and dev_id != 0):
        raise WebDLPackValueError(ErrorCode.BAD_DEVICE, "bad device id", field="DLTensor.device.device_id",
                                  value=dev_id, expected="0 for CPU, >= 0 otherwise")
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
        raise WebDLPackValueError(ErrorCode.BAD_NDIM, "ndim out of range", field="DLTensor.ndim", value=ndim,
                                  expected=f"0 <= ndim <= {MAX_NDIM}")
    dtype = _DTYPES.get((code, bits, lanes)) or _dtype(code, bits, lanes)
    item = dtype.itemsize
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] | None = None
    if ndim > 0:
        if not shape_ptr:
            raise WebDLPackValueError(ErrorCode.NULL_POINTER, "shape is NULL but ndim > 0", field="DLTensor.shape",
                                      value=0, expected=f"a pointer to {ndim} int64 extents")
        layout = int64_array(ndim)
        shape = unpack_at(layout, shape_ptr)
        if strides_ptr:
            strides = unpack_at(layout, strides_ptr)
    # The checks below depend only on these values: a tensor seen before (the
    # same one handed over again) gets the view they produced then.
    key = (data, dev_type, dev_id, code, bits, lanes, byte_offset, flags, shape, strides)
    known = _VIEWS.get(key)
    if known is not None:
        return known
    for i, n in enumerate(shape):
        if n < 0:
            raise WebDLPackValueError(ErrorCode.BAD_SHAPE, "negative extent", field=f"DLTensor.shape[{i}]",
                                      value=n, expected=">= 0")

    count = 1
    for n in shape:
        count *= n
    if count * item > _INT64_MAX:
        raise WebDLPackValueError(ErrorCode.SIZE_OVERFLOW, "tensor size overflows int64", field="DLTensor.shape",
                                  value=shape, expected=f"numel * itemsize <= {_INT64_MAX}")
    contiguous = strides is None or is_c_contiguous(shape, strides)
    if not contiguous and dtype.is_subbyte and not flags & FLAG_IS_SUBBYTE_TYPE_PADDED:
        raise WebDLPackValueError(ErrorCode.BAD_STRIDES, "packed sub-byte tensors must be C-contiguous",
                                  field="DLTensor.strides", value=strides, expected="NULL or C-contiguous strides")

    data = data or 0
    if count > 0:
        if data == 0:
            raise WebDLPackValueError(ErrorCode.NULL_POINTER, "data is NULL but the tensor is not empty",
                                      field="DLTensor.data", value=0, expected="a non-NULL pointer when numel > 0")
        lo, hi = (0, count - 1) if contiguous else extent(shape, strides)
        cpu = device.type == DLDeviceType.kDLCPU
        limit = MAX_ADDRESS if cpu else _UINT64_MAX
        base = data + byte_offset if cpu else byte_offset
        if base + lo * item < 0 or base + (hi + 1) * item - 1 > limit:
            raise WebDLPackValueError(ErrorCode.OUT_OF_BOUNDS, "tensor reaches outside the address space",
                                      field="DLTensor.byte_offset" if strides is None else "DLTensor.strides",
                                      value=byte_offset if strides is None else strides,
                                      expected=f"data + byte_offset + extent within 0..{limit:#x}")
    view = TensorView.checked(data, byte_offset, shape, None if contiguous else strides, dtype, device, flags)
    if len(_VIEWS) >= _VIEWS_MAX:
        _VIEWS.clear()
    _VIEWS[key] = view
    return view
