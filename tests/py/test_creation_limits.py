"""Producers make only what consumers take (issue 12, items 3 and 4): the limits of spec/validation-rules.json
are applied at creation with the consumers' error codes, and sub-byte buffers are measured bit-packed."""

from __future__ import annotations

import pytest
import webdlpack as w


@pytest.mark.parametrize("make", [w.empty, w.zeros])
def test_more_than_32_dims_is_refused_at_creation_with_bad_ndim(make):
    with pytest.raises(w.WebDLPackValueError) as err:
        make([1] * 33)
    assert err.value.code.name == "BAD_NDIM" and err.value.field == "shape" and err.value.value == 33
    t = make([1] * 32)  # the limit itself is fine, and a consumer takes it
    assert w.from_dlpack(t).ndim == 32


@pytest.mark.parametrize(
    "shape,field", [((0, 2**62), "shape[1]"), ((2**53,), "shape[0]"), ((2**30, 2**30, 2**30), "shape")]
)
def test_sizes_past_2_53_are_refused_at_creation_with_size_overflow(shape, field):
    with pytest.raises(w.WebDLPackValueError) as err:
        w.zeros(shape)
    assert err.value.code.name == "SIZE_OVERFLOW" and err.value.field == field


def test_empty_tensor_with_large_extent_within_limits_round_trips():
    t = w.zeros((0, 2**52))
    back = w.from_dlpack(t)
    assert back.shape == (0, 2**52) and back.nbytes == 0


def test_from_buffer_subbyte_without_shape_covers_the_whole_buffer_packed():
    t = w.from_buffer(bytearray(12), dtype="float4_e2m1fn")
    assert t.shape == (24,) and t.nbytes == 12
    u = w.from_buffer(bytearray(3), dtype="float6_e2m3fn")  # 24 bits hold 4 fp6 elements
    assert u.shape == (4,) and u.nbytes == 3


def test_from_buffer_subbyte_with_the_packed_shape_is_accepted():
    t = w.from_buffer(bytearray(6), dtype="float4_e2m1fn", shape=(12,))
    assert t.shape == (12,) and t.nbytes == 6
    back = w.from_dlpack(t)  # a consumer agrees on the size
    assert back.nbytes == 6 and back.data_ptr == t.data_ptr


@pytest.mark.parametrize("n", [13, 24])
def test_from_buffer_subbyte_shape_that_does_not_cover_the_buffer_is_refused(n):
    with pytest.raises(w.WebDLPackValueError) as err:
        w.from_buffer(bytearray(6), dtype="float4_e2m1fn", shape=(n,))
    assert err.value.code.name == "BAD_SHAPE" and "ceil(numel * 4 / 8) == 6" in str(err.value)
