"""The CPython build of webdlpack: the package, plus its two native libraries built with the user's C compiler.

Everything else (name, version, extras, licence) is in pyproject.toml. The native libraries come from
``py/native/*.c`` (shipped in the sdist): ``exchange``, an extension module (the export/deleter hot path), and
``capsule_destructor``, a shared library loaded with ctypes. Neither includes ``Python.h`` (both declare the
stable-ABI pieces they use, ``py/native/python_abi.h``), so a C compiler is all they need, and one build serves
every CPython from 3.11 on: the wheel is tagged ``cp311-abi3-<platform>``.

Where no compiler works, the build says so (a warning naming the error), ships the pure-Python package, and
tags the wheel ``py3-none-any``: webdlpack then does the same work in Python. ``webdlpack.info()`` reports which
ran and why, from ``webdlpack/_native/build-info.json`` written here. Pyodide's wheel is not built here (its
libraries are emscripten side modules): ``scripts/build_pyodide_wheel.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _native_host() -> str:
    """``NATIVE_HOST`` of ``py/webdlpack/core/host.py``: the one place the library file names are decided."""
    spec = importlib.util.spec_from_file_location("_webdlpack_host", ROOT / "py/webdlpack/core/host.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.NATIVE_HOST)


NATIVE_HOST = _native_host()
#: Each library: the extension name and its C sources (the headers are found through include_dirs).
LIBRARIES = {
    "capsule_destructor": ["py/native/capsule_destructor.c"],
    "exchange": [
        "py/native/exchange.c",
        "py/native/deleters.c",
        "py/native/owner.c",
        "py/native/adopt.c",
        "py/native/functions.c",
    ],
}
#: What build_ext records beside the libraries (read by webdlpack.core.host).
BUILD_INFO = "build-info.json"


class BuildNativeOrFallBack(build_ext):
    """Build each native library; one that fails is left out with a warning saying why (pure Python runs)."""

    def get_ext_filename(self, fullname: str) -> str:
        """``webdlpack/_native/<stem>.<NATIVE_HOST>.so``, the name ``webdlpack.core.host`` looks for."""
        *package, stem = fullname.split(".")
        return os.path.join(*package, f"{stem}.{NATIVE_HOST}.so")

    def run(self) -> None:
        self.webdlpack_results: dict[str, str] = {}
        try:
            super().run()
        except Exception as err:  # no compiler at all: build_ext fails before any extension
            for ext in self.extensions:
                self.webdlpack_results.setdefault(ext.name.rsplit(".", 1)[-1], f"no C compiler: {err}")
        self._report()

    def build_extension(self, ext: Extension) -> None:
        stem = ext.name.rsplit(".", 1)[-1]
        try:
            super().build_extension(ext)
        except Exception as err:  # CompileError, LinkError, a missing compiler (DistutilsExecError)...
            self.webdlpack_results[stem] = f"build failed: {type(err).__name__}: {err}"
            return
        self.webdlpack_results[stem] = "built"

    def _report(self) -> None:
        """Warn about each library left out, and write build-info.json beside the libraries."""
        failed = {stem: why for stem, why in self.webdlpack_results.items() if why != "built"}
        for stem, why in failed.items():
            warnings.warn(
                f"webdlpack: the native {stem} library was not built ({why}); the pure-Python implementation will "
                "run instead (same results, slower exports). Install a C compiler (gcc/clang) and reinstall "
                "to get it.",
                stacklevel=1,
            )
        # Nothing compiled at all: the wheel is pure Python (WheelTellsWhatItHolds tags it so).
        self.distribution.webdlpack_nothing_built = len(failed) == len(self.webdlpack_results)  # type: ignore[attr-defined]
        out = Path(self.get_ext_fullpath("webdlpack._native.exchange")).parent
        out.mkdir(parents=True, exist_ok=True)
        info = {"host": NATIVE_HOST, "libraries": self.webdlpack_results}
        (out / BUILD_INFO).write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")  # in build_lib: in the wheel


class WheelTellsWhatItHolds(bdist_wheel):
    """``cp311-abi3-<platform>`` when the native libraries are in it; ``py3-none-any`` when none could be built."""

    def get_tag(self) -> tuple[str, str, str]:
        if getattr(self.distribution, "webdlpack_nothing_built", False):
            self.root_is_pure = True  # nothing compiled is inside: say so in WHEEL and in the name
            return ("py3", "none", "any")
        return super().get_tag()


setup(
    ext_modules=[
        Extension(
            f"webdlpack._native.{stem}",
            sources=sources,
            include_dirs=["py/native", "wasm/include"],
            extra_compile_args=["-std=c11", "-O2"],
            py_limited_api=True,
        )
        for stem, sources in LIBRARIES.items()
    ],
    cmdclass={"build_ext": BuildNativeOrFallBack, "bdist_wheel": WheelTellsWhatItHolds},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
