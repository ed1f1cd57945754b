"""The package's type annotations hold: ``mypy --strict`` over py/webdlpack is clean.

The package ships ``py.typed``, so its annotations are part of its API; this
runs mypy with the settings in pyproject.toml (strict, Pyodide-only modules
treated as untyped imports).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api as mypy_api  # a dev dependency (pip install -e .[dev]): missing it is a set-up error

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_strict_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    stdout, stderr, status = mypy_api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, f"mypy --strict found problems:\n{stdout}{stderr}"
    assert "Success: no issues found" in stdout


def test_package_ships_py_typed() -> None:
    assert (ROOT / "py" / "webdlpack" / "py.typed").is_file()
