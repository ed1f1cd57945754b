"""Read a ``DLTensor`` from memory into a :class:`TensorView`, checking every field.

The same checks as the JS codec: ndim range, NULL shape, negative extents,
size overflow, unknown dtype codes and bad bit widths (fp4 must be 4 bits,
fp6 6 bits, fp8 8 bits), unknown flag bits, NULL data with a nonzero size,
and address arithmetic that would leave the pointer range. Every failure is a
:class:`~webdlpack._errors.WebDLPackValueError` naming the field and the value.
"""

from __future__ import annotations

import ctypes

from ._abi import FLAG_IS_SUBBYTE_TYPE_PADDED, KNOWN_FLAGS, MAX_NDIM, DLDeviceType, DLTensor
from ._device import Device
from ._dtype import DType, check_dtype
from ._errors import ErrorCode, WebDLPackValueError
from ._host import MAX_ADDRESS
from ._layout import extent, is_c_contiguous
from ._view import TensorView

__all__ = ["check_flags", "read_dltensor"]

_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


def check_flags(flags: int, field: str = "DLManagedTensorVersioned.flags") -> None:
    """Raise ``BAD_FLAGS`` when ``flags`` has a bit DLPack 1.1 does not define."""
    if flags & ~KNOWN_FLAGS:
        raise WebDLPackValueError(ErrorCode.BAD_FLAGS, "unknown flag bits", field=field, value=flags,
                                  expected=f"only bits of {KNOWN_FLAGS:#x} (READ_ONLY, IS_COPIED, IS_SUBBYTE_TYPE_PADDED)")


def read_dltensor(t: DLTensor, flags: int = 0) -> TensorView:
    """Validate the ``DLTensor`` ``t`` and describe it as a :class:`TensorView`.

    Parameters
    ----------
    t : DLTensor
        A ctypes view of the struct (e.g. ``DLTensor.from_address(addr)``).
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
    check_flags(flags)
    dev_type, dev_id = int(t.device.device_type), int(t.device.device_id)
    if dev_type not in DLDeviceType.__members__.values():
        raise WebDLPackValueError(ErrorCode.BAD_DEVICE, "unknown device type", field="DLTensor.device.device_type",
                                  value=dev_type, expected="a DLDeviceType value (1 = CPU, 15 = WebGPU, ...)")
    if dev_id < 0 or (dev_type == DLDeviceType.kDLCPU and dev_id != 0):
        raise WebDLPackValueError(ErrorCode.BAD_DEVICE, "bad device id", field="DLTensor.device.device_id",
                                  value=dev_id, expected="0 for CPU, >= 0 otherwise")
    device = Device(dev_type, dev_id)

    ndim = int(t.ndim)
    if not 0 <= ndim <= MAX_NDIM:
        raise WebDLPackValueError(ErrorCode.BAD_NDIM, "ndim out of range", field="DLTensor.ndim", value=ndim,
                                  expected=f"0 <= ndim <= {MAX_NDIM}")
    code, bits, lanes = int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes)
    check_dtype(code, bits, lanes, field="DLTensor.dtype")
    dtype = DType(code, bits, lanes)

    shape_ptr = ctypes.cast(t.shape, ctypes.c_void_p).value
    strides_ptr = ctypes.cast(t.strides, ctypes.c_void_p).value
    if ndim > 0 and not shape_ptr:
        raise WebDLPackValueError(ErrorCode.NULL_POINTER, "shape is NULL but ndim > 0", field="DLTensor.shape",
                                  value=0, expected=f"a pointer to {ndim} int64 extents")
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    for i, n in enumerate(shape):
        if n < 0:
            raise WebDLPackValueError(ErrorCode.BAD_SHAPE, "negative extent", field=f"DLTensor.shape[{i}]", value=n,
                                      expected=">= 0")
    strides = tuple(int(t.strides[i]) for i in range(ndim)) if (strides_ptr and ndim > 0) else None

    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize > _INT64_MAX:
        raise WebDLPackValueError(ErrorCode.SIZE_OVERFLOW, "tensor size overflows int64", field="DLTensor.shape",
                                  value=shape, expected=f"numel * itemsize <= {_INT64_MAX}")
    if dtype.is_subbyte and not flags & FLAG_IS_SUBBYTE_TYPE_PADDED and not is_c_contiguous(shape, strides):
        raise WebDLPackValueError(ErrorCode.BAD_STRIDES, "packed sub-byte tensors must be C-contiguous",
                                  field="DLTensor.strides", value=strides, expected="NULL or C-contiguous strides")

    data = int(t.data or 0)
    byte_offset = int(t.byte_offset)
    if count > 0:
        if data == 0:
            raise WebDLPackValueError(ErrorCode.NULL_POINTER, "data is NULL but the tensor is not empty",
                                      field="DLTensor.data", value=0, expected="a non-NULL pointer when numel > 0")
        lo, hi = extent(shape, strides)
        item = dtype.itemsize
        limit = MAX_ADDRESS if device.is_cpu else _UINT64_MAX
        base = data + byte_offset if device.is_cpu else byte_offset
        if base + lo * item < 0 or base + (hi + 1) * item - 1 > limit:
            raise WebDLPackValueError(ErrorCode.OUT_OF_BOUNDS, "tensor reaches outside the address space",
                                      field="DLTensor.byte_offset" if strides is None else "DLTensor.strides",
                                      value=byte_offset if strides is None else strides,
                                      expected=f"data + byte_offset + extent within 0..{limit:#x}")
    return TensorView(data, byte_offset, shape, strides, dtype, device, flags)
