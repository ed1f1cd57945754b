"""Arguments are checked before any work: shapes of the creation functions, ``copy`` and ``device``."""

from __future__ import annotations

import array
import math

import numpy as np
import pytest
import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.api.create import parse_shape

SAFE_MAX = (1 << 53) - 1  # the largest extent every consumer accepts (spec/validation-rules.json)


@pytest.mark.parametrize(
    "shape, field",
    [
        ("34", "shape"),  # was (3, 4)
        (b"34", "shape"),
        (None, "shape"),
        (True, "shape"),
        (3.0, "shape"),
        ((i for i in (2, 3)), "shape"),  # a generator is not a tuple/list
        ((2.7,), "shape[0]"),  # was (2,)
        ((True,), "shape[0]"),  # was (1,)
        ((2, False), "shape[1]"),
        ((math.nan,), "shape[0]"),  # was a bare ValueError
        ((math.inf,), "shape[0]"),  # was a bare OverflowError
        (("3",), "shape[0]"),
        ((np.float64(2.0),), "shape[0]"),
        ((3, None), "shape[1]"),
    ],
)
@pytest.mark.parametrize("make", [w.zeros, w.empty])
def test_a_shape_that_is_not_ints_is_a_typed_bad_shape(make, shape, field) -> None:
    with pytest.raises(w.WebDLPackTypeError) as err:
        make(shape)
    e = err.value
    assert e.code == w.ErrorCode.BAD_SHAPE and e.field == field
    if field != "shape":
        assert e.expected == "a non-negative int"


@pytest.mark.parametrize(
    "shape, code, field",
    [
        ((-1,), w.ErrorCode.BAD_SHAPE, "shape[0]"),
        ((2, -3), w.ErrorCode.BAD_SHAPE, "shape[1]"),
        (-2, w.ErrorCode.BAD_SHAPE, "shape"),
        ((1 << 70, 0), w.ErrorCode.SIZE_OVERFLOW, "shape[0]"),  # numel 0, but no DLPack int64 holds the extent
        ((0, 1 << 62), w.ErrorCode.SIZE_OVERFLOW, "shape[1]"),  # numel 0, but JS and NumPy consumers refuse the extent
        ((1 << 31, 1 << 31, 1 << 31), w.ErrorCode.SIZE_OVERFLOW, "shape"),
    ],
)
def test_out_of_range_extents_are_typed_value_errors(shape, code, field) -> None:
    with pytest.raises(w.WebDLPackValueError) as err:
        w.zeros(shape, "float32")
    assert err.value.code == code and err.value.field == field


def test_memory_that_cannot_be_allocated_is_a_typed_out_of_memory() -> None:
    with pytest.raises(w.WebDLPackMemoryError) as err:
        w.zeros((2**40,), "float32")  # 4 TiB; was a bare MemoryError
    e = err.value
    assert isinstance(e, MemoryError)
    assert e.code == w.ErrorCode.OUT_OF_MEMORY and e.field == "nbytes" and e.value == 2**42


@pytest.mark.parametrize(
    "shape, expected",
    [
        (5, (5,)),
        (0, (0,)),
        ((), ()),
        ([2, 3], (2, 3)),
        ((np.int64(2), np.uint8(3)), (2, 3)),
        (np.int32(4), (4,)),
        ((SAFE_MAX, 0), (SAFE_MAX, 0)),
    ],
)
def test_integer_shapes_are_accepted(shape, expected) -> None:
    assert parse_shape(shape) == expected
    if math.prod(expected) < 100:
        assert w.zeros(shape, "int8").shape == expected


def test_from_buffer_shape_uses_the_same_checks() -> None:
    data = bytearray(12)
    assert w.from_buffer(data, dtype="uint8", shape=[3, 4]).shape == (3, 4)
    with pytest.raises(w.WebDLPackTypeError) as err:
        w.from_buffer(data, dtype="uint8", shape="34")
    assert err.value.code == w.ErrorCode.BAD_SHAPE and err.value.field == "shape"
    with pytest.raises(w.WebDLPackTypeError) as err:
        w.from_buffer(data, dtype="uint8", shape=(3.0, 4))
    assert err.value.field == "shape[0]"


BAD_COPIES = ["yes", 2, 1, 0, np.True_, [], "False", np.array([1, 2, 3])]


