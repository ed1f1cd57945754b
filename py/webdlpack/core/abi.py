"""ctypes mirrors of ``wasm/include/webdlpack/dlpack.h`` (DLPack 1.1).

The header is the source of truth; this module copies its structs field by
field. Pointer fields are ``c_void_p`` (or typed pointers), so ctypes follows
the native C layout of whichever host runs the code: 8-byte pointers on 64-bit
CPython, 4-byte pointers in Pyodide (wasm32). :func:`layout` reports the
resulting sizes and offsets with the same keys the JS codec uses, so a
conformance test can compare the three sides.
"""

from __future__ import annotations

import ctypes
import enum
from typing import Any

__all__ = [
    "DLPACK_MAJOR_VERSION",
    "DLPACK_MINOR_VERSION",
    "DLPACK_VERSION",
    "DLDeviceType",
    "DLDataTypeCode",
    "FLAG_READ_ONLY",
    "FLAG_IS_COPIED",
    "FLAG_IS_SUBBYTE_TYPE_PADDED",
    "KNOWN_FLAGS",
    "MAX_NDIM",
    "DLPackVersion",
    "DLDevice",
    "DLDataType",
    "DLTensor",
    "DLManagedTensor",
    "DLManagedTensorVersioned",
    "DELETER",
    "layout",
]

#: Major ABI version webdlpack produces and accepts.
DLPACK_MAJOR_VERSION = 1
#: Minor ABI version webdlpack produces.
DLPACK_MINOR_VERSION = 1
#: ``(major, minor)`` as a tuple, the form ``__dlpack__(max_version=...)`` uses.
DLPACK_VERSION = (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION)

#: Flag: the consumer must not write through the tensor.
FLAG_READ_ONLY = 1 << 0
#: Flag: the producer made a copy that the consumer owns exclusively.
FLAG_IS_COPIED = 1 << 1
#: Flag: sub-byte elements (fp4/fp6) are padded to one byte each.
FLAG_IS_SUBBYTE_TYPE_PADDED = 1 << 2
#: Every flag bit DLPack 1.1 defines; any other bit is an error on import.
KNOWN_FLAGS = FLAG_READ_ONLY | FLAG_IS_COPIED | FLAG_IS_SUBBYTE_TYPE_PADDED

#: Largest ``ndim`` webdlpack accepts (the JS codec and the C library use the same bound).
MAX_NDIM = 32


class DLDeviceType(enum.IntEnum):
    """``DLDeviceType``: where the bytes of a tensor live (stored as int32)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
    kDLTrn = 18


class DLDataTypeCode(enum.IntEnum):
    """``DLDataTypeCode``: what kind of number an element is (stored as uint8)."""

    kDLInt = 0
    kDLUInt = 1
    kDLFloat = 2
    kDLOpaqueHandle = 3
    kDLBfloat = 4
    kDLComplex = 5
    kDLBool = 6
    kDLFloat8_e3m4 = 7
    kDLFloat8_e4m3 = 8
    kDLFloat8_e4m3b11fnuz = 9
    kDLFloat8_e4m3fn = 10
    kDLFloat8_e4m3fnuz = 11
    kDLFloat8_e5m2 = 12
    kDLFloat8_e5m2fnuz = 13
    kDLFloat8_e8m0fnu = 14
    kDLFloat6_e2m3fn = 15
    kDLFloat6_e3m2fn = 16
    kDLFloat4_e2m1fn = 17


class DLPackVersion(ctypes.Structure):
    """``DLPackVersion``: ABI version, always first in a versioned tensor.

    Fields: ``major`` (uint32, a change means a new layout), ``minor``
    (uint32, newer minors only add enum values).
    """

    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    """``DLDevice``: ``device_type`` (int32, a :class:`DLDeviceType`) and ``device_id`` (int32)."""

    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    """``DLDataType``: ``code`` (uint8), ``bits`` per lane (uint8), ``lanes`` (uint16). 4 bytes."""

    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """``DLTensor``: a non-owning tensor view (40 bytes on wasm32, 48 on 64-bit).

    Fields
    ------
    data : void*
        Base address (CPU: a heap address; WebGPU: a webdlpack GPU pointer).
    device : DLDevice
        Where ``data`` lives.
    ndim : int32
        Number of dimensions, 0 for a scalar.
    dtype : DLDataType
        Element type.
    shape : int64*
        ``ndim`` extents, each >= 0.
    strides : int64*
        ``ndim`` strides in elements, or NULL for C-contiguous.
    byte_offset : uint64
        Bytes from ``data`` to the first element.
    """

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


#: The deleter's C type, ``void (*)(void *self)``. ``self`` is declared as
#: ``c_void_p`` (not a struct pointer) so one callback serves both managed
#: structs and receives a plain integer address.
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    """Legacy (pre-1.0) ``DLManagedTensor`` (48 bytes on wasm32).

    Fields: ``dl_tensor`` (:class:`DLTensor`), ``manager_ctx`` (void*, the
    producer's context), ``deleter`` (called once by the consumer; may be NULL).
    """

    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    """``DLManagedTensorVersioned``, the DLPack 1.x exchange object (64 bytes on wasm32).

    Fields: ``version`` (:class:`DLPackVersion`, first), ``manager_ctx``
    (void*), ``deleter`` (called once by the consumer; may be NULL), ``flags``
    (uint64, ``FLAG_*`` bits), ``dl_tensor`` (:class:`DLTensor`, offset 24 on
    wasm32).
    """

    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_STRUCTS: dict[str, Any] = {
    "DLPackVersion": DLPackVersion,
    "DLDevice": DLDevice,
    "DLDataType": DLDataType,
    "DLTensor": DLTensor,
    "DLManagedTensor": DLManagedTensor,
    "DLManagedTensorVersioned": DLManagedTensorVersioned,
}


def layout() -> dict[str, dict[str, int]]:
    """Sizes and field offsets of the DLPack structs on this host.

    Returns
    -------
    dict
        ``{struct_name: {"size": sizeof, "align": alignof, field_name: offsetof, ...}}`` for
        DLPackVersion, DLDevice, DLDataType, DLTensor, DLManagedTensor and
        DLManagedTensorVersioned. In Pyodide (wasm32) ``DLTensor`` has size 40
        with ``byte_offset`` at 32, and ``DLManagedTensorVersioned`` has size
        64 with ``dl_tensor`` at 24.
    """
    out: dict[str, dict[str, int]] = {}
    for name, struct in _STRUCTS.items():
        entry = {"size": ctypes.sizeof(struct), "align": ctypes.alignment(struct)}
        for field_name, *_ in struct._fields_:
            entry[field_name] = getattr(struct, field_name).offset
        out[name] = entry
    return out
