"""``ManagedOwner``: the consumer side of a managed DLPack struct.

Taking a managed struct means promising to call its deleter exactly once. A
``ManagedOwner`` keeps that promise: it calls the deleter when
:meth:`ManagedOwner.release` is called or when the owner itself is
deallocated, whichever comes first, and never twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..bridge.js import deleter_caller
from ..core.abi import DELETER
from ..core.native import NATIVE
from ..core.nocopy import NotCopyable
from ..core.raw import MANAGED_LEGACY, MANAGED_VERSIONED, unpack_at

__all__ = ["ManagedOwner", "call_deleter", "stats"]

_STATS = {"adopted": 0, "released": 0}

# ctypes function objects for the deleter pointers seen so far (a producer
# normally has one deleter for all its structs); bounded, cleared when full.
_FUNCTIONS: dict[int, Any] = {}


def stats() -> dict[str, int]:
    """Import counters: ``adopted``, ``released`` and ``live`` managed structs."""
    adopted, released = NATIVE.owner_counters() if NATIVE is not None else (0, 0)
    adopted += _STATS["adopted"]
    released += _STATS["released"]
    return {"adopted": adopted, "released": released, "live": adopted - released}


def _deleter_address(address: int, versioned: bool) -> int:
    if versioned:
        return int(unpack_at(MANAGED_VERSIONED, address)[3] or 0)
    return int(unpack_at(MANAGED_LEGACY, address)[-1] or 0)


#: How deleters are called: through JS where the bridge is loaded (cheaper than ctypes in Pyodide), else
#: ctypes; False until first looked up.
_via_js: Callable[[int, int], None] | None | bool = False


def _call(deleter: int, address: int) -> None:
    global _via_js
    via = _via_js
    if via is False:
        via = _via_js = deleter_caller()
    if via is not None:
        via(deleter, address)  # type: ignore[operator]
        return
    fn = _FUNCTIONS.get(deleter)
    if fn is None:
        if len(_FUNCTIONS) >= 64:
            _FUNCTIONS.clear()
        fn = _FUNCTIONS[deleter] = DELETER(deleter)
    fn(address)


def call_deleter(address: int, versioned: bool) -> None:
    """Call the deleter stored in the managed struct at ``address`` (if not NULL).

    Used for structs that were never wrapped in an owner, e.g. one refused
    for a version mismatch. The caller guarantees this happens once.

    Parameters
    ----------
    address : int
        The managed struct.
    versioned : bool
        ``DLManagedTensorVersioned`` (True) or legacy ``DLManagedTensor``.
    """
    fn = _deleter_address(address, versioned)
    if fn:
        _call(fn, address)


class _PythonOwner:
    """The owner's state and release in Python: the base of :class:`ManagedOwner` without the native module."""

    __slots__ = ("address", "versioned", "_deleter")  # what the C base holds: no weak references either

    def __init__(self, address: int, versioned: bool, deleter: int | None) -> None:
        self.address = address
        self.versioned = versioned
        self._deleter: int | None = int(deleter or 0)
        _STATS["adopted"] += 1

    @property
    def alive(self) -> bool:
        """False once the deleter has run."""
        return self._deleter is not None

    def release(self) -> None:
        """Call the deleter now (no-op if it already ran)."""
        deleter = self._deleter
        if deleter is None:
            return
        self._deleter = None
        _STATS["released"] += 1
        if deleter:
            _call(deleter, self.address)

    # Deallocation releases: the same function (no extra frame).
    __del__ = release


if NATIVE is not None:
    # The native owner and call_deleter call deleters through JS's try/catch caller once the bridge has set
    # it (deleter_caller() does, on first use); until then through _call, which looks the bridge up.
    NATIVE.set_deleter_fallback(_call)

#: ManagedOwner's base: the native module's C type where it is loaded (owner.c: making, releasing and
#: dropping an owner then runs no Python frame), else :class:`_PythonOwner`. Same attributes either way.
_OwnerBase: Any = NATIVE.owner_type() if NATIVE is not None else _PythonOwner


class ManagedOwner(_OwnerBase, NotCopyable):  # type: ignore[misc]  # a base chosen at import time
    """Owns one managed DLPack struct and calls its deleter exactly once.

    Parameters
    ----------
    address : int
        Address of a ``DLManagedTensorVersioned`` (``versioned=True``) or
        ``DLManagedTensor``. Ownership passes to this object.
    versioned : bool
        Which struct is at ``address``.
    deleter : int or None
        The struct's deleter pointer, as the caller read it (0 or None: none to call).

    Attributes
    ----------
    address : int
    versioned : bool
    alive : bool
        False once the deleter has run.

    Notes
    -----
    The struct is not read again on release. The deleter runs on
    :meth:`release` or when this object is deallocated (reference counting
    makes that prompt); an error it raises then is reported as unraisable.
    Not copyable or picklable: two owners of one struct would call its
    deleter twice.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        state = "live" if self.alive else "released"
        return f"<ManagedOwner {self.address:#x} {state}>"
