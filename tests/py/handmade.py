"""Managed DLPack structs built by hand with ctypes, with deleters that count calls.

Used to feed webdlpack's importer well-formed and malformed tensors and to
check that each deleter runs exactly once.
"""

from __future__ import annotations

import ctypes
from typing import Any

from webdlpack.core import abi as _abi
from webdlpack.exchange.capsule import NAME_LEGACY, NAME_VERSIONED


class Producer:
    """One hand-built managed struct plus a deleter that records each call.

    Parameters
    ----------
    shape : sequence of int
    dtype : (code, bits, lanes)
    versioned : bool
        Build a DLManagedTensorVersioned (True) or a legacy DLManagedTensor.
    flags : int
    strides : sequence of int or None
    data : int or None
        Address to put in ``data``; by default a fresh zeroed buffer.
    """

    def __init__(
        self,
        shape=(4,),
        dtype=(2, 32, 1),
        *,
        versioned=True,
        flags=0,
        strides=None,
        data=None,
        version=(1, 1),
        byte_offset=0,
        device=(1, 0),
        ndim=None,
        null_shape=False,
    ):
        self.calls: list[int] = []
        self.versioned = versioned
        count = 1
        for n in shape:
            count *= max(n, 0)
        nbytes = min(max(8, count * ((dtype[1] * dtype[2] + 7) // 8)), 1 << 16)  # malformed shapes stay small
        self.buffer = (ctypes.c_uint8 * nbytes)()
        nd = len(shape) if ndim is None else ndim
        self.shape_arr = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides_arr = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        self._deleter = _abi.DELETER(self._on_delete)
        if versioned:
            self.struct: Any = _abi.DLManagedTensorVersioned()
            self.struct.version.major, self.struct.version.minor = version
            self.struct.flags = flags
        else:
            self.struct = _abi.DLManagedTensor()
        t = self.struct.dl_tensor
        t.data = ctypes.addressof(self.buffer) if data is None else (data or None)
        t.device.device_type, t.device.device_id = device
        t.ndim = nd
        t.dtype.code, t.dtype.bits, t.dtype.lanes = dtype
        if not null_shape:
            t.shape = ctypes.cast(self.shape_arr, ctypes.POINTER(ctypes.c_int64))
        if self.strides_arr is not None:
            t.strides = ctypes.cast(self.strides_arr, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.struct.deleter = self._deleter
        self.address = ctypes.addressof(self.struct)

    def _on_delete(self, address):
        self.calls.append(address)

    @property
    def deleted(self) -> int:
        """How many times the deleter ran."""
        return len(self.calls)

    def capsule(self, name: str | None = None) -> Any:
        """A capsule (without destructor) holding this struct."""
        new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
            ("PyCapsule_New", ctypes.pythonapi)
        )
        if name is None:
            name = NAME_VERSIONED if self.versioned else NAME_LEGACY
        self._name = name.encode()  # the capsule keeps a pointer to these bytes
        return new(self.address, self._name, None)


class DLPackObject:
    """An object whose ``__dlpack__`` returns a given producer's capsule.

    ``legacy_signature=True`` makes ``__dlpack__`` accept no keywords, like a
    pre-2023.12 producer, so a consumer must fall back after a TypeError.
    """

    def __init__(self, producer: Producer, *, legacy_signature=False, device=(1, 0)):
        self.producer = producer
        self.legacy_signature = legacy_signature
        self.device = device
        self.calls: list[dict] = []

    def __dlpack__(self, **kwargs):
        if self.legacy_signature and kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        self.calls.append(kwargs)
        return self.producer.capsule()

    def __dlpack_device__(self):
        return self.device
