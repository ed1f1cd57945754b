"""Exactly-once deleters and no leaks, on every path."""

from __future__ import annotations

import gc
import sys
import tracemalloc

import numpy as np
import pytest
import webdlpack as w
from handmade import DLPackObject, Producer
from webdlpack.api import debug as _debug
from webdlpack.api import managed as _exchange


def test_consumed_capsule_deleter_runs_once_on_consumer_release():
    t = w.zeros(8)
    before = _debug.export_stats()
    arr = np.from_dlpack(t)
    assert _debug.live_exports() == 1
    del arr
    after = _debug.export_stats()
    assert after["deleted"] - before["deleted"] == 1 and after["live"] == 0


@pytest.fixture
def without_capsule_destructor(monkeypatch):
    """Capsules made without the C destructor, as on a CPython wheel install: the queue/gc fallback runs."""
    from webdlpack.exchange import capsule as _capsule
    from webdlpack.exchange import export as _export

    monkeypatch.setattr(_capsule, "CAPSULE_DESTRUCTOR", None)
    monkeypatch.setattr(_export, "CAPSULE_DESTRUCTOR", None)


def test_dropped_unconsumed_capsule_is_freed_by_the_next_gc_pass_without_any_webdlpack_call(without_capsule_destructor):
    import gc

    from webdlpack.exchange import export as _export

    unknown_before = _debug.export_stats()["unknown_deletes"]
    t = w.zeros(8)
    cap = t.__dlpack__(max_version=(1, 1))
    live = len(_export._REGISTRY)  # read the registry directly: stats() would collect
    del cap
    assert len(_export._REGISTRY) == live  # no destructor ran
    gc.collect()
    assert len(_export._REGISTRY) == live - 1
    assert _debug.export_stats()["unknown_deletes"] == unknown_before


def test_never_consumed_capsule_is_freed_after_it_is_dropped():
    t = w.zeros(8)
    cap = t.__dlpack__(max_version=(1, 1))
    legacy = t.__dlpack__()
    assert _debug.live_exports() == 2
    del cap
    assert _debug.live_exports() == 1
    del legacy
    assert _debug.live_exports() == 0


def test_exception_between_export_and_import():
    t = w.zeros(8)

    def broken_consumer():
        cap = t.__dlpack__(max_version=(1, 1))  # noqa: F841 - dropped during unwinding
        raise KeyError("consumer failed")

    with pytest.raises(KeyError):
        broken_consumer()
    gc.collect()
    assert _debug.live_exports() == 0


def test_consumer_disposes_early_producer_keeps_working():
    p = Producer(shape=(3,))
    t = w.from_capsule(p.capsule())
    t.dispose()
    assert p.deleted == 1
    t.dispose()
    assert p.deleted == 1  # never twice


def test_imported_tensor_collected_without_dispose():
    p = Producer(shape=(3,))
    t = w.from_capsule(p.capsule())
    del t
    gc.collect()
    assert p.deleted == 1


def test_context_manager_disposes():
    p = Producer(shape=(3,))
    with w.from_capsule(p.capsule()) as t:
        assert t.tolist() == [0.0, 0.0, 0.0]
    assert t.disposed and p.deleted == 1


def test_producer_deleted_while_consumer_holds_it():
    t = w.zeros(4, "int32")
    arr = np.from_dlpack(t)
    t.dispose()
    del t
    gc.collect()
    arr[:] = 7  # memory still alive: the export's registry entry owns it
    assert arr.tolist() == [7] * 4
    del arr
    assert _debug.live_exports() == 0


def test_reexport_of_imported_tensor_defers_producer_deleter():
    p = Producer(shape=(2,))
    t = w.from_capsule(p.capsule())
    arr = np.from_dlpack(t)  # t re-exported to NumPy
    t.dispose()
    assert p.deleted == 0  # NumPy still uses the producer's memory
    del arr
    assert p.deleted == 1


def test_memoryview_keeps_imported_memory_alive():
    p = Producer(shape=(2,), dtype=(1, 8, 1))
    t = w.from_capsule(p.capsule())
    mv = t.memoryview()
    t.dispose()
    assert p.deleted == 0
    assert mv.tolist() == [0, 0]
    del mv
    gc.collect()
    assert p.deleted == 1


def test_refused_struct_calls_deleter_once_even_via_from_dlpack():
    p = Producer(ndim=99)
    with pytest.raises(ValueError):
        w.from_dlpack(DLPackObject(p))
    assert p.deleted == 1


