"""``ManagedOwner``: the consumer side of a managed DLPack struct.

Taking a managed struct means promising to call its deleter exactly once. A
``ManagedOwner`` keeps that promise: it calls the deleter when
:meth:`ManagedOwner.release` is called or when the owner is garbage
collected (a ``weakref.finalize``), whichever comes first, and never twice.
"""

from __future__ import annotations

import ctypes
import weakref

from ._abi import DELETER, DLManagedTensor, DLManagedTensorVersioned

__all__ = ["ManagedOwner", "call_deleter", "stats"]

_STATS = {"adopted": 0, "released": 0}


def stats() -> dict[str, int]:
    """Import counters: ``adopted``, ``released`` and ``live`` managed structs."""
    return {**_STATS, "live": _STATS["adopted"] - _STATS["released"]}


def _deleter_address(address: int, versioned: bool) -> int:
    struct = DLManagedTensorVersioned if versioned else DLManagedTensor
    fn = ctypes.c_void_p.from_address(address + struct.deleter.offset).value
    return int(fn or 0)


def call_deleter(address: int, versioned: bool) -> None:
    """Call the deleter stored in the managed struct at ``address`` (if not NULL).

    Used for structs that were never wrapped in an owner, e.g. one refused
    for a version mismatch. The caller guarantees this happens once.
    """
    fn = _deleter_address(address, versioned)
    if fn:
        DELETER(fn)(address)


def _finalize(address: int, deleter: int) -> None:
    _STATS["released"] += 1
    if deleter:
        DELETER(deleter)(address)


class ManagedOwner:
    """Owns one managed DLPack struct and calls its deleter exactly once.

    Parameters
    ----------
    address : int
        Address of a ``DLManagedTensorVersioned`` (``versioned=True``) or
        ``DLManagedTensor``. Ownership passes to this object.
    versioned : bool
        Which struct is at ``address``.

    Notes
    -----
    The deleter pointer is read once, here; the struct is not read again on release.
    """

    __slots__ = ("address", "versioned", "_finalizer", "__weakref__")

    def __init__(self, address: int, versioned: bool) -> None:
        self.address = address
        self.versioned = versioned
        deleter = _deleter_address(address, versioned)
        _STATS["adopted"] += 1
        self._finalizer = weakref.finalize(self, _finalize, address, deleter)

    @property
    def alive(self) -> bool:
        """False once the deleter has run."""
        return self._finalizer.alive

    def release(self) -> None:
        """Call the deleter now (no-op if it already ran)."""
        self._finalizer()

    def __repr__(self) -> str:
        state = "live" if self.alive else "released"
        return f"<ManagedOwner {self.address:#x} {state}>"
