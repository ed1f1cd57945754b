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
from typing import Any

from .host import native_library

__all__ = ["NATIVE"]

_NAME = "webdlpack._native.exchange"


def _load() -> Any | None:
    path = native_library("exchange")
    if path is None:
        return None
    loader = importlib.machinery.ExtensionFileLoader(_NAME, str(path))
    spec = importlib.util.spec_from_file_location(_NAME, str(path), loader=loader)
    if spec is None:  # pragma: no cover - only for a path importlib cannot describe
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError:  # pragma: no cover - a library built for another interpreter
        return None
    return module


#: The loaded module (``bind``, ``export``, ``deleter``, ``counters``, ``set_js_deleter_caller``, ``call_deleter``),
#: or None.
NATIVE: Any | None = _load()
