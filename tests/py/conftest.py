"""Shared fixtures: every test must leave no live export and no live import behind."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from webdlpack.api import debug as _debug  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "double_frees(n): the test makes n deleter calls on freed exports on purpose")


@pytest.fixture(autouse=True)
def no_leaked_structs(request):
    """Fail a test that leaves an exported or imported managed struct alive, or calls a deleter twice
    (beyond the ``double_frees(n)`` it declares)."""
    marker = request.node.get_closest_marker("double_frees")
    expected_double_frees = marker.args[0] if marker else 0
    gc.collect()
    before_exports, before_imports = _debug.live_exports(), _debug.live_imports()
    unknown_before = _debug.export_stats()["unknown_deletes"]
    yield
    gc.collect()
    assert _debug.live_exports() == before_exports, f"leaked exports: {_debug.export_stats()}"
    assert _debug.live_imports() == before_imports, f"leaked imports: {_debug.import_stats()}"
    assert _debug.export_stats()["unknown_deletes"] == unknown_before + expected_double_frees, "a deleter ran twice"
