"""Tensor.__dlpack__: capsule names, versions, copy / device / stream rules."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.core import abi as _abi
from webdlpack.exchange.capsule import capsule_name


def _struct(capsule):
    """Consume a capsule and return (tensor, raw managed struct view) for inspection."""
    t = w.from_capsule(capsule)
    owner = t._owner
    struct = (_abi.DLManagedTensorVersioned if owner.versioned else _abi.DLManagedTensor).from_address(owner.address)
    return t, struct


def test_versioned_capsule_when_max_version_given():
    t = w.zeros((2, 2), "int32")
    for mv in [(1, 0), (1, 1), (1, 7), (2, 0)]:
        cap = t.__dlpack__(max_version=mv)
        assert capsule_name(cap) == "dltensor_versioned"
        u, s = _struct(cap)
        assert (s.version.major, s.version.minor) == (1, 1)
        assert s.flags == 0
        assert capsule_name(cap) == "used_dltensor_versioned"
        u.dispose()


def test_legacy_capsule_when_max_version_none_or_old_major():
    t = w.zeros(3, "uint8")
    for mv in [None, (0, 8)]:
        cap = t.__dlpack__(max_version=mv)
        assert capsule_name(cap) == "dltensor"
        u, _ = _struct(cap)
        assert capsule_name(cap) == "used_dltensor"
        assert u.tolist() == [0, 0, 0] and u.data_ptr == t.data_ptr
        u.dispose()


def test_each_call_makes_a_new_struct_with_its_own_shape_array():
    t = w.zeros((2, 5))
    a, sa = _struct(t.__dlpack__(max_version=(1, 1)))
    b, sb = _struct(t.__dlpack__(max_version=(1, 1)))
    assert ctypes.addressof(sa) != ctypes.addressof(sb)
    assert ctypes.addressof(sa.dl_tensor.shape.contents) != ctypes.addressof(sb.dl_tensor.shape.contents)
    assert [sa.dl_tensor.strides[i] for i in range(2)] == [5, 1]  # explicit strides, in elements
    a.dispose(), b.dispose()


def test_struct_fields_describe_the_tensor():
    base = np.arange(24, dtype="float32").reshape(4, 6)
    t = w.from_dlpack(base[1:, ::2])
    u, s = _struct(t.__dlpack__(max_version=(1, 1)))
    d = s.dl_tensor
    assert d.data == t.data_ptr and d.byte_offset == t.byte_offset
    assert (d.device.device_type, d.device.device_id) == (1, 0)
    assert d.ndim == 2 and [d.shape[i] for i in range(2)] == [3, 3] and [d.strides[i] for i in range(2)] == [6, 2]
    assert (d.dtype.code, d.dtype.bits, d.dtype.lanes) == (2, 32, 1)
    assert s.deleter and s.manager_ctx is None
    u.dispose()


def test_read_only_flag_and_legacy_refusal():
    t = w.from_buffer(b"abcd")
    u, s = _struct(t.__dlpack__(max_version=(1, 1)))
    assert s.flags == _abi.FLAG_READ_ONLY and u.flags.read_only
    u.dispose()
    with pytest.raises(BufferError) as err:
        t.__dlpack__()
    assert err.value.code == w.ErrorCode.UNSUPPORTED and err.value.field == "max_version"
    # a legacy *copy* is writable, so it is allowed
    u, _ = _struct(t.__dlpack__(copy=True))
    assert u.tolist() == list(b"abcd")
    u.dispose()


def test_copy_true_sets_is_copied_and_uses_new_memory():
    t = w.from_dlpack(np.arange(12, dtype="int16").reshape(3, 4)[:, ::-1])
    u, s = _struct(t.__dlpack__(max_version=(1, 1), copy=True))
    assert s.flags == _abi.FLAG_IS_COPIED and u.flags.is_copied
    assert u.data_ptr != t.data_ptr and u.strides is None and u.tolist() == t.tolist()
    u.dispose()


def test_copy_true_of_read_only_is_writable():
    t = w.from_buffer(b"\x00" * 8, dtype="float32")
    u, s = _struct(t.__dlpack__(max_version=(1, 1), copy=True))
    assert s.flags == _abi.FLAG_IS_COPIED and not u.flags.read_only
    u.dispose()


def test_copy_false_and_none_share_memory():
    t = w.zeros(4)
    for copy in (False, None):
        u, s = _struct(t.__dlpack__(max_version=(1, 1), copy=copy))
        assert s.flags == 0 and u.data_ptr == t.data_ptr
        u.dispose()


def test_stream_none_or_minus_one():
    """CPU: None and -1 (no synchronization) export; anything else is a typed error naming stream."""
    t = w.zeros(2)
    for stream in (None, -1):
        u, s = _struct(t.__dlpack__(stream=stream, max_version=(1, 1)))
        assert u.data_ptr == t.data_ptr and s.flags == 0
        u.dispose()
    for stream in (0, 1, 2, -2, True, False, 1.0, "queue", object()):
        with pytest.raises(ValueError) as err:
            t.__dlpack__(stream=stream, max_version=(1, 1))
        e = err.value
        assert (e.code, e.field, e.expected) == (
            w.ErrorCode.INVALID_ARGUMENT,
            "stream",
            "None or -1 (no synchronization)",
        )
        assert "cpu has no streams" in str(e) and repr(stream) in str(e)
    assert _debug.live_exports() == 0
    # The stream is the consumer's, on dl_device: for webgpu:0 the message names the one queue
    # (checked before any upload is tried, so this runs on CPython too).
    with pytest.raises(ValueError) as err:
        t.__dlpack__(stream=7, max_version=(1, 1), dl_device=(15, 0))
    assert err.value.expected == "None (the device queue) or -1 (no synchronization)"
    assert "webgpu:0 has one queue" in str(err.value)
    assert _debug.live_exports() == 0
    t.dispose()


def test_dl_device_cpu_tuple_accepted():
    t = w.zeros(2)
    for dev in [(1, 0), (w.DLDeviceType.kDLCPU, 0)]:
        u, _ = _struct(t.__dlpack__(max_version=(1, 1), dl_device=dev, copy=False))
        assert u.data_ptr == t.data_ptr
        u.dispose()


def test_dl_device_other_device_is_buffer_error():
    t = w.zeros(2)
    # CPU -> WebGPU is an upload, which needs the browser: on CPython a typed error naming the device.
    with pytest.raises(BufferError) as err:
        t.__dlpack__(max_version=(1, 1), dl_device=(15, 0))
    assert err.value.field == "device" and err.value.value == "webgpu:0"
    assert err.value.code == w.ErrorCode.NO_WEBGPU and "cpython" in str(err.value)
    with pytest.raises(BufferError) as err:
        t.__dlpack__(max_version=(1, 1), dl_device=(2, 0))  # CUDA: not a move webdlpack makes
    assert err.value.code == w.ErrorCode.UNSUPPORTED and err.value.value == "cuda:0"
    with pytest.raises(BufferError) as err:
        t.__dlpack__(max_version=(1, 1), dl_device=(2, 0), copy=False)
    assert err.value.code == w.ErrorCode.COPY_REQUIRED
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 1), dl_device=(99, 0))  # not a device type at all
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 1), dl_device=(1, 3))  # CPU has only id 0
    with pytest.raises(ValueError):
        t.__dlpack__(max_version=(1, 1), dl_device="cpu")  # wrong form: not a tuple
    assert _debug.live_exports() == 0


@pytest.mark.parametrize("bad", [(1,), (1, 0, 0), "1.1", (1.0, 0), (-1, 0), [1, 1]])
def test_bad_max_version_is_value_error_not_type_error(bad):
    with pytest.raises(ValueError) as err:
        w.zeros(1).__dlpack__(max_version=bad)
    assert not isinstance(err.value, TypeError) and err.value.field == "max_version"


def test_dlpack_device():
    t = w.zeros(1)
    assert t.__dlpack_device__() == (1, 0)
    assert isinstance(t.__dlpack_device__()[0], w.DLDeviceType)


def test_numpy_passes_dl_device_and_copy():
    t = w.zeros(3, "float64")
    b = np.from_dlpack(t, device="cpu", copy=False)
    assert b.__array_interface__["data"][0] == t.data_ptr
    c = np.from_dlpack(t, copy=True)
    assert c.__array_interface__["data"][0] != t.data_ptr


def test_disposed_tensor_cannot_export():
    t = w.zeros(2)
    t.dispose()
    t.dispose()  # twice is fine
    with pytest.raises(ValueError) as err:
        t.__dlpack__(max_version=(1, 1))
    assert err.value.code == w.ErrorCode.DISPOSED
    assert repr(t) == "webdlpack.Tensor(<disposed>)" and t.disposed
