"""CPU tensors are 256-byte aligned (issue 12, item 8), so JAX on the CPU shares them without a copy, both ways."""

from __future__ import annotations

import array

import jax.numpy as jnp  # a required dev dependency (pyproject [dev])
import webdlpack as w


def test_cpu_tensors_webdlpack_allocates_are_256_byte_aligned():
    made = [w.empty((n,), "float32") for n in range(1, 40)] + [w.zeros((n, 3), "int8") for n in range(1, 40)]
    made += [t.copy() for t in made[:10]]
    assert {t.data_ptr % 256 for t in made} == {0}


def test_jax_imports_webdlpack_tensors_without_copying():
    for n in range(1, 24):  # many sizes: before, some landed 16 mod 64 and JAX refused copy=False
        t = w.zeros((n,), "float32")
        t.memoryview()[n - 1] = 7.0
        a = jnp.from_dlpack(t, copy=False)
        assert a.unsafe_buffer_pointer() == t.data_ptr
        assert float(a[n - 1]) == 7.0


def test_webdlpack_imports_jax_arrays_without_copying():
    x = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    t = w.from_dlpack(x)
    assert t.data_ptr == x.unsafe_buffer_pointer()
    assert t.shape == (3, 4) and t.tolist()[2] == [8.0, 9.0, 10.0, 11.0]
    assert not t.flags.is_copied


def test_buffer_wrapped_by_from_buffer_keeps_its_own_address():
    src = array.array("f", range(8))  # not webdlpack's allocation: shared as it is
    t = w.from_buffer(src)
    assert t.data_ptr == src.buffer_info()[0]
