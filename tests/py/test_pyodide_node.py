"""The same package imports and round-trips inside Pyodide (wasm32), run under Node."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "node_modules/pyodide/pyodide.mjs"


def run_body(*body: str) -> dict:
    """Run tests/py/pyodide_smoke.mjs (the default body, or the one given) and return its JSON report."""
    node = shutil.which("node")
    if node is None or not PYODIDE.exists():
        pytest.fail(f"node ({node}) and {PYODIDE} are required for this test")
    proc = subprocess.run(
        [node, str(ROOT / "tests/py/pyodide_smoke.mjs"), str(ROOT), *body], capture_output=True, text=True, timeout=180
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no report; stdout={proc.stdout!r} stderr={proc.stderr[-2000:]!r}"
    report: dict = json.loads(lines[-1])
    assert report["ok"], report.get("error")
    assert proc.returncode == 0
    return report


def run_with_bridge(script: str) -> dict:
    """Run a Node script loading a fresh Pyodide with the real bridge (js/dist, after `make build`); its JSON line."""
    bundle = ROOT / "js/dist/webdlpack.bundle.js"
    node = shutil.which("node")
    if node is None or not PYODIDE.exists() or not bundle.exists():
        pytest.fail(f"node ({node}), {PYODIDE} and {bundle} (make build) are required for this test")
    proc = subprocess.run([node, str(ROOT / script), str(ROOT)], capture_output=True, text=True, timeout=180)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, f"stdout={proc.stdout[-2000:]!r} stderr={proc.stderr[-3000:]!r}"
    report: dict = json.loads(lines[-1])
    return report


def test_pyodide_fast_paths_hide_no_change():
    """The import fast path reuses a checked block only while its bytes are the same; deleters called
    through JS run exactly once (tests/py/pyodide_fast_paths_body.py)."""
    report = run_body(str(ROOT / "tests/py/pyodide_fast_paths_body.py"))
    assert report["seen"] >= 1
    assert report["exports"]["live"] == 0 and report["exports"]["unknown_deletes"] == 0
    assert report["imports"]["live"] == 0


def test_pyodide_smoke_round_trip():
    report = run_body()
    assert report["python"].startswith("3.")
    lay = report["layout"]
    assert lay["DLTensor"]["size"] == 40 and lay["DLTensor"]["byte_offset"] == 32
    assert lay["DLManagedTensor"]["size"] == 48
    assert lay["DLManagedTensorVersioned"]["size"] == 64 and lay["DLManagedTensorVersioned"]["dl_tensor"] == 24
    assert report["exports"]["live"] == 0 and report["exports"]["unknown_deletes"] == 0
    # When the C build has run, emcc's own layout (wasm/tools/layout_probe.c) must match too.
    probe = ROOT / "build/layout/wasm32.json"
    if probe.exists():
        emcc = json.loads(probe.read_text())
        for name, entry in lay.items():
            assert emcc[name] == entry, (name, emcc[name], entry)


def test_a_throwing_js_deleter_on_the_first_release_is_a_typed_error_and_pyodide_lives_on():
    """tests/py/pyodide_deleter_error.mjs: the real bridge in a fresh Pyodide; the native owner's first release
    goes through Python's fallback caller, which sets JS's try/catch caller in C; the second through that."""
    report = run_with_bridge("tests/py/pyodide_deleter_error.mjs")
    error = "WebDLPackValueError: [INVALID_ARGUMENT] (from JS) deleter boom"
    # the first release found the bridge (and set JS's caller in C), the second went through that caller
    assert report["messages"] == [f"True {error}", f"True {error}"], report
    assert report["calls"] == 2 and report["released"] == 2 and report["again"] == 20, report


def test_from_js_reaches_js_export_from_c_and_refuses_typed_with_pyodide_alive():
    """tests/py/pyodide_from_js.mjs: the real bridge in a fresh Pyodide; the native take calls JS's export through
    the bridge's export caller for a JsProxy (no Python -> JS call) and through Pyodide's call for anything else."""
    report = run_with_bridge("tests/py/pyodide_from_js.mjs")
    assert report["caller"] is True, report  # this Pyodide has what the export caller needs
    assert report["from_js"] == "builtin_function_or_method", report  # from_js made in C
    assert report["a"] == report["again"] == [[1, 2, 3, 4], "float32", False], report
    assert report["outside"] == [[1.25, 2.5], "float64", True] and report["in_heap"] == [[1, 2], "float32", False]
    refused = "WebDLPackTypeError INVALID_ARGUMENT js_tensor"
    assert report["plain"] == report["python_int"] == refused, report
    assert report["disposed"] == "WebDLPackValueError DISPOSED tensor", report
    # a struct freed and a new one at the same address with another shape and dtype: each read as it is now
    assert report["reused_with_both_shapes"] is True, report
    assert report["live_imports"] == 0 and report["jsLiveExports"] == 0, report
    # argument errors of the C builtin name the function and the argument, as a Python def's would
    assert (
        report["no_argument"] == "from_js() missing its required argument 'js_tensor' (a required argument is missing)"
    )
    assert report["unknown_keyword"] == "from_js() got an unexpected keyword argument 'device'", report
