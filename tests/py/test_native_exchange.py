"""The native exchange module (py/native/exchange.c): an export made in C is byte for byte the struct the
Python path writes, its C deleter frees it exactly once through the same registry, a consumer's pending
error survives it, and bad calls get typed errors. Without the module (WEBDLPACK_NATIVE=0, as in a CPython
wheel install) the Python path does the same: the lifetime tests run again in a subprocess that way.
call_deleter (imported structs' deleters) is checked here on its direct path; through JS in
tests/py/pyodide_deleter_error.mjs (a JS deleter that throws comes back as a Python error).
Pyodide: tests/browser/python-*.spec.ts and `make bench` run the wasm32 build (the wheel ships it)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.api.managed import export_managed
from webdlpack.core import abi as _abi
from webdlpack.core.native import NATIVE
from webdlpack.exchange import export as _export

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(os.environ.get("WEBDLPACK_NATIVE") == "0", reason="native module turned off")


def deleter_of(address: int) -> int:
    return ctypes.c_void_p.from_address(address + _abi.DLManagedTensorVersioned.deleter.offset).value or 0


def test_the_module_is_built_in_this_checkout_and_exports_carry_its_deleter():
    assert NATIVE is not None, "make build compiles py/native/exchange.c into py/webdlpack/_native/"
    t = w.zeros((2, 3), "float32")
    address = export_managed(t)
    try:
        assert deleter_of(address) == NATIVE.deleter()
    finally:
        _export.release_export(address)


@pytest.mark.parametrize("shape, dtype", [((2, 3), "float32"), ((), "int64"), ((5,), "uint8"), ((1, 4, 2), "bfloat16")])
def test_a_native_export_is_the_struct_the_python_path_writes(shape, dtype):
    t = w.zeros(shape, dtype)
    address = export_managed(t)
    template = t._templates[2]
    try:
        size = len(template.native[0])
        made = ctypes.string_at(address, size)
        # the python path: the template's words with the shape/strides pointers patched to this block
        words = template.words.__copy__()
        words[template.pointer_word] = address + template.struct_size
        words[template.pointer_word + 1] = address + template.struct_size + template.array_bytes
        assert made == words.tobytes()  # exact: integer words of a struct, copied
        if dtype != "bfloat16":  # NumPy has no bfloat16
            assert np.from_dlpack(w.from_dlpack(t)).shape == shape  # and consumers read it
    finally:
        _export.release_export(address)


@pytest.mark.double_frees(1)
def test_the_c_deleter_frees_once_and_counts_a_second_call():
    t = w.zeros(3)
    before = _debug.export_stats()
    address = export_managed(t)
    owner_refs = sys.getrefcount(t._owner)
    deleter = _abi.DELETER(deleter_of(address))
    deleter(address)
    released_refs = sys.getrefcount(t._owner)  # a plain int: pytest's assert rewriting would hold the owner
    assert released_refs == owner_refs - 1  # the registry let go of the owner
    after = _debug.export_stats()
    assert after["live"] == before["live"] and after["created"] == before["created"] + 1
    deleter(address)  # a buggy consumer calls it again: nothing is freed, it is counted
    assert _debug.export_stats()["unknown_deletes"] == before["unknown_deletes"] + 1


def test_the_c_deleter_keeps_a_pending_exception():
    t = w.zeros((4,), "bfloat16")  # NumPy refuses bfloat16 and drops the capsule with its error set
    with pytest.raises(RuntimeError, match="Unsupported dtype") as err:
        np.from_dlpack(t)
    assert not isinstance(err.value, SystemError)


def test_bad_calls_get_typed_errors_and_register_nothing():
    live = len(_export._REGISTRY)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        NATIVE.export(b"")
    with pytest.raises(TypeError):
        NATIVE.export((b"", 1), None)
    with pytest.raises(ValueError, match="do not add up"):
        NATIVE.export((b"\0" * 16, 8, 0, 8), None)  # 8 + 2*8 != 16
    with pytest.raises(TypeError):
        NATIVE.export(("not bytes", 0, 0, 0), None)
    with pytest.raises(TypeError):
        NATIVE.bind(None, None)
    assert len(_export._REGISTRY) == live


def test_without_the_module_the_python_path_passes_the_lifetime_tests():
    env = {**os.environ, "WEBDLPACK_NATIVE": "0"}
    files = ["tests/py/test_lifetime.py", "tests/py/test_threads.py"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider", *files],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout


def test_call_deleter_calls_a_deleter_once_and_refuses_bad_arguments():
    t = w.zeros(3)
    before = _debug.export_stats()
    address = export_managed(t)
    NATIVE.call_deleter(deleter_of(address), address)  # CPython: no JS caller, so owner.py's fallback (ctypes)
    after = _debug.export_stats()
    assert after["live"] == before["live"] and after["unknown_deletes"] == before["unknown_deletes"]
    with pytest.raises(ValueError, match="NULL"):
        NATIVE.call_deleter(0, address)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        NATIVE.call_deleter(1)
    with pytest.raises(ValueError, match="non-zero table index and a callable"):
        NATIVE.set_js_deleter_caller(0, print)
    with pytest.raises(ValueError, match="non-zero table index and a callable"):
        NATIVE.set_js_deleter_caller(1, 5)


def test_same_bytes_compares_memory_with_expected_bytes():
    block = ctypes.create_string_buffer(b"webdlpack-struct", 16)
    address = ctypes.addressof(block)
    assert NATIVE.same_bytes(address, b"webdlpack-struct") is True
    assert NATIVE.same_bytes(address, b"webdlpack-strucX") is False
    assert NATIVE.same_bytes(address, b"") is True
    assert NATIVE.same_bytes(0, b"x") is False  # NULL is never the same
    with pytest.raises(TypeError):
        NATIVE.same_bytes(address, "not bytes")


def test_managed_owner_is_the_c_type_and_calls_its_deleter_exactly_once():
    from webdlpack.exchange.owner import ManagedOwner

    assert ManagedOwner.__mro__[1] is NATIVE.owner_type()
    calls: list[int] = []
    deleter = _abi.DELETER(lambda address: calls.append(address))
    address = ctypes.cast(deleter, ctypes.c_void_p).value
    before = _debug.import_stats()
    o = ManagedOwner(0x1000, True, address)
    assert (o.address, o.versioned, o.alive) == (0x1000, True, True)
    assert repr(o) == "<ManagedOwner 0x1000 live>"
    o.release()
    o.release()  # the second release does nothing
    assert calls == [0x1000] and not o.alive and repr(o) == "<ManagedOwner 0x1000 released>"
    p = ManagedOwner(0x2000, False, address)
    del p  # deallocation releases
    assert calls == [0x1000, 0x2000]
    ManagedOwner(0x3000, True, None).release()  # no deleter: nothing to call, still counted
    after = _debug.import_stats()
    assert after["adopted"] - before["adopted"] == 3 and after["released"] - before["released"] == 3
    assert after["live"] == before["live"]


def test_managed_owner_refuses_bad_arguments_and_a_second_init():
    from webdlpack.exchange.owner import ManagedOwner

    before = _debug.import_stats()
    with pytest.raises(TypeError, match="3 positional arguments"):
        ManagedOwner(0x1000, True)
    with pytest.raises(TypeError, match="3 positional arguments"):
        ManagedOwner(0x1000, True, 0, deleter=1)
    with pytest.raises(TypeError):
        ManagedOwner("x", True, 0)
    o = ManagedOwner(0x1000, True, 0)
    with pytest.raises(TypeError, match="already initialised"):
        o.__init__(0x2000, True, 0)
    assert o.address == 0x1000
    o.release()
    assert _debug.import_stats()["live"] == before["live"]


def test_the_deleter_fallback_is_python_owner_call_and_refuses_a_non_callable():
    from webdlpack.exchange import owner as _owner

    with pytest.raises(TypeError, match="callable"):
        NATIVE.set_deleter_fallback(5)
    with pytest.raises(TypeError, match="takes 1 argument"):
        NATIVE.set_deleter_fallback()
    NATIVE.set_deleter_fallback(_owner._call)  # what owner.py set at import (the refusals changed nothing)
    calls: list[int] = []
    deleter = _abi.DELETER(lambda address: calls.append(address))
    NATIVE.call_deleter(ctypes.cast(deleter, ctypes.c_void_p).value, 0x4000)  # through _call: ctypes on CPython
    assert calls == [0x4000]
