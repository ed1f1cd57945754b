"""The address-level seam for the JS bridge: export_managed / import_managed."""

from __future__ import annotations

import numpy as np
import pytest
import webdlpack as w
from handmade import Producer
from webdlpack.api import debug as _debug
from webdlpack.api import managed as _exchange
from webdlpack.core import abi as _abi


def test_export_then_import_by_address():
    t = w.from_buffer(np.arange(6, dtype="int32").reshape(2, 3))
    addr = _exchange.export_managed(t)
    assert addr > 0 and _debug.live_exports() == 1
    u = _exchange.import_managed(addr)
    assert u.tolist() == [[0, 1, 2], [3, 4, 5]] and u.data_ptr == t.data_ptr
    u.dispose()
    assert _debug.live_exports() == 0


def test_export_managed_legacy_struct():
    t = w.zeros(2)
    addr = _exchange.export_managed(t, versioned=False)
    u = _exchange.import_managed(addr, versioned=False)
    assert u.shape == (2,)
    u.dispose()
    with pytest.raises(BufferError):
        _exchange.export_managed(w.from_buffer(b"ab"), versioned=False)


def test_export_managed_of_numpy_array_keeps_it_alive():
    a = np.arange(3.0)
    addr = _exchange.export_managed(a)
    s = _abi.DLManagedTensorVersioned.from_address(addr)
    assert s.dl_tensor.data == a.__array_interface__["data"][0]
    del a
    u = _exchange.import_managed(addr)
    assert u.tolist() == [0.0, 1.0, 2.0]
    u.dispose()


def test_import_managed_struct_written_by_someone_else():
    p = Producer(shape=(2, 2), dtype=(0, 64, 1))
    u = _exchange.import_managed(p.address)
    assert u.shape == (2, 2) and u.dtype.name == "int64"
    u.dispose()
    assert p.deleted == 1


def test_import_managed_null_and_bad_version():
    with pytest.raises(ValueError) as err:
        _exchange.import_managed(0)
    assert err.value.code == w.ErrorCode.NULL_POINTER
    p = Producer(version=(0, 9))
    with pytest.raises(BufferError):
        _exchange.import_managed(p.address)
    assert p.deleted == 1


def test_disposed_tensor_cannot_be_exported_by_address():
    t = w.zeros(1)
    t.dispose()
    with pytest.raises(ValueError):
        _exchange.export_managed(t)


def test_js_bridge_is_pyodide_only():
    from webdlpack.api import js_tensors

    assert w.to_js is js_tensors.to_js and w.from_js is js_tensors.from_js  # bound on every host (test_public_names.py)
    t = w.zeros(2)
    before = _debug.live_exports()
    with pytest.raises(w.WebDLPackBufferError, match="Pyodide") as info:
        js_tensors.to_js(t)
    assert info.value.code == w.ErrorCode.UNSUPPORTED
    assert _debug.live_exports() == before  # the export JS never took was released
    with pytest.raises(w.WebDLPackBufferError, match="Pyodide"):
        js_tensors.from_js(object())
    assert js_tensors.is_js_tensor(t) is False
    t.dispose()
