"""NumPy <-> webdlpack, both directions, for every NumPy dtype and layout."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import webdlpack as w

NUMPY_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def sample(dtype: str, shape=(3, 4)) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    base = np.arange(n) - (n // 2 if dtype[0] in "if" or dtype.startswith("c") else 0)
    arr = base.astype(dtype).reshape(shape)
    if dtype.startswith("complex"):
        arr = arr + 1j * arr[::-1].astype(dtype)
    return arr


def address(arr: np.ndarray) -> int:
    return arr.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_to_webdlpack_zero_copy(dtype):
    a = sample(dtype)
    t = w.from_dlpack(a)
    assert t.dtype.name == dtype and t.shape == a.shape and t.strides is None
    assert t.data_ptr + t.byte_offset == address(a)
    assert t.tolist() == a.tolist()
    assert not t.flags.read_only and not t.flags.is_copied
    if dtype == "float16" and sys.version_info < (3, 12):
        with pytest.raises(BufferError, match="float16"):
            t.memoryview()
    else:
        mv = t.memoryview()
        assert bytes(mv) == a.tobytes()  # exact: a view of the same bytes
        assert mv.shape == a.shape + ((2,) if dtype.startswith("complex") else ())


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_webdlpack_to_numpy_zero_copy(dtype):
    t = w.zeros((2, 3), dtype)
    b = np.from_dlpack(t)
    assert b.dtype == np.dtype(dtype) and b.shape == (2, 3)
    assert address(b) == t.data_ptr + t.byte_offset
    b[...] = sample(dtype, (2, 3))
    assert t.tolist() == b.tolist()  # writes through NumPy are seen by the tensor


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_round_trip_numpy_webdlpack_numpy(dtype):
    a = sample(dtype, (5,))
    back = np.from_dlpack(w.from_dlpack(a))
    assert address(back) == address(a)
    np.testing.assert_array_equal(back, a)  # exact: the same memory, nothing computed


@pytest.mark.parametrize("dtype", ["float64", "int8", "complex64", "bool"])
def test_zero_dim(dtype):
    a = np.array(sample(dtype, (1,))[0])
    t = w.from_dlpack(a)
    assert t.shape == () and t.ndim == 0 and t.tolist() == a.tolist()
    assert t.memoryview().shape == (() if dtype != "complex64" else (2,))
    b = np.from_dlpack(t)
    assert b.shape == () and b.tolist() == a.tolist()


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4, 2)])
def test_zero_size(shape):
    a = np.zeros(shape, "float32")
    t = w.from_dlpack(a)
    assert t.shape == shape and t.size == 0 and t.nbytes == 0 and t.tolist() == a.tolist()
    assert t.memoryview().shape == shape
    b = np.from_dlpack(t)
    assert b.shape == shape and b.dtype == np.float32
    e = w.empty(shape, "int16")
    assert np.from_dlpack(e).shape == shape


def test_zero_size_from_null_data_pointer():
    from handmade import Producer

    p = Producer(shape=(0, 3), data=0)
    t = w.from_capsule(p.capsule())
    assert t.data_ptr == 0 and t.shape == (0, 3) and t.tolist() == []
    assert np.from_dlpack(t).shape == (0, 3)
    t.dispose()
    assert p.deleted == 1


@pytest.mark.parametrize(
    "slicer",
    [
        lambda a: a[:, ::2],
        lambda a: a[::-1],
        lambda a: a[:, ::-1],
        lambda a: a.T,
        lambda a: a[1:, 1:3],
        lambda a: a[::-2, ::-3],
    ],
    ids=["step2", "neg0", "neg1", "transpose", "slice", "negsteps"],
)
def test_non_contiguous_numpy_to_webdlpack(slicer):
    base = np.arange(48, dtype="float64").reshape(6, 8)
    a = slicer(base)
    t = w.from_dlpack(a)
    assert t.shape == a.shape
    assert t.strides == tuple(s // 8 for s in a.strides)
    assert t.data_ptr + t.byte_offset == address(a)
    assert t.tolist() == a.tolist()
    with pytest.raises(BufferError, match="C-contiguous"):
        t.memoryview()
    back = np.from_dlpack(t)
    assert back.strides == a.strides and address(back) == address(a)
    np.testing.assert_array_equal(back, a)  # exact: the same memory, nothing computed
    c = t.copy()
    assert c.strides is None and c.flags.is_copied and c.tolist() == a.tolist()


def test_negative_strides_keep_first_element_address():
    a = np.arange(10, dtype="int32")[::-1]
    t = w.from_dlpack(a)
    assert t.strides == (-1,)
    assert t.data_ptr + t.byte_offset == address(a)
    assert t.tolist() == list(range(9, -1, -1))


def test_read_only_numpy_becomes_read_only_tensor_and_back():
    a = np.arange(6, dtype="float32")
    a.flags.writeable = False
    t = w.from_dlpack(a)
    assert t.flags.read_only
    mv = t.memoryview()
    assert mv.readonly
    b = np.from_dlpack(t)
    assert not b.flags.writeable and address(b) == address(a)
    with pytest.raises(ValueError):
        b[0] = 1
    del mv


def test_read_only_buffer_to_numpy_is_read_only():
    t = w.from_buffer(b"\x01\x02\x03\x04", dtype="uint8")
    b = np.from_dlpack(t)
    assert not b.flags.writeable and b.tolist() == [1, 2, 3, 4]


def test_numpy_copy_request():
    a = np.arange(4, dtype="int64")
    t = w.from_dlpack(a, copy=True)
    assert t.flags.is_copied and t.data_ptr != address(a) and t.tolist() == [0, 1, 2, 3]
    a[0] = 100
    assert t.tolist()[0] == 0
    b = np.from_dlpack(w.zeros(3), copy=True)
    assert b.tolist() == [0, 0, 0]


def test_numpy_consumes_versioned_capsule_and_renames_it():
    t = w.zeros(3)
    cap = t.__dlpack__(max_version=(1, 1))
    assert "dltensor_versioned" in repr(cap)

    # NumPy accepts an object whose __dlpack__ returns our capsule.
    class Holder:
        def __dlpack__(self, **kw):
            return cap  # noqa: F821 (bound above; deleted only after the last call)

        def __dlpack_device__(self):
            return (1, 0)

    arr = np.from_dlpack(Holder())
    assert "used_dltensor_versioned" in repr(cap)
    assert address(arr) == t.data_ptr
    # NumPy's exception type for a used capsule is not part of its API.
    with pytest.raises(Exception):  # noqa: B017
        np.from_dlpack(Holder())  # a used capsule is refused
    del arr, cap


def test_numpy_array_outlives_disposed_tensor():
    t = w.zeros(4, "float64")
    b = np.from_dlpack(t)
    t.dispose()
    b[:] = [1, 2, 3, 4]  # memory still owned by the export
    assert b.sum() == 10
