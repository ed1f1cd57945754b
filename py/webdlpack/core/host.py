"""The host Python runs on: native CPython or Pyodide (CPython compiled to wasm32).

webdlpack uses the same ctypes code on both. On CPython "wasm memory" is simply
the process memory and pointers are 8 bytes; in Pyodide the process memory *is*
the wasm linear memory, pointers are 4 bytes, and JavaScript can read the same
bytes through ``HEAPU8``. This module decides which host we are on, once, at
import time, so the rest of the package can ask instead of guessing.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from pathlib import Path

__all__ = ["IS_PYODIDE", "HOST_NAME", "POINTER_SIZE", "POINTER_BITS", "MAX_ADDRESS", "NATIVE_HOST", "native_library"]

#: True when running inside Pyodide (``sys.platform == "emscripten"``).
IS_PYODIDE: bool = sys.platform == "emscripten" or "pyodide" in sys.modules

#: ``"pyodide"`` or ``"cpython"``; used in messages and by the tests.
HOST_NAME: str = "pyodide" if IS_PYODIDE else "cpython"

#: Size of a C pointer in bytes: 4 in Pyodide (wasm32), 8 on 64-bit CPython.
POINTER_SIZE: int = ctypes.sizeof(ctypes.c_void_p)

#: Size of a C pointer in bits.
POINTER_BITS: int = 8 * POINTER_SIZE

#: The largest byte address a pointer can hold (``2**POINTER_BITS - 1``).
MAX_ADDRESS: int = (1 << POINTER_BITS) - 1

#: How webdlpack's native libraries are named for this interpreter: ``emscripten-wasm32`` in Pyodide,
#: ``<sys.platform>-<machine>`` natively (``py/webdlpack/_native/<stem>.<NATIVE_HOST>.so``).
NATIVE_HOST: str = "emscripten-wasm32" if IS_PYODIDE else f"{sys.platform}-{platform.machine()}"


def native_library(stem: str) -> Path | None:
    """Path of webdlpack's native library ``stem`` built for this interpreter, or None where it is not built.

    ``WEBDLPACK_NATIVE=0`` hides every native library (the tests run the package both ways).
    """
    if os.environ.get("WEBDLPACK_NATIVE") == "0":
        return None
    path = Path(__file__).resolve().parent.parent / "_native" / f"{stem}.{NATIVE_HOST}.so"
    return path if path.is_file() else None
