"""from_dlpack / from_capsule: validation of hand-made structs, versions, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
import webdlpack as w
from handmade import DLPackObject, Producer
from webdlpack.core import abi as _abi


def test_well_formed_versioned_struct():
    p = Producer(shape=(2, 3), dtype=(0, 16, 1))
    t = w.from_capsule(p.capsule())
    assert t.shape == (2, 3) and t.dtype == w.dtype("int16") and t.tolist() == [[0] * 3] * 2
    assert p.deleted == 0
    t.dispose()
    assert p.calls == [p.address]


def test_well_formed_legacy_struct():
    p = Producer(shape=(4,), versioned=False)
    t = w.from_capsule(p.capsule())
    assert t.shape == (4,) and t.flags.read_only  # a legacy struct cannot say it may be written: read-only
    del t
    assert p.deleted == 1


def test_legacy_import_is_read_only_and_re_exported_read_only():
    """Issue 12 item 7: NumPy marks data from a ``dltensor`` capsule read-only; so does webdlpack, and keeps it so."""
    p = Producer(shape=(4,), versioned=False)
    t = w.from_capsule(p.capsule())
    with pytest.raises(TypeError):
        t.memoryview()[0] = 1.0
    again = w.from_dlpack(t)  # a DLPack 1.x re-export carries READ_ONLY
    assert again.flags.read_only
    arr = np.from_dlpack(t)
    assert not arr.flags.writeable
    with pytest.raises(BufferError):
        t.__dlpack__()  # a legacy re-export cannot say read-only: refused, as NumPy does
    writable = t.copy()
    assert not writable.flags.read_only
    del arr
    again.dispose(), t.dispose()
    assert p.deleted == 1


MALFORMED = [
    # (kwargs for Producer, error class, code, field)
    (dict(ndim=-1), ValueError, "BAD_NDIM", "DLTensor.ndim"),
    (dict(shape=(1,) * 33), ValueError, "BAD_NDIM", "DLTensor.ndim"),
    (dict(shape=(2, -3)), ValueError, "BAD_SHAPE", "DLTensor.shape[1]"),
    (dict(shape=(3,), null_shape=True), ValueError, "NULL_POINTER", "DLTensor.shape"),
    (dict(shape=(2**40, 2**40)), ValueError, "SIZE_OVERFLOW", "DLTensor.shape"),
    (dict(dtype=(42, 32, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.code"),
    (dict(dtype=(2, 24, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.bits"),
    (dict(dtype=(17, 8, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.bits"),  # fp4 must be 4 bits
    (dict(dtype=(15, 8, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.bits"),  # fp6 must be 6 bits
    (dict(dtype=(10, 16, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.bits"),  # fp8 must be 8 bits
    (dict(dtype=(6, 1, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.bits"),  # bool is one byte
    (dict(dtype=(2, 32, 0)), ValueError, "BAD_DTYPE", "DLTensor.dtype.lanes"),
    (dict(dtype=(3, 12, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.bits"),  # handle: 8/16/32/64
    (dict(dtype=(0, 3, 1)), ValueError, "BAD_DTYPE", "DLTensor.dtype.bits"),  # int: 1/2/4/8/.../64
    (dict(shape=(4, 2), dtype=(0, 4, 1), strides=(1, 4)), ValueError, "BAD_STRIDES", "DLTensor.strides"),
    (dict(flags=1 << 5), ValueError, "BAD_FLAGS", "DLManagedTensorVersioned.flags"),
    (dict(flags=1 << 63), ValueError, "BAD_FLAGS", "DLManagedTensorVersioned.flags"),
    (dict(shape=(4,), data=0), ValueError, "NULL_POINTER", "DLTensor.data"),
    (dict(device=(5, 0)), ValueError, "BAD_DEVICE", "DLTensor.device.device_type"),
    (dict(device=(1, 2)), ValueError, "BAD_DEVICE", "DLTensor.device.device_id"),
    (dict(device=(15, -1)), ValueError, "BAD_DEVICE", "DLTensor.device.device_id"),
    # Past 2^53 - 1 (spec/validation-rules.json: byte_offset_past_2_53, stride_past_2_53).
    (dict(shape=(4,), byte_offset=2**64 - 8), ValueError, "SIZE_OVERFLOW", "DLTensor.byte_offset"),
    (dict(shape=(4,), strides=(-(2**62),)), ValueError, "BAD_STRIDES", "DLTensor.strides[0]"),
    (dict(shape=(4,), dtype=(1, 8, 1), strides=(-(2**50),)), ValueError, "OUT_OF_BOUNDS", "DLTensor.strides"),
    (dict(shape=(4, 2), dtype=(17, 4, 1), strides=(1, 4)), ValueError, "BAD_STRIDES", "DLTensor.strides"),
]


@pytest.mark.parametrize(
    "kwargs,cls,code,field", MALFORMED, ids=[f"{m[2]}-{m[3]}-{i}" for i, m in enumerate(MALFORMED)]
)
def test_malformed_struct_is_refused_and_released(kwargs, cls, code, field):
    p = Producer(**kwargs)
    cap = p.capsule()
    with pytest.raises(cls) as err:
        w.from_capsule(cap)
    assert isinstance(err.value, w.WebDLPackError)
    assert err.value.code.name == code and err.value.field == field
    assert field in str(err.value) and "value" in str(err.value)
    assert p.deleted == 1  # refused, but the deleter still ran exactly once
    assert "used_" in repr(cap)


def test_null_data_with_zero_size_is_fine():
    p = Producer(shape=(0,), data=0)
    t = w.from_capsule(p.capsule())
    assert t.size == 0 and t.tolist() == []
    t.dispose()
    assert p.deleted == 1


def test_subbyte_types_accepted_with_right_bits():
    for code, bits, name in [
        (17, 4, "float4_e2m1fn"),
        (15, 6, "float6_e2m3fn"),
        (10, 8, "float8_e4m3fn"),
        (4, 16, "bfloat16"),
    ]:
        p = Producer(shape=(4,), dtype=(code, bits, 1), flags=_abi.FLAG_IS_SUBBYTE_TYPE_PADDED if bits < 8 else 0)
        t = w.from_capsule(p.capsule())
        assert t.dtype.name == name
        with pytest.raises(BufferError):
            t.memoryview()
        if name == "bfloat16":
            assert t.tolist() == [0.0] * 4
        t.dispose()
        assert p.deleted == 1


def test_major_version_mismatch_calls_deleter_and_names_versions():
    p = Producer(version=(2, 0))
    with pytest.raises(BufferError) as err:
        w.from_capsule(p.capsule())
    assert err.value.code == w.ErrorCode.VERSION_MISMATCH
    assert "DLPack 2.0" in str(err.value) and "1.1" in str(err.value)
    assert p.deleted == 1


def test_newer_minor_version_is_accepted():
    p = Producer(version=(1, 9))
    t = w.from_capsule(p.capsule())
    t.dispose()
    assert p.deleted == 1


def test_used_capsule_is_refused_without_touching_it():
    p = Producer()
    cap = p.capsule()
    t = w.from_capsule(cap)
    with pytest.raises(BufferError) as err:
        w.from_capsule(cap)
    assert err.value.code == w.ErrorCode.ALREADY_CONSUMED and err.value.value == "used_dltensor_versioned"
    t.dispose()
    assert p.deleted == 1


def test_foreign_capsule_and_non_capsule():
    p = Producer()
    with pytest.raises(BufferError) as err:
        w.from_capsule(p.capsule("something_else"))
    assert err.value.field == "capsule.name"
    with pytest.raises(TypeError):
        w.from_capsule(object())
    assert p.deleted == 0  # nothing was taken


def test_from_dlpack_requires_protocol():
    with pytest.raises(AttributeError):
        w.from_dlpack(b"bytes are not DLPack producers")


def test_from_dlpack_passes_keywords():
    p = Producer()
    obj = DLPackObject(p)
    t = w.from_dlpack(obj)
    assert obj.calls == [{"max_version": (1, 1)}]
    t.dispose()
    p2 = Producer()
    obj2 = DLPackObject(p2)
    t2 = w.from_dlpack(obj2, device="cpu", copy=False)
    assert obj2.calls == [{"max_version": (1, 1), "dl_device": (w.DLDeviceType.kDLCPU, 0), "copy": False}]
    t2.dispose()
    assert p.deleted == p2.deleted == 1


def test_from_dlpack_falls_back_for_old_producers():
    p = Producer(versioned=False, shape=(3,))
    obj = DLPackObject(p, legacy_signature=True)
    t = w.from_dlpack(obj)
    assert obj.calls == [{}] and t.shape == (3,)
    t.dispose()
    assert p.deleted == 1


def test_from_dlpack_fallback_copy_is_made_locally():
    p = Producer(versioned=False, shape=(3,))
    obj = DLPackObject(p, legacy_signature=True)
    t = w.from_dlpack(obj, copy=True)
    assert t.flags.is_copied and t.data_ptr != p.struct.dl_tensor.data
    assert p.deleted == 1  # the producer's struct was released once the copy existed
    t.dispose()


def test_from_dlpack_device_mismatch_releases_struct():
    p = Producer(device=(15, 0))  # producer lies: says CPU, gives WebGPU
    obj = DLPackObject(p, device=(1, 0))
    with pytest.raises(BufferError) as err:
        w.from_dlpack(obj)
    assert err.value.code == w.ErrorCode.BAD_DEVICE
    assert p.deleted == 1


def test_from_dlpack_copy_false_but_producer_copied():
    p = Producer(flags=_abi.FLAG_IS_COPIED)
    with pytest.raises(BufferError):
        w.from_dlpack(DLPackObject(p), copy=False)
    assert p.deleted == 1


def test_webgpu_tensor_imports_but_has_no_host_access():
    p = Producer(device=(15, 0), data=0x1000_0000)
    t = w.from_capsule(p.capsule())
    assert str(t.device) == "webgpu:0" and t.__dlpack_device__() == (15, 0) and t.data_ptr == 0x1000_0000
    for fn in (t.memoryview, t.tolist, t.copy):
        with pytest.raises(BufferError):
            fn()
    with pytest.raises(Exception) as err:
        np.from_dlpack(t)  # NumPy cannot use WebGPU data and refuses the capsule
    # NumPy drops the unconsumed capsule while its own error is set; that error
    # comes out unchanged (no SystemError) and the export is released once
    # (the autouse fixture checks).
    assert isinstance(err.value, (RuntimeError, BufferError)) and not isinstance(err.value, SystemError)
    # but it re-exports to another DLPack consumer as the same GPU pointer
    u = w.from_dlpack(t)
    assert u.data_ptr == t.data_ptr and str(u.device) == "webgpu:0"
    u.dispose(), t.dispose()
    assert p.deleted == 1
