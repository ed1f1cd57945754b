"""``with webdlpack.scope():`` disposes the tensors made inside unless kept (CPU here; WebGPU in the browser spec)."""

from __future__ import annotations

import array
import asyncio

import numpy as np
import pytest

import webdlpack
from webdlpack import _debug


def live_exports() -> int:
    return int(_debug.export_stats()["live"])


def test_tensors_made_inside_are_disposed_kept_ones_survive() -> None:
    outside = webdlpack.zeros((3,), "float32")
    with webdlpack.scope() as s:
        a = webdlpack.zeros((4,), "int32")
        b = webdlpack.from_buffer(array.array("d", [1.0, 2.0]))
        c = webdlpack.keep(webdlpack.zeros((2,), "uint8"))
        d = s.keep(webdlpack.from_dlpack(np.arange(3, dtype=np.int16)))
        assert not a.disposed and not b.disposed
    assert a.disposed and b.disposed
    assert not c.disposed and not d.disposed and not outside.disposed
    assert s.closed and s.disposed == 2
    assert d.tolist() == [0, 1, 2]
    with pytest.raises(webdlpack.WebDLPackValueError, match="DISPOSED"):
        a.tolist()


def test_imported_producer_memory_is_released_when_the_scope_closes() -> None:
    src = np.arange(6, dtype=np.float32)
    before = live_exports()
    with webdlpack.scope():
        t = webdlpack.from_dlpack(src)          # NumPy's deleter runs on dispose
        exported = webdlpack.from_dlpack(t)     # a webdlpack export of t: one live struct
        assert live_exports() == before + 1
    assert t.disposed and exported.disposed
    assert live_exports() == before


def test_exception_inside_still_disposes_and_propagates() -> None:
    with pytest.raises(KeyError):
        with webdlpack.scope():
            t = webdlpack.zeros((2,), "float64")
            raise KeyError("boom")
    assert t.disposed


def test_nested_scopes_inner_disposes_its_own_outer_the_rest() -> None:
    with webdlpack.scope() as outer:
        o = webdlpack.zeros((1,), "int8")
        with webdlpack.scope() as inner:
            i = webdlpack.zeros((1,), "int8")
            k = webdlpack.keep(webdlpack.zeros((1,), "int8"))   # kept from both scopes
        assert i.disposed and not o.disposed and not k.disposed
        assert inner.disposed == 1
    assert o.disposed and not k.disposed
    assert outer.disposed == 1


def test_already_disposed_and_collected_tensors_are_skipped() -> None:
    with webdlpack.scope() as s:
        t = webdlpack.zeros((2,), "int32")
        t.dispose()
        webdlpack.zeros((2,), "int32")          # dropped at once: collected, nothing to dispose
    assert s.disposed == 0


def test_keep_of_a_non_tensor_returns_it_unchanged() -> None:
    with webdlpack.scope():
        assert webdlpack.keep(5) == 5
        values = [1, 2]
        assert webdlpack.keep(values) is values
    assert webdlpack.keep("outside any scope") == "outside any scope"


def test_asyncio_tasks_have_their_own_scopes() -> None:
    made: dict[str, webdlpack.Tensor] = {}

    async def worker(name: str, hold: asyncio.Event, go: asyncio.Event) -> None:
        with webdlpack.scope():
            made[name] = webdlpack.zeros((2,), "float32")
            hold.set()
            await go.wait()

    async def main() -> None:
        a_ready, b_ready, go = asyncio.Event(), asyncio.Event(), asyncio.Event()
        ta = asyncio.create_task(worker("a", a_ready, go))
        await a_ready.wait()
        with webdlpack.scope():                 # this scope must not see the task's tensor
            mine = webdlpack.zeros((1,), "float32")
        assert mine.disposed and not made["a"].disposed
        tb = asyncio.create_task(worker("b", b_ready, go))
        await b_ready.wait()
        go.set()
        await asyncio.gather(ta, tb)

    asyncio.run(main())
    assert made["a"].disposed and made["b"].disposed
