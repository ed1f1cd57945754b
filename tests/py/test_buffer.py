"""from_buffer, empty/zeros, memoryview and tolist on CPU tensors."""

from __future__ import annotations

import array
import struct
import sys

import numpy as np
import pytest
import webdlpack as w


def test_from_bytearray_is_zero_copy_and_writable():
    buf = bytearray(16)
    t = w.from_buffer(buf, dtype="int32")
    assert t.shape == (4,) and not t.flags.read_only
    mv = t.memoryview()
    mv[2] = 99
    assert struct.unpack_from("<i", buf, 8)[0] == 99
    with pytest.raises(BufferError):
        buf.extend(b"x")  # the tensor holds an export: no resize under it
    del mv


def test_from_bytes_is_read_only():
    t = w.from_buffer(b"\x01\x00\x02\x00", dtype="uint16")
    assert t.flags.read_only and t.tolist() == [1, 2]
    assert t.memoryview().readonly


def test_from_array_array_infers_dtype():
    for code, name in [
        ("b", "int8"),
        ("B", "uint8"),
        ("h", "int16"),
        ("i", "int32"),
        ("q", "int64"),
        ("Q", "uint64"),
        ("f", "float32"),
        ("d", "float64"),
    ]:
        a = array.array(code, [1, 2, 3])
        t = w.from_buffer(a)
        assert t.dtype.name == name and t.tolist() == [1, 2, 3]
        assert np.from_dlpack(t).__array_interface__["data"][0] == a.buffer_info()[0]


def test_from_multidim_memoryview_keeps_shape():
    mv = memoryview(bytearray(24)).cast("B").cast("d", [3, 1])
    t = w.from_buffer(mv)
    assert t.shape == (3, 1) and t.dtype.name == "float64"


def test_from_numpy_buffer_with_complex_format():
    a = np.array([1 + 2j, 3 - 4j], dtype="complex64")
    t = w.from_buffer(a)
    assert t.dtype.name == "complex64" and t.tolist() == [1 + 2j, 3 - 4j]


def test_from_buffer_shape_and_errors():
    t = w.from_buffer(bytearray(24), dtype="float32", shape=(2, 3))
    assert t.shape == (2, 3)
    with pytest.raises(ValueError) as err:
        w.from_buffer(bytearray(10), dtype="float32")
    assert err.value.field == "obj.nbytes"
    with pytest.raises(ValueError) as err:
        w.from_buffer(bytearray(24), dtype="float32", shape=(5,))
    assert err.value.field == "shape"
    with pytest.raises(BufferError):
        w.from_buffer(memoryview(bytearray(16))[::2])
    with pytest.raises(ValueError) as err:
        w.from_buffer(np.zeros(2, dtype=">f4"))
    assert err.value.code == w.ErrorCode.BAD_DTYPE
    with pytest.raises(ValueError):
        w.from_buffer(bytearray(4), dtype="float33")


def test_a_strided_buffer_is_refused_with_its_strides_labelled_and_the_fix_named():
    view = memoryview(array.array("f", range(8)))[::2]
    with pytest.raises(BufferError) as err:
        w.from_buffer(view)
    e = err.value
    assert e.code == w.ErrorCode.BAD_STRIDES and e.field == "obj.strides" and e.value == (8,)
    assert "strides (8,) (bytes) for shape (4,) of 4-byte items, where C order has (4,)" in str(e)
    assert "webdlpack.asarray(obj)" in str(e) and "C-contiguous strides (4,)" in e.expected


@pytest.mark.parametrize("copy", [None, True])
def test_asarray_copies_a_strided_buffer_into_c_order(copy):
    src = array.array("f", range(8))
    t = w.asarray(memoryview(src)[::2], copy=copy)
    assert t.tolist() == [0.0, 2.0, 4.0, 6.0] and t.flags.is_copied
    src[0] = 99.0  # a copy: the source's later writes do not show
    assert t.tolist()[0] == 0.0
    grid = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]  # 2-D, through the buffer protocol
    g = w.asarray(memoryview(grid), copy=copy)
    assert g.shape == (3, 2) and g.dtype.name == "int16" and g.tolist() == grid.tolist()


def test_asarray_copy_false_refuses_a_strided_buffer_saying_why():
    with pytest.raises(BufferError) as err:
        w.asarray(memoryview(array.array("f", range(8)))[::2], copy=False)
    assert err.value.code == w.ErrorCode.BAD_STRIDES
    assert "asarray(copy=False) would have to copy it" in str(err.value)