@pytest.mark.parametrize("copy", BAD_COPIES, ids=repr)
def test_a_copy_that_is_not_none_or_bool_is_refused_before_the_producer_runs(copy) -> None:
    class Producer:
        calls = 0

        def __dlpack__(self, **kwargs):
            Producer.calls += 1
            raise AssertionError("the producer must not be asked")

        def __dlpack_device__(self):
            return (1, 0)

    t = w.zeros((2,), "int32")
    before = _debug.export_stats()["created"]
    calls = [
        lambda: w.from_dlpack(np.arange(3), copy=copy),  # was NumPy's bare ValueError
        lambda: w.from_dlpack(Producer(), copy=copy),
        lambda: w.asarray(np.arange(3), copy=copy),
        lambda: w.asarray(array.array("b", [1]), copy=copy),
        lambda: t.__dlpack__(copy=copy),  # was accepted
    ]
    for call in calls:
        with pytest.raises(w.WebDLPackTypeError) as err:
            call()
        e = err.value
        assert e.code == w.ErrorCode.INVALID_ARGUMENT and e.field == "copy" and e.value is copy
        assert isinstance(e, ValueError)  # what NumPy raises for such a copy
    assert Producer.calls == 0
    assert _debug.export_stats()["created"] == before


def test_dunder_dlpack_copy_parses_as_numpy_does() -> None:
    # NumPy's own test_dlpack.py (test_dunder_dlpack_copy) on a webdlpack tensor: True, None and False
    # export (an unconsumed capsule frees its struct when collected); an array is a ValueError, as NumPy raises.
    x = w.asarray(np.arange(5))
    for copy in (True, None, False):
        assert np.from_dlpack(x, copy=copy).tolist() == list(range(5))
        x.__dlpack__(copy=copy)
    with pytest.raises(ValueError):
        np.arange(5).__dlpack__(copy=np.array([1, 2, 3]))  # NumPy's behaviour, checked on this NumPy
    with pytest.raises(ValueError):
        x.__dlpack__(copy=np.array([1, 2, 3]))


@pytest.mark.parametrize(
    "device, cls",
    [
        ("cuda", w.WebDLPackDeviceError),  # a real device type webdlpack cannot reach: was NumPy's bare BufferError
        ((2, 0), w.WebDLPackDeviceError),
        ("metal:1", w.WebDLPackDeviceError),
        ("gpu", w.WebDLPackValueError),  # not a device name
        (3.5, w.WebDLPackValueError),
        ((1, 0, 0), w.WebDLPackValueError),
    ],
)
def test_a_device_webdlpack_cannot_reach_is_refused_before_the_producer_runs(device, cls) -> None:
    t = w.zeros((2,), "int32")
    calls = [
        lambda: w.from_dlpack(np.arange(3), device=device),
        lambda: w.asarray(np.arange(3), device=device),
        lambda: w.asarray(array.array("b", [1]), device=device),
        lambda: t.to_device(device),
    ]
    for call in calls:
        with pytest.raises(cls) as err:
            call()
        assert isinstance(err.value, ValueError)
        assert err.value.code == w.ErrorCode.BAD_DEVICE and err.value.field == "device"


def test_to_device_none_is_a_typed_bad_device() -> None:
    with pytest.raises(w.WebDLPackValueError) as err:
        w.zeros((1,)).to_device(None)
    assert err.value.code == w.ErrorCode.BAD_DEVICE and err.value.field == "device"


def test_the_producers_own_device_and_valid_arguments_still_work() -> None:
    a = np.arange(4, dtype=np.int32)
    assert w.from_dlpack(a, device="cpu", copy=False).tolist() == [0, 1, 2, 3]
    assert w.from_dlpack(a, device=(1, 0), copy=True).flags.is_copied
    assert w.asarray(array.array("h", [5]), device=w.device("cpu"), copy=None).tolist() == [5]
    t = w.zeros((2,), "int32")
    assert t.to_device("cpu") is t
    for copy in (None, True, False):
        w.from_capsule(t.__dlpack__(copy=copy, max_version=(1, 1))).dispose()

    class OnCuda:
        """A producer on a device webdlpack cannot serve (tests/py/test_foreign_devices.py has the rest)."""

        def __dlpack__(self, **kwargs):
            raise BufferError("no CUDA here")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(w.WebDLPackDeviceError, match="cuda:0"):  # its own device, but one webdlpack cannot serve:
        w.from_dlpack(OnCuda(), device="cuda")  # refused before the producer runs (issue 12)
