"""webdlpack's native exchange module (``py/native/exchange.c``), where it is built (a host-level fact, so floor 0).

It does an export's copy-and-register in one C call, gives exported structs a C deleter, and calls the
deleters of imported structs (through JS's try/catch caller in Pyodide), so
a consumer frees an export without running Python code through a ctypes callback. In Pyodide
the wheel ships it as an extension module built for wasm32; in a source checkout ``make build``
builds it for the CPython that runs the tests. Where it is absent (a CPython wheel install) or
turned off (``WEBDLPACK_NATIVE=0``), :mod:`webdlpack.exchange.export` does the same in Python.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import warnings
from typing import Any

from .host import native_library, native_missing_reason

__all__ = ["NATIVE", "NATIVE_FALLBACK_REASON"]

_NAME = "webdlpack._native.exchange"


def _load() -> tuple[Any | None, str | None]:
    """The module and None, or None and why it is not loaded."""
    path = native_library("exchange")
    if path is None:
        return None, native_missing_reason("exchange")
    loader = importlib.machinery.ExtensionFileLoader(_NAME, str(path))
    spec = importlib.util.spec_from_file_location(_NAME, str(path), loader=loader)
    if spec is None:  # pragma: no cover - only for a path importlib cannot describe
        return None, f"importlib cannot load {path}"
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError as err:  # a library built for another interpreter
        return None, f"{path.name} did not load: {err}"
    return module, None


#: The loaded module (``bind``, ``export``, ``deleter``, ``counters``, ``set_js_deleter_caller``, ``call_deleter``),
#: or None; then :data:`NATIVE_FALLBACK_REASON` says why (``webdlpack.info()`` reports it).
NATIVE: Any | None
#: Why the pure-Python exchange runs (None while the native module is loaded).
NATIVE_FALLBACK_REASON: str | None
NATIVE, NATIVE_FALLBACK_REASON = _load()
if NATIVE_FALLBACK_REASON is not None and NATIVE_FALLBACK_REASON.startswith("not built when"):
    # The install tried to compile it and could not: say so once (webdlpack.info() has the details).
    warnings.warn(
        f"webdlpack runs its pure-Python exchange: the native module was {NATIVE_FALLBACK_REASON}",
        RuntimeWarning,
        stacklevel=2,
    )
