"""Shared fixtures: every test must leave no live export and no live import behind."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from webdlpack.api import debug as _debug  # noqa: E402


@pytest.fixture(autouse=True)
def no_leaked_structs():
    """Fail a test that leaves an exported or imported managed struct alive."""
    gc.collect()
    before_exports, before_imports = _debug.live_exports(), _debug.live_imports()
    unknown_before = _debug.export_stats()["unknown_deletes"]
    yield
    gc.collect()
    assert _debug.live_exports() == before_exports, f"leaked exports: {_debug.export_stats()}"
    assert _debug.live_imports() == before_imports, f"leaked imports: {_debug.import_stats()}"
    assert _debug.export_stats()["unknown_deletes"] == unknown_before, "a deleter ran twice"
