"""PyCapsule plumbing through ``ctypes.pythonapi``, with our own function prototypes.

The functions are bound here with fresh prototypes (``PYFUNCTYPE(...)``)
instead of setting ``argtypes`` on the shared ``ctypes.pythonapi`` attributes,
so webdlpack never changes what other libraries see. Capsule names are
module-level C strings: a capsule keeps a ``const char *`` to its name, so the
string must outlive every capsule.

webdlpack's capsules carry a C destructor (``py/native/capsule_destructor.c``,
loaded from ``webdlpack/_native/``: a Pyodide side module in the wheel, a native
build in a source checkout) that calls the struct's deleter when a capsule is
dropped unconsumed, with a consumer's pending exception put aside meanwhile.
Where no such library loads (a CPython wheel install), capsules have no
destructor and :mod:`webdlpack.exchange.export` frees dropped ones later.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from typing import Any

from ..core.errors import ErrorCode, WebDLPackBufferError, WebDLPackTypeError
from ..core.host import native_library, native_missing_reason

__all__ = [
    "NAME_VERSIONED",
    "NAME_LEGACY",
    "NAME_USED_VERSIONED",
    "NAME_USED_LEGACY",
    "CAPSULE_DESTRUCTOR",
    "CAPSULE_DESTRUCTOR_MISSING",
    "new_capsule",
    "capsule_name",
    "take_pointer",
]

_c_names = {
    name: ctypes.create_string_buffer(name.encode("ascii"))
    for name in ("dltensor_versioned", "dltensor", "used_dltensor_versioned", "used_dltensor")
}
#: Name of an unconsumed DLPack 1.x capsule.
NAME_VERSIONED = "dltensor_versioned"
#: Name of an unconsumed legacy (pre-1.0) capsule.
NAME_LEGACY = "dltensor"
#: Name a consumer gives a DLPack 1.x capsule it took.
NAME_USED_VERSIONED = "used_dltensor_versioned"
#: Name a consumer gives a legacy capsule it took.
NAME_USED_LEGACY = "used_dltensor"


def _api(name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
    proto = ctypes.PYFUNCTYPE(restype, *argtypes)
    return proto((name, ctypes.pythonapi))


_PyCapsule_New = _api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_PyCapsule_GetPointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)
_PyCapsule_GetName = _api("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_PyCapsule_SetName = _api("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)


def _cname(name: str) -> int:
    """Address of webdlpack's own C string for one of the four capsule names."""
    return ctypes.addressof(_c_names[name])


def _load_destructor() -> tuple[int | None, str | None]:
    """Address of ``wdl_py_capsule_destructor`` from ``webdlpack/_native/`` and None, or None and why not.

    ``WEBDLPACK_CAPSULE_DESTRUCTOR=0`` (or ``WEBDLPACK_NATIVE=0``) turns it off (the tests run both ways).
    """
    if os.environ.get("WEBDLPACK_CAPSULE_DESTRUCTOR") == "0":
        return None, "turned off (WEBDLPACK_CAPSULE_DESTRUCTOR=0)"
    path = native_library("capsule_destructor")
    if path is None:
        return None, native_missing_reason("capsule_destructor")
    try:
        fn = ctypes.CDLL(str(path)).wdl_py_capsule_destructor
    except (OSError, AttributeError) as err:  # a library built for another interpreter
        return None, f"{path.name} did not load: {err}"
    return ctypes.cast(fn, ctypes.c_void_p).value, None


#: The C destructor exported capsules get (None: none loaded; dropped capsules are freed later).
CAPSULE_DESTRUCTOR: int | None
#: Why exported capsules have no C destructor (None while they have one); ``webdlpack.info()`` reports it.
CAPSULE_DESTRUCTOR_MISSING: str | None
CAPSULE_DESTRUCTOR, CAPSULE_DESTRUCTOR_MISSING = _load_destructor()


def new_capsule(address: int, name: str, *, destructor: bool = True) -> Any:
    """Wrap ``address`` in a new PyCapsule called ``name``.

    Parameters
    ----------
    address : int
        The managed-tensor address (must not be 0).
    name : str
        :data:`NAME_VERSIONED` or :data:`NAME_LEGACY`.
    destructor : bool, default True
        Give it :data:`CAPSULE_DESTRUCTOR` (when loaded), which calls the
        struct's deleter if the capsule is dropped unconsumed.

    Returns
    -------
    PyCapsule
    """
    return _PyCapsule_New(address, _cname(name), CAPSULE_DESTRUCTOR if destructor else None)


def capsule_name(capsule: Any) -> str | None:
    """The name of ``capsule`` (``None`` for an unnamed capsule).

    Raises
    ------
    WebDLPackTypeError
        ``capsule`` is not a PyCapsule.
    """
    if type(capsule).__name__ != "PyCapsule":
        raise WebDLPackTypeError(
            ErrorCode.INVALID_ARGUMENT,
            "expected a DLPack capsule",
            field="capsule",
            value=type(capsule).__name__,
            expected="a PyCapsule from __dlpack__()",
        )
    raw = _PyCapsule_GetName(capsule)
    return None if raw is None else raw.decode("ascii", "replace")


def take_pointer(capsule: Any) -> tuple[int, bool]:
    """Consume a DLPack capsule: read its pointer and rename it to ``used_...``.

    After this returns the caller owns the managed tensor and must call its
    deleter exactly once; the capsule's destructor will leave it alone.

    Parameters
    ----------
    capsule : PyCapsule
        Named ``dltensor_versioned`` or ``dltensor``.

    Returns
    -------
    (address, versioned) : tuple of (int, bool)

    Raises
    ------
    WebDLPackTypeError
        Not a capsule (code ``INVALID_ARGUMENT``).
    WebDLPackBufferError
        Already consumed (code ``ALREADY_CONSUMED``), another kind of capsule or
        a NULL pointer; nothing was taken.
    """
    name = capsule_name(capsule)
    if name in (NAME_USED_VERSIONED, NAME_USED_LEGACY):
        raise WebDLPackBufferError(
            ErrorCode.ALREADY_CONSUMED,
            "this DLPack capsule was already consumed",
            field="capsule.name",
            value=name,
            expected="a fresh capsule: call __dlpack__() again for each import",
        )
    if name not in (NAME_VERSIONED, NAME_LEGACY):
        raise WebDLPackBufferError(
            ErrorCode.INVALID_ARGUMENT,
            "not a DLPack capsule",
            field="capsule.name",
            value=name,
            expected=f"{NAME_VERSIONED!r} or {NAME_LEGACY!r}",
        )
    versioned = name == NAME_VERSIONED
    address = _PyCapsule_GetPointer(capsule, _cname(name))
    if not address:
        raise WebDLPackBufferError(
            ErrorCode.NULL_POINTER,
            "DLPack capsule holds a NULL pointer",
            field="capsule.pointer",
            value=0,
            expected="a managed tensor address",
        )
    used = NAME_USED_VERSIONED if versioned else NAME_USED_LEGACY
    if _PyCapsule_SetName(capsule, _cname(used)) != 0:  # pragma: no cover - only fails on a non-capsule
        raise WebDLPackBufferError(
            ErrorCode.INVALID_ARGUMENT, "could not rename the capsule", field="capsule.name", value=name, expected=used
        )
    return int(address), versioned
