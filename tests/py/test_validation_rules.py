"""Python's importer against spec/validation-rules.json (the rule set C and JS are tested against too).

On CPython: every Python case that needs no memory bound (tests/py/struct_corpus.py
says which); inside Pyodide (tests/py/test_pyodide_corpus.py, and in Chromium
tests/browser/python-malformed.spec.ts) the rest run against the real wasm memory end.
"""

from __future__ import annotations

import json
from pathlib import Path

import struct_corpus

TABLE = json.loads((Path(__file__).resolve().parents[2] / "spec/validation-rules.json").read_text())


def test_every_unbounded_case_of_the_rule_table():
    report = struct_corpus.run_table(TABLE, bounded=False)
    assert report["failures"] == []
    assert report["ran"] >= 60
