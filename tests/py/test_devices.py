"""Device moves on CPython: explicit, typed, and leak-free where there is no WebGPU.

The real GPU paths (upload, readback, JSPI) run in the browser:
tests/browser/python-gpu-*.spec.ts.
"""

from __future__ import annotations

import array
import asyncio

import numpy as np
import pytest
import webdlpack as w
from handmade import DLPackObject, Producer
from webdlpack.api import debug as _debug


def _no_webgpu(err: pytest.ExceptionInfo, device: str = "webgpu:0") -> None:
    e = err.value
    assert isinstance(e, w.WebDLPackDeviceError) and isinstance(e, BufferError) and isinstance(e, ValueError)
    assert e.code == w.ErrorCode.NO_WEBGPU and e.field == "device" and e.value == device
    assert device in str(e) and "cpython" in str(e)


@pytest.mark.parametrize("make", [w.empty, w.zeros])
def test_gpu_creation_names_the_device(make):
    with pytest.raises(ValueError) as err:
        make((2, 3), "float32", device="webgpu:1")
    _no_webgpu(err, "webgpu:1")
    assert _debug.gpu_stats() == {"allocated": 0, "freed": 0, "live": 0, "free_errors": 0}


def test_creation_on_other_devices_is_refused():
    with pytest.raises(ValueError) as err:
        w.zeros(3, device="cuda:0")
    assert err.value.code == w.ErrorCode.BAD_DEVICE and err.value.value == "cuda:0"


def test_asarray_cpu_buffer_zero_copy_and_copy():
    src = array.array("i", [1, 2, 3])
    t = w.asarray(src)
    assert t.tolist() == [1, 2, 3] and str(t.device) == "cpu" and not t.flags.is_copied
    src[0] = 9
    assert t.tolist()[0] == 9  # shares the buffer
    c = w.asarray(src, copy=True)
    src[1] = 8
    assert c.tolist() == [9, 2, 3] and c.flags.is_copied
    same = w.asarray(src, device="cpu", copy=False)
    assert same.data_ptr == t.data_ptr
    for x in (t, c, same):
        x.dispose()


def test_asarray_of_a_dlpack_producer_keeps_memory():
    a = np.arange(4, dtype=np.float64)
    t = w.asarray(a)
    assert t.data_ptr == a.ctypes.data and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    t.dispose()


def test_asarray_to_webgpu():
    with pytest.raises(BufferError) as err:
        w.asarray(array.array("f", [1.0]), device="webgpu:0")
    _no_webgpu(err)
    with pytest.raises(BufferError) as err:
        w.asarray(array.array("f", [1.0]), device="webgpu:0", copy=False)
    assert err.value.code == w.ErrorCode.COPY_REQUIRED and err.value.value == "webgpu:0"
    assert isinstance(err.value, ValueError)  # the array API's device rule asks ValueError


def test_asarray_refuses_non_buffers():
    with pytest.raises(TypeError) as err:
        w.asarray([1, 2, 3])
    assert err.value.field == "obj" and err.value.value == "list"


def test_from_dlpack_to_webgpu_copy_rules():
    a = np.ones(3, dtype=np.float32)
    with pytest.raises(BufferError) as err:
        w.from_dlpack(a, device="webgpu:0", copy=False)
    assert err.value.code == w.ErrorCode.COPY_REQUIRED and err.value.field == "device"
    for copy in (None, True):  # the standard allows (None) or requires (True) the copy
        with pytest.raises(BufferError) as err:
            w.from_dlpack(a, device="webgpu:0", copy=copy)
        _no_webgpu(err)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_from_dlpack_webgpu_to_cpu_releases_the_producer_once():
    p = Producer(device=(15, 0), data=0x2000_0000)
    obj = DLPackObject(p, device=(15, 0))
    with pytest.raises(BufferError) as err:
        w.from_dlpack(obj, device="cpu", copy=False)
    assert err.value.code == w.ErrorCode.COPY_REQUIRED
    assert p.deleted == 0  # refused before asking the producer
    with pytest.raises(BufferError) as err:
        w.from_dlpack(obj, device="cpu")
    assert err.value.code == w.ErrorCode.NO_WEBGPU
    assert p.deleted == 1  # the zero-copy import made for the move was released


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_webgpu_tensor_dlpack_to_cpu():
    p = Producer(device=(15, 0), data=0x3000_0000, byte_offset=256)
    t = w.from_capsule(p.capsule())
    assert t.data_ptr == 0x3000_0000 and t.byte_offset == 256
    with pytest.raises(BufferError) as err:
        t.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=False)
    assert err.value.code == w.ErrorCode.COPY_REQUIRED and err.value.field == "dl_device"
    with pytest.raises(BufferError) as err:
        t.__dlpack__(max_version=(1, 1), dl_device=(1, 0))
    assert err.value.code == w.ErrorCode.NO_WEBGPU
    with pytest.raises(BufferError) as err:
        t.to_device("cpu")
    assert err.value.code == w.ErrorCode.NO_WEBGPU
    with pytest.raises(BufferError) as err:
        t.tolist()
    assert "to_cpu_async" in err.value.expected
    with pytest.raises(BufferError) as err:
        asyncio.run(w.to_cpu_async(t))
    assert err.value.code == w.ErrorCode.NO_WEBGPU
    assert t.to_device("webgpu:0") is t
    t.dispose()
    assert p.deleted == 1


def test_to_cpu_async_of_cpu_data():
    t = w.zeros(2)
    assert asyncio.run(w.to_cpu_async(t)) is t and t.to_device("cpu") is t
    a = np.arange(3, dtype=np.int16)
    u = asyncio.run(w.to_cpu_async(a))
    assert u.tolist() == [0, 1, 2] and u.data_ptr == a.ctypes.data
    u.dispose(), t.dispose()


def test_to_device_stream_none_or_minus_one():
    t = w.zeros(1)
    assert t.to_device("cpu", stream=None) is t and t.to_device("cpu", stream=-1) is t
    for stream in (1, 0, True, "default"):
        with pytest.raises(ValueError) as err:
            t.to_device("cpu", stream=stream)
        assert (err.value.field, err.value.code, err.value.expected) == (
            "stream",
            w.ErrorCode.INVALID_ARGUMENT,
            "None or -1 (no synchronization)",
        )
    with pytest.raises(ValueError) as err:
        t.to_device("webgpu:0", stream=3)
    assert err.value.field == "stream" and "the device queue" in err.value.expected
    t.dispose()
