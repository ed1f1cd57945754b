"""The fast export/import paths: cached templates and validated views never hide a change."""

from __future__ import annotations

import ctypes

import pytest
import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.api import managed as _exchange
from webdlpack.core import raw as _raw
from webdlpack.core.abi import DLManagedTensorVersioned, DLTensor


def _fields(address: int) -> tuple:
    return _raw.unpack_at(_raw.MANAGED_VERSIONED, address)


def _shape_pointer(address: int) -> int:
    return _fields(address)[12]


def test_each_export_is_a_new_struct_with_its_own_arrays():
    t = w.zeros((2, 3), "int16")
    a, b = _exchange.export_managed(t), _exchange.export_managed(t)
    assert a != b and _shape_pointer(a) != _shape_pointer(b)
    fa, fb = _fields(a), _fields(b)
    # Same description (deleter, flags, data, device, dtype, byte_offset); only the array pointers differ.
    assert fa[:12] == fb[:12] and fa[14:] == fb[14:]
    for address in (a, b):
        shape_at, strides_at = _fields(address)[12:14]
        assert shape_at == address + ctypes.sizeof(DLManagedTensorVersioned)
        assert _raw.unpack_at(_raw.int64_array(2), shape_at) == (2, 3)
        assert _raw.unpack_at(_raw.int64_array(2), strides_at) == (3, 1)
    _exchange.import_managed(a).dispose()
    _exchange.import_managed(b).dispose()
    assert _debug.live_exports() == 0


def test_template_follows_the_version_and_disposal():
    t = w.zeros(4)
    versioned = _exchange.export_managed(t)
    legacy = _exchange.export_managed(t, versioned=False)
    assert _fields(versioned)[0] == 1  # DLPack major version first
    assert _raw.unpack_at(_raw.MANAGED_LEGACY, legacy)[3] == 1  # legacy struct starts with the DLTensor (ndim 1)
    _exchange.import_managed(versioned).dispose()
    _exchange.import_managed(legacy, versioned=False).dispose()
    t.dispose()
    with pytest.raises(ValueError):
        _exchange.export_managed(t)


def test_a_changed_struct_is_validated_again():
    t = w.zeros(4)
    ok = _exchange.import_managed(_exchange.export_managed(t))  # this view is now cached
    bad = _exchange.export_managed(t)
    ctypes.c_int64.from_address(_shape_pointer(bad)).value = -4  # same fields, corrupt extent
    before = _debug.export_stats()["deleted"]
    with pytest.raises(ValueError) as err:
        _exchange.import_managed(bad)
    assert err.value.field == "DLTensor.shape[0]"
    assert _debug.export_stats()["deleted"] == before + 1, "a refused struct is released once"
    ok.dispose()


def test_reads_past_the_memory_view_span_use_the_fallback(monkeypatch):
    monkeypatch.setattr(_raw, "_SPAN", 0)  # every read now goes through a ctypes array
    t = w.from_buffer(bytearray(range(6)), shape=(2, 3))
    u = _exchange.import_managed(_exchange.export_managed(t))
    assert u.tolist() == [[0, 1, 2], [3, 4, 5]] and u.data_ptr == t.data_ptr
    u.dispose()


def test_struct_formats_match_the_ctypes_layout():
    lay = w.layout()
    assert _raw.MANAGED_VERSIONED.size == lay["DLManagedTensorVersioned"]["size"]
    assert _raw.MANAGED_LEGACY.size == lay["DLManagedTensor"]["size"]
    assert DLTensor.strides.offset - DLTensor.shape.offset == ctypes.sizeof(ctypes.c_void_p)
