"""``copy``, ``deepcopy`` and ``pickle`` of tensors and of the objects that own their memory."""

from __future__ import annotations

import array
import copy
import gc
import pickle

import numpy as np
import pytest
import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.bridge.gpu import GPUAllocation
from webdlpack.core.memory import HostBlock, alloc
from webdlpack.exchange.owner import ManagedOwner

PICKLE_EXPECTED = "copy to bytes first, e.g. t.tolist() / bytes(t.memoryview())"


def test_deepcopy_owns_new_memory_that_outlives_the_original() -> None:
    g = w.zeros((1 << 22,), "float32")
    g.memoryview()[:3] = array.array("f", [1.0, 2.0, 3.0])
    d = copy.deepcopy(g)
    assert d.data_ptr != g.data_ptr and d.flags.is_copied
    g.dispose()
    del g
    gc.collect()
    assert d.memoryview()[:1000].tolist()[:4] == [1.0, 2.0, 3.0, 0.0]  # was a segfault: d pointed at g's memory
    d.memoryview()[0] = 9.0
    assert d.tolist()[0] == 9.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: w.from_buffer(array.array("i", [1, 2, 3])),
        lambda: w.from_buffer(b"\x01\x02\x03", dtype="uint8"),  # read-only: the copy is writable
        lambda: w.from_dlpack(np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]),  # imported, strided
    ],
    ids=["from_buffer", "read-only", "imported-strided"],
)
def test_deepcopy_of_any_cpu_tensor_is_an_independent_copy(make) -> None:
    t = make()
    d = copy.deepcopy(t)
    assert type(d) is w.Tensor and d.tolist() == t.tolist() and d.shape == t.shape
    assert d.data_ptr != t.data_ptr and d.strides is None and not d.flags.read_only
    t.dispose()
    d.dispose()


def test_deepcopy_keeps_identity_inside_a_container() -> None:
    t = w.zeros((2,), "int8")
    box = copy.deepcopy({"a": t, "b": [t]})
    assert box["a"] is box["b"][0] and box["a"] is not t
    assert box["a"].tolist() == [0, 0]


def test_shallow_copy_is_the_tensor_itself() -> None:
    t = w.zeros((3,), "float64")
    assert copy.copy(t) is t
    pair = copy.copy([t])
    assert pair[0] is t


def test_deepcopy_of_a_disposed_tensor_raises_disposed() -> None:
    t = w.zeros((2,))
    t.dispose()
    with pytest.raises(w.WebDLPackValueError) as err:
        copy.deepcopy(t)
    assert err.value.code == w.ErrorCode.DISPOSED


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_pickling_a_tensor_raises_a_typed_error(protocol: int) -> None:
    t = w.from_buffer(bytearray(4))
    with pytest.raises(w.WebDLPackTypeError) as err:
        pickle.dumps(t, protocol=protocol)
    e = err.value
    assert e.code == w.ErrorCode.INVALID_ARGUMENT and e.field == "tensor" and e.expected == PICKLE_EXPECTED
    assert pickle.loads(pickle.dumps(bytes(t.memoryview()))) == bytes(4)  # what the error suggests works


def test_owners_refuse_copy_deepcopy_and_pickle() -> None:
    t = w.from_dlpack(np.arange(4, dtype=np.float32))  # a ManagedOwner: copying it would call NumPy's deleter twice
    adopted = _debug.import_stats()
    owners = [alloc(16), t._owner]
    assert isinstance(owners[0], HostBlock) and isinstance(owners[1], ManagedOwner)
    for owner in owners:
        for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(w.WebDLPackTypeError) as err:
                attempt(owner)
            assert err.value.code == w.ErrorCode.INVALID_ARGUMENT
            assert err.value.field == type(owner).__name__
            assert "tensor.copy()" in (err.value.expected or "")
    assert _debug.import_stats() == adopted  # nothing adopted or released by the refusals
    t.dispose()


def test_gpu_allocation_refuses_copies_without_allocating() -> None:
    # No WebGPU on CPython: build one without __init__, as a copy would be built.
    fake = object.__new__(GPUAllocation)
    for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(w.WebDLPackTypeError) as err:
            attempt(fake)
        assert err.value.field == "GPUAllocation"
