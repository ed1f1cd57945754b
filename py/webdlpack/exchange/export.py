"""Export: build a new managed DLPack struct for a tensor, and free it exactly once.

Every export makes a fresh ``DLManagedTensorVersioned`` (or legacy
``DLManagedTensor``) followed by its own shape and strides arrays, all in ONE
block of host memory. What a tensor's struct says never changes, so its bytes
are built once (an :class:`ExportTemplate`, cached by :class:`Tensor`); an
export copies them into a new block and patches the two pointers that point
into the block itself.

The blocks live in a module-level registry keyed by the struct's address,
together with the *owner* of the tensor's memory; that registry entry is what
keeps the memory alive while a consumer holds the struct. The deleter drops
the entry, and with it the reference to the owner.

Where webdlpack's native module is loaded (:mod:`webdlpack.core.native`:
always in Pyodide, whose wheel ships it; in a CPython source checkout after
``make build``) the copy-and-register is one C call and exports carry its C
deleter, which pops this same registry: in Pyodide that turns a dozen
interpreter steps and a ctypes callback (each free) into two direct calls.
Elsewhere the same is done here in Python with :data:`DELETER_CALLBACK`.

Capsules carry a C destructor (:data:`~webdlpack.exchange.capsule.CAPSULE_DESTRUCTOR`)
that runs the deleter the moment a capsule is dropped unconsumed. It must be C:
a consumer may drop an unconsumed capsule while its own exception is set (NumPy
does when it refuses one), and any Python code run then, even through a ctypes
callback that does nothing, makes CPython replace that exception with a
SystemError; the C destructor puts the exception aside around the deleter.
Where that library is not available (a CPython wheel install), capsules have
no destructor: webdlpack keeps a reference to each capsule it made and, at its
next export (which looks at a bounded number of queued capsules, oldest first,
so an export stays O(1)), at :func:`stats`,
or after the next pass of the garbage collector (which never runs with an
exception set), frees the struct of every capsule that nobody else holds and nobody consumed,
and forgets the consumed ones (their consumer calls the deleter).

Threads: the registry, the capsule queue and the counters are shared by
every thread, and every change to them is ONE C-level operation, atomic
under the GIL, so no lock is needed and the single-thread path pays for
none: ``dict.__setitem__`` / ``dict.pop`` on the registry, ``deque.append``
/ ``deque.popleft`` on the queue (each queued capsule is taken by exactly
one collection, even when a garbage-collector pass starts another
collection in the middle of one), ``next()`` on an ``itertools.count``.
Freeing a struct is ``dict.pop(address, None)``: of two threads freeing
one address (a consumer's deleter and a collection, or a double free),
exactly one finds the entry. The deleter (see above for why it must stay
that small) is that one call.
"""

from __future__ import annotations

import array
import ctypes
import gc
import itertools
import sys
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

from ..core.abi import (
    DELETER,
    DLPACK_MAJOR_VERSION,
    DLPACK_MINOR_VERSION,
    DLDataType,
    DLDevice,
    DLManagedTensor,
    DLManagedTensorVersioned,
    DLTensor,
)
from ..core.native import NATIVE
from ..core.raw import int64_array
from ..core.view import TensorView
from .capsule import CAPSULE_DESTRUCTOR, NAME_LEGACY, NAME_VERSIONED, capsule_name, new_capsule

__all__ = [
    "DELETER_CALLBACK",
    "ExportTemplate",
    "collect_capsules",
    "export_template",
    "make_capsule",
    "release_export",
    "stats",
]

_REGISTRY: dict[int, tuple[Any, Any]] = {}  # struct address -> (memory block, owner)
# Exports made; "deleted" is created - live (see stats()), so freeing counts nothing.
_CREATED = itertools.count()
_UNKNOWN_DELETES = itertools.count()  # deleter calls for addresses that are not live (consumer bugs)


def _count_of(counter: itertools.count[int]) -> int:
    """How many times ``next`` was called on ``counter`` (its ``repr`` is ``count(N)``)."""
    return int(repr(counter)[6:-1])


def _on_delete(address: int | None) -> None:
    # Called from C (the consumer): one dict.pop, atomic under the GIL, so of
    # two threads freeing one address exactly one finds the entry. The popped
    # entry (block and owner) is released when this returns.
    if _REGISTRY.pop(address, None) is None:  # type: ignore[arg-type]  # None (a NULL struct) is never a key
        next(_UNKNOWN_DELETES)


#: The deleter of exports made in Python (``void (*)(void *self)``).
DELETER_CALLBACK = DELETER(_on_delete)

# With the native module, exports are made in C and carry its C deleter, which pops the same registry.
if NATIVE is not None:
    NATIVE.bind(_REGISTRY)
