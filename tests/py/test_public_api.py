"""The public Python names match the committed list ``api/webdlpack.python.txt`` (``make api-report`` updates it).

Adding, removing or retyping a name of a public module's ``__all__`` is a change to the public surface: it must
show in a diff of that file, not slip in.
"""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _python_api():  # noqa: ANN202 - a module loaded by path
    spec = importlib.util.spec_from_file_location("python_api", ROOT / "scripts" / "python_api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_public_names_match_the_committed_list() -> None:
    api = _python_api()
    committed = api.REPORT.read_text() if api.REPORT.exists() else ""
    now = api.listing()
    diff = "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True), now.splitlines(keepends=True), "committed", "the package now"
        )
    )
    assert now == committed, (
        f"the public Python API changed; if intended, run `{api.UPDATE_COMMAND}` and commit api/:\n{diff}"
    )


def test_the_list_names_every_public_module_and_each_name_once() -> None:
    api = _python_api()
    for name in api.PUBLIC_MODULES:
        module = importlib.import_module(name)
        assert len(set(module.__all__)) == len(module.__all__), f"{name}.__all__ repeats a name"
        assert f"[{name}]" in api.listing()
