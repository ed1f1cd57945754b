"""Export bookkeeping is thread-safe: concurrent exports and drops leave no struct behind and free none twice."""

from __future__ import annotations

import gc
import sys
import threading

import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.exchange import export as _export

THREADS = 4
EXPORTS = 10_000
HELD = 50


def _exporter(t: w.Tensor, start: threading.Barrier, errors: list[BaseException]) -> None:
    try:
        start.wait()
        held = []
        for i in range(EXPORTS):
            held.append(t.__dlpack__(max_version=(1, 1)) if i % 2 else t.__dlpack__())
            if len(held) >= HELD:
                held.clear()
        held.clear()
    except BaseException as err:  # pragma: no cover - reported by the assertion below
        errors.append(err)


def test_threads_exporting_and_dropping_capsules_return_to_baseline() -> None:
    tensors = [w.zeros((3, 2), "float32") for _ in range(THREADS)]
    gc.collect()
    before = _debug.export_stats()
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, to expose races
    try:
        workers = [threading.Thread(target=_exporter, args=(t, start, errors)) for t in tensors]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(old_interval)
    assert errors == []
    gc.collect()
    after = _debug.export_stats()
    assert after["created"] - before["created"] == THREADS * EXPORTS
    assert after["live"] == before["live"], after
    assert after["deleted"] - before["deleted"] == THREADS * EXPORTS
    assert after["unknown_deletes"] == before["unknown_deletes"]
    assert len(_export._CAPSULES) == 0


def test_threads_consuming_each_others_exports_free_each_struct_once() -> None:
    shared = w.from_buffer(bytearray(range(16)))
    gc.collect()
    before = _debug.export_stats()
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def consume() -> None:
        try:
            start.wait()
            for i in range(2_000):
                imported = w.from_dlpack(shared)
                if i % 3:
                    unused = shared.__dlpack__(max_version=(1, 1))
                    del unused
                assert imported.tolist()[15] == 15
                imported.dispose()
        except BaseException as err:  # pragma: no cover - reported by the assertion below
            errors.append(err)

    workers = [threading.Thread(target=consume) for _ in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    gc.collect()
    after = _debug.export_stats()
    assert after["live"] == before["live"] and after["unknown_deletes"] == before["unknown_deletes"], after
    assert after["created"] - before["created"] == after["deleted"] - before["deleted"]


def test_a_collection_inside_collect_capsules_does_not_free_twice(monkeypatch) -> None:
    from webdlpack.exchange import capsule as _capsule

    # The queue is the fallback where no capsule destructor loads (a CPython wheel install): use it here.
    monkeypatch.setattr(_capsule, "CAPSULE_DESTRUCTOR", None)
    monkeypatch.setattr(_export, "CAPSULE_DESTRUCTOR", None)
    t = w.zeros((2,), "int8")
    before = _debug.export_stats()
    held = [t.__dlpack__() for _ in range(100)]
    held.clear()  # dropped unconsumed: 100 queued capsules to free
    nested = []
    real = _export.capsule_name

    def name_then_collect(capsule: object) -> str | None:
        if not nested:
            nested.append(len(_export._CAPSULES))
            gc.collect()  # webdlpack's gc callback collects the rest in the middle of this collection
            nested.append(len(_export._CAPSULES))
        return real(capsule)

    monkeypatch.setattr(_export, "capsule_name", name_then_collect)
    _export.collect_capsules()
    monkeypatch.undo()
    assert nested[0] > 0 and nested[1] == 0, nested
    after = _debug.export_stats()
    assert after["live"] == before["live"] and after["unknown_deletes"] == before["unknown_deletes"], after
    assert after["deleted"] - before["deleted"] == 100