_native_export = NATIVE.export if NATIVE is not None else None
#: The deleter every export carries: the native module's where it is loaded, else DELETER_CALLBACK.
EXPORT_DELETER: Any = DELETER(NATIVE.deleter()) if NATIVE is not None else DELETER_CALLBACK


def release_export(address: int) -> bool:
    """Free the export at ``address`` if it is still live (for a struct no consumer took).

    Returns
    -------
    bool
        True if this call freed it; False if it was not live (already freed).
    """
    return _REGISTRY.pop(address, None) is not None


def stats() -> dict[str, int]:
    """Export counters: ``created``, ``deleted``, ``live`` and ``unknown_deletes``.

    ``unknown_deletes`` counts deleter calls for addresses that are not (or no
    longer) live exports, i.e. double frees by a consumer; it should stay 0.
    Dropped unconsumed capsules are collected first.
    """
    collect_capsules()
    live = len(_REGISTRY)
    native_created, native_unknown = NATIVE.counters() if NATIVE is not None else (0, 0)
    created = _count_of(_CREATED) + native_created
    # While another thread is exporting, "deleted" may be off by its exports in flight.
    return {
        "created": created,
        "deleted": created - live,
        "unknown_deletes": _count_of(_UNKNOWN_DELETES) + native_unknown,
        "live": live,
    }


# -- templates -----------------------------------------------------------------

_WORD = 8
_POINTER_SIZE = ctypes.sizeof(ctypes.c_void_p)
#: ``array`` typecode of a pointer-sized unsigned integer (4 bytes in wasm32, 8 on 64-bit hosts).
_POINTER_TYPECODE = "I" if _POINTER_SIZE == 4 else "Q"
if array.array(_POINTER_TYPECODE).itemsize != _POINTER_SIZE:  # pragma: no cover - an unusual C ABI
    raise ImportError(f"webdlpack: array typecode {_POINTER_TYPECODE!r} is not pointer-sized on this host")


class ExportTemplate:
    """The bytes of a managed struct for one view, ready to be copied per export.

    Each export copies :attr:`words` (an ``array.array`` copy is one C call and
    its memory comes from the allocator, 8-aligned as the struct needs), reads
    the copy's address from ``buffer_info()`` and stores the two pointers into
    the copy as items: cheaper than a ctypes block, ``addressof`` and
    ``struct.pack_into``.

    Attributes
    ----------
    words : array.array
        Struct, shape array and strides array (each array ``max(ndim, 1)``
        int64) as pointer-sized unsigned items, with the shape/strides pointers still 0.
    struct_size : int
        Bytes of the struct (the shape array follows it).
    pointer_word : int
        Index in :attr:`words` of the shape pointer (the strides pointer is the next item).
    array_bytes : int
        Bytes of one of the two arrays.
    native : tuple or None
        ``(bytes of words, struct_size, byte offset of the shape pointer, array_bytes)``: what the native
        module's ``export`` takes; None without the native module.
    export : callable
        ``export(owner) -> address``: :func:`export_template` of this template. With the native module and
        the capsule destructor loaded (no dropped capsule ever waits in a queue), the native export itself,
        bound to :attr:`native` (``functools.partial``: no Python frame on the hot path).
    """

    __slots__ = ("words", "struct_size", "pointer_word", "array_bytes", "native", "export")

    def __init__(self, view: TensorView, versioned: bool) -> None:
        ndim = view.ndim
        struct: Any
        if versioned:
            struct = DLManagedTensorVersioned()
            struct.version.major = DLPACK_MAJOR_VERSION
            struct.version.minor = DLPACK_MINOR_VERSION
            struct.flags = view.flags
            tensor_at = DLManagedTensorVersioned.dl_tensor.offset
        else:
            struct = DLManagedTensor()
            tensor_at = DLManagedTensor.dl_tensor.offset
        t = struct.dl_tensor
        t.data = view.data or None
        t.device = DLDevice(view.device.type, view.device.id)
        t.ndim = ndim
        t.dtype = DLDataType(view.dtype.code, view.dtype.bits, view.dtype.lanes)
        t.byte_offset = view.byte_offset
        struct.manager_ctx = None
        struct.deleter = EXPORT_DELETER
        entries = max(ndim, 1)
        shape = view.shape if ndim else (0,)
        strides = view.full_strides if ndim else (0,)
        arrays = int64_array(entries)
        self.words = array.array(_POINTER_TYPECODE, bytes(struct) + arrays.pack(*shape) + arrays.pack(*strides))
        self.struct_size = ctypes.sizeof(struct)
        self.pointer_word = (tensor_at + DLTensor.shape.offset) // _POINTER_SIZE  # a pointer field is pointer-aligned
        self.array_bytes = entries * _WORD
        self.native = (
            None
            if NATIVE is None
            else (self.words.tobytes(), self.struct_size, self.pointer_word * _POINTER_SIZE, self.array_bytes)
        )
        self.export: Callable[[Any], int] = (
            partial(NATIVE.export, self.native)
            if NATIVE is not None and CAPSULE_DESTRUCTOR is not None
            else partial(export_template, self)
        )


