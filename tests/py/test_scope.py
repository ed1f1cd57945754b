"""``with webdlpack.scope():`` disposes the tensors made inside unless kept (CPU here; WebGPU in the browser spec)."""

from __future__ import annotations

import array
import asyncio

import numpy as np
import pytest
import webdlpack
from webdlpack.api import debug as _debug


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
        t = webdlpack.from_dlpack(src)  # NumPy's deleter runs on dispose
        exported = webdlpack.from_dlpack(t)  # a webdlpack export of t: one live struct
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
            k = webdlpack.keep(webdlpack.zeros((1,), "int8"))  # kept from both scopes
        assert i.disposed and not o.disposed and not k.disposed
        assert inner.disposed == 1
    assert o.disposed and not k.disposed
    assert outer.disposed == 1


def test_already_disposed_and_collected_tensors_are_skipped() -> None:
    with webdlpack.scope() as s:
        t = webdlpack.zeros((2,), "int32")
        t.dispose()
        webdlpack.zeros((2,), "int32")  # dropped at once: collected, nothing to dispose
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
        with webdlpack.scope():  # this scope must not see the task's tensor
            mine = webdlpack.zeros((1,), "float32")
        assert mine.disposed and not made["a"].disposed
        tb = asyncio.create_task(worker("b", b_ready, go))
        await b_ready.wait()
        go.set()
        await asyncio.gather(ta, tb)

    asyncio.run(main())
    assert made["a"].disposed and made["b"].disposed


def test_inner_scope_keep_moves_the_tensor_to_the_parent_scope() -> None:
    with webdlpack.scope() as outer:
        with webdlpack.scope() as inner:
            x = inner.keep(webdlpack.zeros((2,), "float32"))  # kept from `inner` only
            y = webdlpack.zeros((2,), "float32")
        assert not x.disposed and y.disposed and inner.disposed == 1
    assert x.disposed, "the parent scope disposes what the inner one kept and handed up"
    assert outer.disposed == 1


def test_kept_in_inner_and_in_parent_survives_both() -> None:
    with webdlpack.scope() as outer:
        with webdlpack.scope() as inner:
            x = inner.keep(webdlpack.zeros((1,), "int8"))
        outer.keep(x)
    assert not x.disposed and outer.disposed == 0


def test_three_levels_keep_hands_up_one_level_at_a_time() -> None:
    with webdlpack.scope() as a:
        with webdlpack.scope() as b:
            with webdlpack.scope() as c:
                x = c.keep(webdlpack.zeros((1,), "int8"))
            b.keep(x)
            assert not x.disposed
        assert not x.disposed  # b kept it: it now belongs to a
    assert x.disposed and (a.disposed, b.disposed, c.disposed) == (1, 0, 0)


def test_keep_of_a_tensor_made_outside_does_not_hand_it_to_the_parent() -> None:
    made_before = webdlpack.zeros((1,), "int8")
    with webdlpack.scope():
        with webdlpack.scope() as inner:
            inner.keep(made_before)  # not this scope's tensor: nothing to hand up
    assert not made_before.disposed


def test_module_keep_keeps_from_every_open_scope() -> None:
    with webdlpack.scope():
        with webdlpack.scope():
            x = webdlpack.keep(webdlpack.zeros((1,), "int8"))
    assert not x.disposed


def test_keep_from_an_outer_scope_only_does_not_stop_the_inner_one() -> None:
    with webdlpack.scope() as outer:
        with webdlpack.scope():
            x = outer.keep(webdlpack.zeros((1,), "int8"))  # made in the inner scope, which disposes it
    assert x.disposed


def test_a_long_loop_in_one_scope_keeps_the_list_bounded() -> None:
    with webdlpack.scope() as s:
        kept = [s.keep(webdlpack.zeros((1,), "int8")) for _ in range(10)]
        for i in range(5_000):
            t = webdlpack.zeros((1,), "int8")  # dropped at once: collected
            if i % 2:
                t.dispose()
            assert len(s._made) <= 2 * 64 + 2 * len(kept), len(s._made)
        alive = webdlpack.zeros((1,), "int8")
    assert all(not k.disposed for k in kept) and alive.disposed and s.disposed == 1


def test_a_scope_whose_parent_closed_hands_kept_tensors_to_the_next_open_one() -> None:
    held: dict[str, webdlpack.Tensor] = {}

    async def main() -> None:
        with webdlpack.scope() as top:
            go = asyncio.Event()

            async def task() -> None:
                with webdlpack.scope() as inner:  # its parent is `middle`, closed before this scope
                    await go.wait()
                    held["x"] = inner.keep(webdlpack.zeros((1,), "int8"))

            with webdlpack.scope():
                running = asyncio.create_task(task())
                await asyncio.sleep(0)
            go.set()
            await running
            assert not held["x"].disposed
        assert top.disposed == 1

    asyncio.run(main())
    assert held["x"].disposed
