"""The host Python runs on: native CPython or Pyodide (CPython compiled to wasm32).

webdlpack uses the same ctypes code on both. On CPython "wasm memory" is simply
the process memory and pointers are 8 bytes; in Pyodide the process memory *is*
the wasm linear memory, pointers are 4 bytes, and JavaScript can read the same
bytes through ``HEAPU8``. This module decides which host we are on, once, at
import time, so the rest of the package can ask instead of guessing.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import sys
import sysconfig
from pathlib import Path

__all__ = [
    "IS_PYODIDE",
    "HOST_NAME",
    "POINTER_SIZE",
    "POINTER_BITS",
    "MAX_ADDRESS",
    "NATIVE_HOST",
    "NATIVE_DIR",
    "PYODIDE_VERSION",
    "PLATFORM_TAG",
    "native_library",
    "native_missing_reason",
]

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

#: Pyodide's version (``"314.0.7"``), or None on CPython.
PYODIDE_VERSION: str | None = getattr(sys.modules.get("pyodide"), "__version__", None) if IS_PYODIDE else None


def _platform_tag() -> str:
    """The wheel platform tag of this interpreter: Pyodide's ABI (``pyemscripten_2026_0_wasm32``), else the OS's.

    Pyodide 0.29 and later name theirs ``pyemscripten_<PYEMSCRIPTEN_PLATFORM_VERSION>_wasm32``, older ones
    ``pyodide_<PYODIDE_ABI_VERSION>_wasm32`` (the JS loader's wheel check, js/src/bridge/pyodide.ts, reads the same
    two variables).
    """
    if IS_PYODIDE:
        pyemscripten = sysconfig.get_config_var("PYEMSCRIPTEN_PLATFORM_VERSION")
        if pyemscripten:
            return f"pyemscripten_{pyemscripten}_wasm32"
        return f"pyodide_{sysconfig.get_config_var('PYODIDE_ABI_VERSION')}_wasm32"
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


#: Which wheels fit this interpreter, by platform tag.
PLATFORM_TAG: str = _platform_tag()

#: Where the native libraries are: ``webdlpack/_native/`` (the wheels ship them; ``make build`` builds them in a
#: checkout). setup.py also writes ``build-info.json`` there: which libraries it built, and why any was not.
NATIVE_DIR: Path = Path(__file__).resolve().parent.parent / "_native"


def native_library(stem: str) -> Path | None:
    """Path of webdlpack's native library ``stem`` built for this interpreter, or None where it is not built.

    ``WEBDLPACK_NATIVE=0`` hides every native library (the tests run the package both ways).
    """
    if os.environ.get("WEBDLPACK_NATIVE") == "0":
        return None
    path = NATIVE_DIR / f"{stem}.{NATIVE_HOST}.so"
    return path if path.is_file() else None


def native_missing_reason(stem: str) -> str:
    """Why :func:`native_library` finds no library ``stem``: turned off, or what the install's build said.

    Parameters
    ----------
    stem : str
        ``"exchange"`` or ``"capsule_destructor"``.

    Returns
    -------
    str
        ``"WEBDLPACK_NATIVE=0"``; the build's own words (``setup.py`` recorded that no compiler worked); or that
        no library was built for this host.
    """
    if os.environ.get("WEBDLPACK_NATIVE") == "0":
        return "turned off (WEBDLPACK_NATIVE=0)"
    try:
        built = json.loads((NATIVE_DIR / "build-info.json").read_text())["libraries"][stem]
    except (OSError, ValueError, KeyError, TypeError):
        built = None
    if isinstance(built, str) and built != "built":
        return f"not built when webdlpack was installed: {built}"
    return f"not built for {NATIVE_HOST} (no {stem}.{NATIVE_HOST}.so in {NATIVE_DIR})"