def export_template(template: ExportTemplate, owner: Any) -> int:
    """Make a new managed struct from ``template`` and register it with ``owner``.

    Returns
    -------
    int
        The struct's address. Whoever receives it must call its deleter once.
    """
    if _CAPSULES:
        collect_capsules(_EXPORT_BUDGET)
    native = template.native
    if native is not None:
        address: int = _native_export(native, owner)  # type: ignore[misc]  # set whenever templates carry .native
        return address
    block = template.words.__copy__()
    address = block.buffer_info()[0]
    shape_at = address + template.struct_size
    strides_at = shape_at + template.array_bytes
    at = template.pointer_word
    block[at] = shape_at
    block[at + 1] = strides_at
    _REGISTRY[address] = (block, owner)
    next(_CREATED)
    return address


# -- capsules --------------------------------------------------------------------

#: ``[capsule, struct address]`` of capsules not yet seen consumed or dropped (appended and taken atomically).
_CAPSULES: deque[list[Any]] = deque()


def _references(entry: list[Any]) -> int:
    return sys.getrefcount(entry[0])


def _baseline() -> int:
    probe = [new_capsule(0x5A5A5A50, NAME_VERSIONED, destructor=False), 0]
    return _references(probe)


#: ``_references`` of a capsule held only by its ``_CAPSULES`` entry.
_ONLY_OURS = _baseline()

#: Queued capsules an export looks at (oldest first; held ones go to the back), so an export stays O(1)
#: however many capsules a caller holds, and a capsule dropped among few is freed at the next export.
_EXPORT_BUDGET = 8


def collect_capsules(budget: int | None = None) -> None:
    """Free the struct of every exported capsule that was dropped unconsumed.

    ``budget`` limits how many queued capsules are looked at (oldest first);
    None looks at all of them (``stats()``, the garbage-collector hook).

    A capsule renamed ``used_...`` was consumed: its consumer calls the
    deleter, so it is simply forgotten. One still named ``dltensor...`` that
    nobody but webdlpack references was dropped: its struct is freed now.
    Others go back in the queue. Safe from several threads at once and when
    a garbage collection (whose callback collects too) runs in the middle:
    each queued entry is taken (``popleft``) by one call only.
    """
    take, put = _CAPSULES.popleft, _CAPSULES.append
    queued = len(_CAPSULES)
    for _ in range(queued if budget is None else min(queued, budget)):
        try:
            entry = take()
        except IndexError:  # another thread (or a nested collection) took the rest
            return
        if capsule_name(entry[0]) not in (NAME_VERSIONED, NAME_LEGACY):
            continue  # consumed: its consumer calls the deleter
        if _references(entry) > _ONLY_OURS:
            put(entry)  # still held by someone
            continue
        release_export(entry[1])


def _after_gc(phase: str, info: dict[str, int]) -> None:
    # gc.callbacks: CPython only collects when no exception is set, so running
    # Python code here is safe (unlike in a capsule destructor).
    if phase == "stop" and _CAPSULES:
        collect_capsules()


gc.callbacks.append(_after_gc)


def make_capsule(
    view: TensorView, owner: Any, *, versioned: bool = True, template: ExportTemplate | None = None
) -> Any:
    """Export ``view`` as a new PyCapsule named ``dltensor_versioned`` or ``dltensor``.

    If the capsule is dropped without being consumed, its destructor frees
    the struct at once (without a loaded destructor: at webdlpack's next
    export, :func:`stats` call or garbage-collector pass; see the module
    notes); a
    consumed capsule (renamed ``used_...``) is never touched.

    Parameters
    ----------
    view : TensorView
        What to describe; ``view.flags`` become the struct's flags.
    owner : object
        Keeps the memory alive until the deleter runs (held by the registry).
    versioned : bool, default True
        ``DLManagedTensorVersioned`` (DLPack 1.1) or legacy ``DLManagedTensor``.
    template : ExportTemplate, optional
        A cached template of ``view`` (must match ``versioned``).
    """
    address = export_template(template or ExportTemplate(view, versioned), owner)
    try:
        capsule = new_capsule(address, NAME_VERSIONED if versioned else NAME_LEGACY)
    except BaseException:
        release_export(address)
        raise
    if CAPSULE_DESTRUCTOR is None:
        _CAPSULES.append([capsule, address])
    return capsule
