"""webdlpack ⇄ tvm_ffi (PyPI apache-tvm-ffi, TVM's FFI: the tensors tvmjs's runtime is built on) through DLPack.

Both ways zero-copy on CPython: the same data pointer, writes seen through both, and each side's
owner kept alive by the other until it is dropped.
"""

from __future__ import annotations

import gc

import numpy as np
import tvm_ffi  # a required dev dependency (pyproject [dev])
import webdlpack as w


def test_tvm_ffi_imports_webdlpack_tensors_without_copying():
    t = w.zeros((3, 4), "float32")
    f = tvm_ffi.from_dlpack(t)
    assert f.data_ptr() == t.data_ptr
    assert tuple(f.shape) == (3, 4) and str(f.dtype) == "float32" and str(f.device) == "cpu:0"
    t.memoryview().cast("B").cast("f")[5] = 2.5  # written through webdlpack ...
    assert np.from_dlpack(f)[1, 1] == 2.5  # ... read through tvm_ffi
    del f
    gc.collect()


def test_webdlpack_imports_tvm_ffi_tensors_without_copying():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    f = tvm_ffi.from_dlpack(a)
    t = w.from_dlpack(f)
    assert t.data_ptr == f.data_ptr() == a.ctypes.data
    assert t.shape == (3, 4) and t.tolist()[2] == [8, 9, 10, 11]
    assert not t.flags.is_copied


def test_tvm_ffi_keeps_the_webdlpack_tensor_alive_until_dropped():
    from webdlpack.api import debug

    before = debug.live_exports()
    t = w.zeros((6,), "float32")
    t.memoryview()[3] = 4.0
    ptr = t.data_ptr
    f = tvm_ffi.from_dlpack(t)
    del t
    gc.collect()
    assert f.data_ptr() == ptr and debug.live_exports() == before + 1
    assert np.from_dlpack(f).tolist() == [0.0, 0.0, 0.0, 4.0, 0.0, 0.0]
    del f
    gc.collect()
    assert debug.live_exports() == before
