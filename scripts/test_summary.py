"""Sum the JUnit XML files of the suites that ran into one summary line.

Usage: python scripts/test_summary.py RESULTS_DIR SUITE...

Prints per-suite counts, then ``webdlpack: N passed, N failed, N skipped``.
Exits 1 if a suite left no results, ran no test, or had a failure.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def count(path: Path) -> tuple[int, int, int]:
    """Return (passed, failed, skipped) for one JUnit XML file."""
    root = ET.parse(path).getroot()
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(argv: list[str]) -> int:
    results = Path(argv[1])
    ok = True
    totals = [0, 0, 0]
    for suite in argv[2:]:
        path = results / f"{suite}.xml"
        if not path.exists():
            print(f"  {suite:8s} no results (the suite did not run or crashed)")
            ok = False
            continue
        p, f, s = count(path)
        print(f"  {suite:8s} {p} passed, {f} failed, {s} skipped")
        if p + f == 0:
            print(f"  {suite:8s} ran no test")
            ok = False
        totals = [totals[0] + p, totals[1] + f, totals[2] + s]
        ok = ok and f == 0
    print(f"webdlpack: {totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
