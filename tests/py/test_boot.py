"""``import webdlpack`` brings up its own JS half where no page did (py/webdlpack/bridge/boot.py).

In Pyodide under Node (tests/py/pyodide_boot.mjs): no JSPI there, so the import cannot wait and says so;
``await webdlpack.init()`` loads the JS half shipped in the wheel, joins a context another copy of webdlpack made
(or makes one), and registers the bridge; no WebGPU there, so GPU work fails with the reason, typed, while CPU
tensors still cross zero-copy. On CPython the same functions say there is no JS. The browsers (PyScript main
thread and worker, JupyterLite's kernel Worker) are tests/browser/python-only-*.spec.ts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import webdlpack

ROOT = Path(__file__).resolve().parents[2]
#: The Pyodide wheel `make build` wrote (its name lists every Pyodide ABI it is tagged for).
WHEEL = next(iter(sorted((ROOT / "build/wheel").glob("webdlpack-*.whl"))), ROOT / "build/wheel/webdlpack.whl")


def run_boot(mode: str = "") -> dict:
    """Run tests/py/pyodide_boot_body.py through tests/py/pyodide_boot.mjs; its JSON report."""
    node = shutil.which("node")
    if node is None or not WHEEL.exists():
        pytest.fail(f"node ({node}) and the built wheel {WHEEL} (make build) are required for this test")
    args = [node, str(ROOT / "tests/py/pyodide_boot.mjs"), str(ROOT), str(WHEEL)]
    args += [str(ROOT / "tests/py/pyodide_boot_body.py"), *([mode] if mode else [])]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=180)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no report; stdout={proc.stdout[-2000:]!r} stderr={proc.stderr[-2000:]!r}"
    report: dict = json.loads(lines[-1])
    assert report["ok"], report.get("error")
    return report


@pytest.fixture(scope="module")
def fresh() -> dict:
    return run_boot()


def test_where_the_import_cannot_wait_every_js_function_says_why_and_what_to_do(fresh: dict) -> None:
    assert fresh["after_import"] == {"bridge": None, "joined_context": None, "realm": None, "device": None}
    to_js = fresh["to_js_before_init"]
    assert (to_js["type"], to_js["code"]) == ("WebDLPackBufferError", "UNSUPPORTED")
    assert "could not load its JS half here: this code cannot wait for it" in to_js["message"]
    assert "await webdlpack.init()" in to_js["message"]
    gpu = fresh["gpu_before_init"]
    assert (gpu["type"], gpu["code"], gpu["field"]) == ("WebDLPackDeviceError", "NO_WEBGPU", "device")
    assert "cannot wait for it" in gpu["message"]


def test_init_loads_the_js_half_from_the_wheel_and_cpu_tensors_cross_zero_copy(fresh: dict) -> None:
    after = fresh["after_init"]
    assert after["bridge"] == "webdlpack" and after["joined_context"] is False and after["realm"] == "other"
    assert fresh["cpu_round_trip"] == {"values": [1.5, -2.0, 3.25], "same_address": True}


def test_without_webgpu_init_and_every_gpu_function_raise_no_webgpu_with_the_reason(fresh: dict) -> None:
    init = fresh["init"]
    assert (init["type"], init["code"]) == ("WebDLPackDeviceError", "NO_WEBGPU")
    assert "navigator.gpu is undefined" in init["message"]
    assert fresh["after_init"]["device"] is None
    for key in ("gpu_after_init", "ort_run"):
        error = fresh[key]
        assert (error["type"], error["code"]) == ("WebDLPackDeviceError", "NO_WEBGPU"), key
        assert "could not set up the page's WebGPU device (why:" in error["message"], key
        assert "navigator.gpu is undefined" in error["message"], key


def test_the_js_half_joins_a_context_another_copy_of_webdlpack_made() -> None:
    joined = run_boot("joined")
    assert joined["after_init"]["joined_context"] is True and joined["after_init"]["bridge"] == "webdlpack"
    assert joined["sameContextObject"] is True


def test_on_cpython_init_and_the_framework_helpers_say_there_is_no_js() -> None:
    with pytest.raises(webdlpack.WebDLPackDeviceError) as info:
        asyncio.run(webdlpack.init())
    assert info.value.code is webdlpack.ErrorCode.NO_WEBGPU and "only in Pyodide; this is cpython" in str(info.value)
    with pytest.raises(webdlpack.WebDLPackDeviceError) as info:
        webdlpack.frameworks.ort.session_options(None)
    assert info.value.code is webdlpack.ErrorCode.NO_WEBGPU
    assert webdlpack.js_half_status()["bridge"] is None
