"""Malformed structs through Python inside Pyodide (under Node): the rule table against the real wasm
memory end, then 3 000 fuzzed structs; Pyodide must still run afterwards (a read past memory traps it). Also:
a capsule dropped unconsumed frees its struct at once there (the C destructor as a side module)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_malformed_structs_inside_pyodide_give_typed_errors():
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules/pyodide/pyodide.mjs").exists():
        pytest.fail("node and node_modules/pyodide are required for this test")
    proc = subprocess.run(
        [node, str(ROOT / "tests/py/pyodide_corpus.mjs"), str(ROOT), "--cases", "3000", "--seed", "12"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no report; stdout={proc.stdout[-2000:]!r} stderr={proc.stderr[-2000:]!r}"
    report = json.loads(lines[-1])
    assert "error" not in report, report["error"]
    assert report["table"]["failures"] == []
    assert report["table"]["ran"] >= 80
    assert report["fuzz"]["failures"] == [] and report["fuzz"]["cases"] == 3000
    assert report["fuzz"]["accepted"] > 10 and report["fuzz"]["refused"] > 10
    # The capsule destructor side module (make build) frees a dropped capsule's struct at once in Pyodide too.
    assert report["capsules"] == {"destructor": True, "held": 1, "after_del": 0}
    assert report["alive"] and report["ok"] and proc.returncode == 0
