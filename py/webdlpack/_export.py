"""Export: build a new managed DLPack struct for a tensor, and free it exactly once.

Every export makes a fresh ``DLManagedTensorVersioned`` (or legacy
``DLManagedTensor``) with its own shape and strides arrays. The ctypes objects
live in a module-level registry keyed by the struct's address, together with
the *owner* of the tensor's memory; that registry entry is what keeps the
memory alive while a consumer holds the struct. The one deleter callback
(:data:`DELETER_CALLBACK`) drops the entry, and with it the reference to the
owner. A capsule destructor calls the same code when a capsule dies unused.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from ._abi import (
    DELETER,
    DLPACK_MAJOR_VERSION,
    DLPACK_MINOR_VERSION,
    DLDataType,
    DLDevice,
    DLManagedTensor,
    DLManagedTensorVersioned,
)
from ._capsule import (
    DESTRUCTOR,
    NAME_LEGACY,
    NAME_VERSIONED,
    capsule_name_address,
    new_capsule,
    unused_pointer_raw,
)
from ._host import MAX_ADDRESS
from ._view import TensorView

__all__ = ["make_managed", "make_capsule", "DELETER_CALLBACK", "stats"]


class _Entry:
    __slots__ = ("struct", "shape", "strides", "owner")

    def __init__(self, struct: Any, shape: Any, strides: Any, owner: Any) -> None:
        self.struct = struct
        self.shape = shape
        self.strides = strides
        self.owner = owner


_REGISTRY: dict[int, _Entry] = {}
_STATS = {"created": 0, "deleted": 0, "unknown_deletes": 0}


def stats() -> dict[str, int]:
    """Export counters: ``created``, ``deleted``, ``live`` and ``unknown_deletes``.

    ``unknown_deletes`` counts deleter calls for addresses that are not (or no
    longer) live exports, i.e. double frees by a consumer; it should stay 0.
    """
    return {**_STATS, "live": len(_REGISTRY)}


# The deleter and the capsule destructor are called from C, sometimes while
# an exception is in flight (NumPy refusing a capsule drops it with its error
# set). Python code may run then, but any call into a C function, and even
# converting an int to a pointer, would notice that exception and turn it into
# a SystemError. So both callbacks use only call-free bytecode: dict
# membership, subscripts, ``del``, integer arithmetic and compares. Dropping a
# registry entry may run finalizers; CPython saves and restores the pending
# exception around those.
#
# To read a capsule's fields without a call, memory is indexed as one huge
# ctypes array of machine words starting at address 0 (two arrays on 32-bit
# hosts, where one array cannot span more than 2 GiB). PyCapsule is
# {PyObject_HEAD; void *pointer; const char *name; ...}: with the usual
# two-word object header, word 2 is the pointer and word 3 the name. An
# import-time probe checks this against the C API (CAPSULE_PEEK_OK).

_WORD = ctypes.sizeof(ctypes.c_size_t)
_LOW_WORDS = sys.maxsize // _WORD
_MEMORY_LOW = (ctypes.c_size_t * _LOW_WORDS).from_address(0)
_HIGH_WORDS = min(max(0, (MAX_ADDRESS + 1) // _WORD - _LOW_WORDS), _LOW_WORDS)
_MEMORY_HIGH = (ctypes.c_size_t * max(_HIGH_WORDS, 1)).from_address(_LOW_WORDS * _WORD if _HIGH_WORDS else 0)
_POINTER_WORD = 2
_NAME_WORD = 3
_UNUSED_VERSIONED = capsule_name_address(NAME_VERSIONED)
_UNUSED_LEGACY = capsule_name_address(NAME_LEGACY)


def _word(address: int, index: int) -> int:
    w = address // _WORD + index
    return _MEMORY_LOW[w] if w < _LOW_WORDS else _MEMORY_HIGH[w - _LOW_WORDS]


def _capsule_peek_works() -> bool:
    probe = new_capsule(0x5A5A5A50, NAME_VERSIONED, None)
    return _word(id(probe), _POINTER_WORD) == 0x5A5A5A50 and _word(id(probe), _NAME_WORD) == _UNUSED_VERSIONED


#: False on an interpreter whose PyCapsule layout differs; then the
#: destructor asks the C API instead (safe unless an exception is in flight).
CAPSULE_PEEK_OK = _capsule_peek_works()


def _on_delete(address: int | None) -> None:
    if address in _REGISTRY:
        _STATS["deleted"] += 1
        del _REGISTRY[address]  # releases the struct, its arrays and the owner
    else:
        _STATS["unknown_deletes"] += 1


def _on_capsule_destroyed(capsule: int | None) -> None:
    if CAPSULE_PEEK_OK:
        # Inlined _word(): a call-free body (see above).
        w = capsule // _WORD + _NAME_WORD
        name = _MEMORY_LOW[w] if w < _LOW_WORDS else _MEMORY_HIGH[w - _LOW_WORDS]
        if name == _UNUSED_VERSIONED or name == _UNUSED_LEGACY:
            w = capsule // _WORD + _POINTER_WORD
            address = _MEMORY_LOW[w] if w < _LOW_WORDS else _MEMORY_HIGH[w - _LOW_WORDS]
            if address in _REGISTRY:
                _STATS["deleted"] += 1
                del _REGISTRY[address]
        return
    found = unused_pointer_raw(int(capsule or 0))  # pragma: no cover - other interpreters
    if found is not None:  # pragma: no cover
        _on_delete(found[0])


def _release(address: int) -> None:
    _on_delete(address)


#: The one deleter every webdlpack export carries (``void (*)(void *self)``).
DELETER_CALLBACK = DELETER(_on_delete)
#: The one capsule destructor; it frees the struct only if the capsule was never consumed.
DESTRUCTOR_CALLBACK = DESTRUCTOR(_on_capsule_destroyed)


def make_managed(view: TensorView, owner: Any, *, versioned: bool = True) -> int:
    """Build a new managed struct describing ``view`` and register it.

    Parameters
    ----------
    view : TensorView
        What to describe; ``view.flags`` become the struct's flags.
    owner : object
        Keeps the memory alive until the deleter runs (held by the registry).
    versioned : bool, default True
        ``DLManagedTensorVersioned`` (DLPack 1.1) or legacy ``DLManagedTensor``.

    Returns
    -------
    int
        The struct's address. Whoever receives it must call its deleter once.
    """
    ndim = view.ndim
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*view.shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*view.full_strides)
    struct: Any
    if versioned:
        struct = DLManagedTensorVersioned()
        struct.version.major = DLPACK_MAJOR_VERSION
        struct.version.minor = DLPACK_MINOR_VERSION
        struct.flags = view.flags
    else:
        struct = DLManagedTensor()
    t = struct.dl_tensor
    t.data = view.data or None
    t.device = DLDevice(view.device.type, view.device.id)
    t.ndim = ndim
    t.dtype = DLDataType(view.dtype.code, view.dtype.bits, view.dtype.lanes)
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = view.byte_offset
    struct.manager_ctx = None
    struct.deleter = DELETER_CALLBACK
    address = ctypes.addressof(struct)
    _REGISTRY[address] = _Entry(struct, shape_arr, strides_arr, owner)
    _STATS["created"] += 1
    return address


def make_capsule(view: TensorView, owner: Any, *, versioned: bool = True) -> Any:
    """Export ``view`` as a new PyCapsule named ``dltensor_versioned`` or ``dltensor``.

    If the capsule is collected without being consumed, its destructor frees
    the struct; a consumed capsule (renamed ``used_...``) is never touched.
    """
    address = make_managed(view, owner, versioned=versioned)
    try:
        return new_capsule(address, NAME_VERSIONED if versioned else NAME_LEGACY, DESTRUCTOR_CALLBACK)
    except BaseException:
        _release(address)
        raise