def test_empty_and_zeros():
    t = w.empty((2, 3), "int16")
    assert t.shape == (2, 3) and t.dtype.name == "int16" and t.nbytes == 12 and t.strides is None
    assert t.data_ptr % 8 == 0 and t.byte_offset == 0
    z = w.zeros(5, "complex128")
    assert z.tolist() == [0j] * 5
    s = w.zeros((), "bool")
    assert s.tolist() is False and s.shape == ()
    with pytest.raises(ValueError):
        w.zeros((2, -1))
    with pytest.raises(ValueError):
        w.zeros(3, device="webgpu:0")
    with pytest.raises(ValueError):
        w.zeros((2**40, 2**40), "float64")


def test_tolist_values_for_special_dtypes():
    h = w.from_buffer(np.array([1.5, -2.0], dtype="float16"))
    assert h.tolist() == [1.5, -2.0]
    bf = w.from_buffer(bytearray(struct.pack("<f", 3.0)[2:] * 2), dtype="bfloat16")
    assert bf.tolist() == [3.0, 3.0]
    b = w.from_buffer(np.array([True, False]))
    assert b.tolist() == [True, False]


def test_dtype_and_device_values():
    assert w.dtype("float32") == w.DType(2, 32, 1) and w.dtype("float32").itemsize == 4
    assert w.dtype("complex128").itemsize == 16 and w.dtype("float4_e2m1fn").itemsize == 1
    assert w.dtype(np.dtype("uint16")).name == "uint16"
    assert w.DType(2, 32, 4).name == "float32x4" and w.DType(3, 64).name == "handle64"
    assert w.DType(0, 4).name == "int4" and w.DType(0, 4).is_subbyte and not w.DType(0, 4, 2).is_subbyte
    assert w.DType(5, 32).name == "complex32" and w.DType(5, 32).format is None
    with pytest.raises(ValueError):
        w.DType(2, 8)
    assert str(w.device("cpu")) == "cpu" and str(w.device("webgpu:1")) == "webgpu:1"
    assert w.device((15, 0)).to_dlpack() == (w.DLDeviceType.kDLWebGPU, 0)
    assert w.device("webgpu") == w.Device(15, 0)
    for bad in ["gpu", "webgpu:x", (1, 1), (1,), 3]:
        with pytest.raises(ValueError):
            w.device(bad)


def test_tensor_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        w.Tensor()


def test_error_carries_code_field_value_expected():
    with pytest.raises(w.WebDLPackError) as err:
        w.zeros((1, -5))
    e = err.value
    assert e.code == w.ErrorCode.BAD_SHAPE and e.errno == 5
    assert e.field == "shape[1]" and e.value == -5 and e.expected == "a non-negative int"
    assert str(e).startswith("[BAD_SHAPE]")


@pytest.mark.parametrize("obj", [123, "text", None, [1, 2, 3]])
def test_from_buffer_of_a_non_buffer_is_a_typed_type_error(obj):
    with pytest.raises(TypeError) as err:
        w.from_buffer(obj)
    e = err.value
    assert isinstance(e, w.WebDLPackError)
    assert e.code == w.ErrorCode.INVALID_ARGUMENT
    assert e.field == "obj" and e.value == type(obj).__name__
    assert "buffer" in e.expected


PYBUF_WRITABLE, PYBUF_FULL_RO = 0x1, 0x11C


def test_buffer_protocol_methods_give_the_memoryview_and_hold_the_memory():
    # Python >= 3.12 calls these for memoryview(t) (PEP 688; tested inside Pyodide 3.14 by
    # test_pyodide_node.py); on 3.11 they are plain methods, so they are called directly here.
    t = w.zeros((2, 3), "int16")
    mv = t.__buffer__(PYBUF_FULL_RO | PYBUF_WRITABLE)
    assert mv.format == "h" and mv.shape == (2, 3) and not mv.readonly
    mv[1, 2] = 7
    t.dispose()  # the view still holds the memory
    assert mv.tolist() == [[0, 0, 0], [0, 0, 7]]
    t.__release_buffer__(mv)
    with pytest.raises(ValueError, match="released"):
        mv.tolist()


def test_writable_buffer_of_a_read_only_tensor_is_a_typed_buffer_error():
    t = w.from_buffer(b"\x01\x02", dtype="uint8")
    with pytest.raises(w.WebDLPackBufferError) as err:
        t.__buffer__(PYBUF_FULL_RO | PYBUF_WRITABLE)
    assert err.value.code == w.ErrorCode.BAD_FLAGS and err.value.field == "flags"
    ro = t.__buffer__(PYBUF_FULL_RO)
    assert ro.readonly and ro.tolist() == [1, 2]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.11 behaviour; >= 3.12 is covered in Pyodide")
def test_memoryview_of_a_tensor_needs_the_method_before_python_3_12():
    t = w.zeros((2,), "float32")
    with pytest.raises(TypeError):
        memoryview(t)  # a Python class cannot export a buffer on 3.11 (documented on Tensor)
    assert t.memoryview().tolist() == [0.0, 0.0]
