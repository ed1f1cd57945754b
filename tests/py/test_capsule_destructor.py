"""Dropped capsules release at once (issue 12, item 6): webdlpack's capsules carry a C destructor
(py/native/capsule_destructor.c) that runs the deleter when a capsule is dropped unconsumed, and a consumer's
own error (NumPy refusing a dtype) stays that error — never a SystemError. Without the destructor library
(WEBDLPACK_CAPSULE_DESTRUCTOR=0, as in a CPython wheel install) dropped capsules are freed later, and a
consumer's error is kept too. Pyodide: tests/py/test_pyodide_corpus.py checks the side-module build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import webdlpack as w
from webdlpack.exchange import capsule as _capsule
from webdlpack.exchange import export as _export

ROOT = Path(__file__).resolve().parents[2]


#: The tests that need the destructor library; the last test runs without it on purpose (in a subprocess).
needs_destructor = pytest.mark.skipif(
    os.environ.get("WEBDLPACK_NATIVE") == "0" or os.environ.get("WEBDLPACK_CAPSULE_DESTRUCTOR") == "0",
    reason="the destructor library is turned off in this run (WEBDLPACK_NATIVE=0 or WEBDLPACK_CAPSULE_DESTRUCTOR=0)",
)


def live() -> int:
    """Live exports, without collecting dropped capsules first (stats() would)."""
    return len(_export._REGISTRY)


def unknown_deletes() -> int:
    """Deleter calls on non-live addresses since import: tests compare it before/after, since other tests
    (test_native_exchange) call deleters on stale addresses on purpose and the counter is process-wide."""
    return _export.stats()["unknown_deletes"]


@needs_destructor
def test_the_destructor_library_is_built_in_this_checkout():
    assert _capsule.CAPSULE_DESTRUCTOR, "make build compiles py/native/capsule_destructor.c into py/webdlpack/_native/"


@needs_destructor
@pytest.mark.parametrize("max_version", [(1, 1), None])
def test_a_dropped_capsule_runs_the_deleter_at_once(max_version):
    t = w.zeros((4,), "float32")
    t.__dlpack__(max_version=max_version)  # a first export caches the struct template (dropped at once)
    stale = unknown_deletes()
    base = live()
    owner_refs = sys.getrefcount(t._owner)
    c = t.__dlpack__(max_version=max_version)
    held_refs = sys.getrefcount(t._owner)  # (plain ints: pytest's assert rewriting would hold the owner)
    assert live() == base + 1 and held_refs > owner_refs
    del c  # what NumPy's test_dlpack checks: released right here
    after_refs = sys.getrefcount(t._owner)
    assert live() == base and after_refs == owner_refs
    assert unknown_deletes() == stale


@needs_destructor
def test_a_consumed_capsule_is_left_to_its_consumer():
    t = w.zeros((4,), "float32")
    stale = unknown_deletes()
    base = live()
    c = t.__dlpack__()
    u = w.from_capsule(c)
    del c  # renamed used_dltensor_versioned: the destructor leaves it
    assert live() == base + 1
    u.dispose()
    assert live() == base and unknown_deletes() == stale


@needs_destructor
def test_a_consumer_error_stays_the_consumers_own():
    t = w.zeros((4,), "bfloat16")  # NumPy refuses bfloat16 and drops the capsule, error set
    base = live()
    with pytest.raises(RuntimeError, match="Unsupported dtype") as err:
        np.from_dlpack(t)
    assert not isinstance(err.value, SystemError)
    assert live() == base  # and the struct it dropped is already freed


def test_without_the_destructor_dropped_capsules_are_freed_later_and_errors_are_kept():
    code = """
import numpy as np, webdlpack as w
from webdlpack.exchange import capsule, export
assert capsule.CAPSULE_DESTRUCTOR is None
t = w.zeros((4,), "bfloat16")
try:
    np.from_dlpack(t)
except RuntimeError as e:
    assert "Unsupported dtype" in str(e)
c = t.__dlpack__(); del c
held = len(export._REGISTRY)
assert export.stats()["live"] == 0
print("ok", held)
"""
    env = {**os.environ, "WEBDLPACK_CAPSULE_DESTRUCTOR": "0"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["ok", "1"]  # the dropped one waited for the next export / stats()
