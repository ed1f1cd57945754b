"""NumPy *inside Pyodide* with webdlpack and the real JS bridge, under Node.

NumPy for Pyodide is not obtainable offline (not in the pyodide npm package, not on PyPI), so this runs
only when ``WEBDLPACK_PYODIDE_PACKAGES`` names a local folder holding Pyodide's numpy wheel (e.g. a
Pyodide 314 full distribution); it is skipped with that reason otherwise. No browser or WebGPU is
involved: these are CPU exchanges, so Pyodide under Node runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = os.environ.get("WEBDLPACK_PYODIDE_PACKAGES", "")


@pytest.mark.skipif(
    PACKAGES == "",
    reason="NumPy for Pyodide is not obtainable offline: set WEBDLPACK_PYODIDE_PACKAGES to a local "
    "Pyodide package folder holding numpy",
)
def test_numpy_in_pyodide_zero_copy_with_webdlpack_and_js() -> None:
    wheels = sorted(Path(PACKAGES).glob("numpy-*.whl"))
    assert wheels, f"WEBDLPACK_PYODIDE_PACKAGES={PACKAGES} holds no numpy-*.whl"
    node = shutil.which("node")
    assert node is not None, "node is required"
    proc = subprocess.run(
        [
            node,
            str(ROOT / "tests/py/pyodide_numpy.mjs"),
            str(ROOT),
            str(ROOT / "tests/py/pyodide_numpy_body.py"),
            str(wheels[-1]),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no report; stdout={proc.stdout!r} stderr={proc.stderr[-2000:]!r}"
    result = json.loads(lines[-1])
    assert result["ok"], result.get("error")
    assert result["report"]["checks"] == 4
    assert proc.returncode == 0
