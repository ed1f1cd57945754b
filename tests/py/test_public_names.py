"""Every public name of ``webdlpack`` exists on every host, whatever was imported first.

On CPython the functions that need Pyodide's JS bridge are there too, and
raise a typed error saying why instead of being missing.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import webdlpack
from webdlpack import ErrorCode, WebDLPackBufferError

BRIDGE_NAMES = ("to_js", "from_js", "is_js_tensor")


def test_every_name_in_all_exists_and_the_bridge_functions_are_listed() -> None:
    missing = [name for name in webdlpack.__all__ if not hasattr(webdlpack, name)]
    assert missing == []
    for name in BRIDGE_NAMES:
        assert name in webdlpack.__all__
        assert callable(getattr(webdlpack, name))


def test_the_names_do_not_depend_on_what_was_imported_first() -> None:
    # A fresh interpreter that imports a submodule first sees the same public names.
    code = (
        "import webdlpack.bridge.js, webdlpack.api.js_tensors\n"
        "import webdlpack\n"
        "print(','.join(sorted(webdlpack.__all__)))"
    )
    first = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert first.split(",") == sorted(webdlpack.__all__)


@pytest.mark.parametrize("name", ["to_js", "from_js"])
def test_bridge_functions_raise_a_typed_error_saying_why_outside_pyodide(name: str) -> None:
    t = webdlpack.zeros((3,), "float32")
    arg = t if name == "to_js" else object()
    with pytest.raises(WebDLPackBufferError) as info:
        getattr(webdlpack, name)(arg)
    err = info.value
    assert err.code == ErrorCode.UNSUPPORTED
    assert "Pyodide" in str(err) and "loadWebDLPack" in str(err)
    assert err.field == "webdlpack_js"
    t.dispose()


def test_is_js_tensor_is_false_outside_pyodide() -> None:
    t = webdlpack.zeros((3,), "float32")
    assert webdlpack.is_js_tensor(t) is False
    assert webdlpack.is_js_tensor(object()) is False
    t.dispose()
