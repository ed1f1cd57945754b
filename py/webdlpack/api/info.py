"""``webdlpack.info()``: which implementation runs, on which Python, and why a fallback happened."""

from __future__ import annotations

import platform

from ..core.host import HOST_NAME, NATIVE_HOST, PLATFORM_TAG, PYODIDE_VERSION
from ..core.native import NATIVE, NATIVE_FALLBACK_REASON
from ..exchange.capsule import CAPSULE_DESTRUCTOR, CAPSULE_DESTRUCTOR_MISSING

__all__ = ["info"]


def info() -> dict[str, object]:
    """Describe what runs: the host, its Python (and Pyodide), and the native or pure-Python exchange.

    Returns
    -------
    dict
        ``host`` (``"cpython"`` or ``"pyodide"``), ``python`` (its version), ``pyodide`` (Pyodide's version, or
        None), ``platform`` (the wheel platform tag this interpreter takes), ``native_host`` (the name the native
        libraries are built under), ``exchange`` (``"native"``: the C module does exports and deleter calls;
        ``"python"``: the pure-Python fallback does the same work), ``capsule_destructor`` (``"native"``, or
        ``"none"``: dropped capsules are freed later, by Python), and ``fallback`` (for each library not loaded,
        why: turned off, not built, or what the install's compiler said; empty when both run).

    Examples
    --------
    >>> webdlpack.info()["exchange"]  # doctest: +SKIP
    'native'
    """
    fallback = {
        name: reason
        for name, reason in (("exchange", NATIVE_FALLBACK_REASON), ("capsule_destructor", CAPSULE_DESTRUCTOR_MISSING))
        if reason is not None
    }
    return {
        "host": HOST_NAME,
        "python": platform.python_version(),
        "pyodide": PYODIDE_VERSION,
        "platform": PLATFORM_TAG,
        "native_host": NATIVE_HOST,
        "exchange": "native" if NATIVE is not None else "python",
        "capsule_destructor": "native" if CAPSULE_DESTRUCTOR is not None else "none",
        "fallback": fallback,
    }