def test_10000_exchange_cycles_leave_nothing_behind():
    src = np.arange(64, dtype="float32")
    ref_before = sys.getrefcount(src)
    stats_before = _debug.export_stats()
    imports_before = _debug.import_stats()
    for _ in range(10_000):
        t = w.from_dlpack(src)  # numpy -> webdlpack
        back = np.from_dlpack(t)  # webdlpack -> numpy
        assert back[3] == 3.0
        del back
        t.dispose()
    gc.collect()
    assert sys.getrefcount(src) == ref_before
    stats = _debug.export_stats()
    assert stats["live"] == 0 and stats["created"] - stats_before["created"] == 10_000
    assert (
        stats["deleted"] - stats_before["deleted"] == 10_000
        and stats["unknown_deletes"] == stats_before["unknown_deletes"]
    )
    imports = _debug.import_stats()
    assert imports["live"] == 0 and imports["adopted"] - imports_before["adopted"] == 10_000


def test_memory_growth_is_bounded():
    src = np.arange(256, dtype="float64")

    def cycle(n):
        for _ in range(n):
            t = w.from_dlpack(src)
            cap = t.__dlpack__(max_version=(1, 1))
            u = w.from_capsule(cap)
            np.from_dlpack(u)
            unused = t.__dlpack__()  # noqa: F841 - never consumed
            u.dispose()
            t.dispose()

    cycle(200)  # warm caches (ctypes types, struct formats)
    gc.collect()
    tracemalloc.start()
    try:
        first, _ = tracemalloc.get_traced_memory()
        cycle(3000)
        gc.collect()
        second, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert second - first < 64 * 1024, f"grew by {second - first} bytes over 3000 cycles"


@pytest.mark.double_frees(1)
def test_export_managed_receiver_calls_deleter_once_and_double_free_is_counted():
    import ctypes

    from webdlpack.core import abi as _abi

    t = w.zeros(3)
    addr = _exchange.export_managed(t)
    assert _debug.live_exports() == 1
    deleter = ctypes.c_void_p.from_address(addr + _abi.DLManagedTensorVersioned.deleter.offset).value
    _abi.DELETER(deleter)(addr)
    assert _debug.live_exports() == 0
    before = _debug.export_stats()["unknown_deletes"]
    _abi.DELETER(deleter)(addr)  # a buggy consumer calls it again: ignored, but counted
    assert _debug.export_stats()["unknown_deletes"] == before + 1


@pytest.mark.parametrize("max_version", [None, (1, 1)])
def test_consumer_error_with_an_unconsumed_capsule_survives_and_deleter_runs_once(max_version):
    # Regression: NumPy refuses the capsule (no bfloat16) and drops it while its
    # RuntimeError is set. A capsule destructor running Python code (even a
    # ctypes callback that does nothing) made CPython replace that error with
    # SystemError. webdlpack's capsules have no destructor now.
    t = w.zeros((3,), "bfloat16")

    class Consumer:  # forwards max_version so both capsule kinds are refused
        def __dlpack__(self, **kwargs):
            return t.__dlpack__(max_version=max_version)

        def __dlpack_device__(self):
            return t.__dlpack_device__()

    before = _debug.export_stats()
    with pytest.raises(Exception) as err:
        np.from_dlpack(Consumer())
    assert type(err.value) is RuntimeError, repr(err.value)  # NumPy's own error, not SystemError
    after = _debug.export_stats()
    assert after["created"] - before["created"] == 1
    assert after["deleted"] - before["deleted"] == 1, "the refused capsule's struct is freed exactly once"
    assert after["unknown_deletes"] == before["unknown_deletes"]
    assert after["live"] == before["live"]


def test_unconsumed_capsule_held_elsewhere_is_not_freed():
    t = w.zeros(4)
    cap = t.__dlpack__(max_version=(1, 1))
    keep = [cap]
    del cap
    w.zeros(1).__dlpack__()  # another export scans the dropped capsules
    assert _debug.live_exports() == 1  # still referenced from `keep`
    u = w.from_capsule(keep[0])  # and still consumable
    assert u.data_ptr == t.data_ptr
    del keep
    assert _debug.live_exports() == 1  # consumed: only u's release frees it
    u.dispose()
    assert _debug.live_exports() == 0


def test_exports_look_at_a_bounded_number_of_held_capsules_yet_every_dropped_one_is_freed(without_capsule_destructor):
    from webdlpack.exchange import export as _export

    unknown_before = _debug.export_stats()["unknown_deletes"]
    t = w.zeros(4)
    held = [t.__dlpack__(max_version=(1, 1)) for _ in range(100)]
    dropped = t.__dlpack__(max_version=(1, 1))  # queued behind the 100 held ones
    live = len(_export._REGISTRY)
    del dropped
    exported = w.from_dlpack(t)  # one export: looks at _EXPORT_BUDGET capsules only
    assert len(_export._REGISTRY) == live + 1  # the new struct; nothing freed yet
    for _ in range(101 // _export._EXPORT_BUDGET + 1):  # held capsules rotate to the back: progress is certain
        w.from_dlpack(t).dispose()
    assert len(_export._REGISTRY) == live  # +1 for `exported`, -1 for the dropped capsule
    exported.dispose()
    del held
    assert _debug.export_stats()["unknown_deletes"] == unknown_before
