"""Check formatting and lint of the whole tree: Biome (TS/JS), Ruff (Python), clang-format (C), the API reports.

Usage: python scripts/lint.py [--fix] [--junit PATH]

Each tool is one check; the output of a failing one is printed. ``api-report`` compares the public JS
surface (js/dist's declarations, built by ``make js``) with the committed ``api/*.api.md``
(``make api-report`` updates them). With ``--junit`` the
results are written as JUnit XML (one test case per check) for scripts/test_summary.py.
With ``--fix`` the tools rewrite the files instead (``make format``).
Exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# Third-party headers kept byte-for-byte as their tests need them.
C_EXCLUDE = ("tests/c/dlpack_bad_upstream/",)


def c_files() -> list[str]:
    """Return the tracked and untracked-not-ignored C sources and headers."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.c", "*.h"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return [f for f in out if not f.startswith(C_EXCLUDE) and (ROOT / f).exists()]


def checks(fix: bool) -> list[tuple[str, list[str]]]:
    """Return (name, command) for each check."""
    cfmt = [str(BIN / "clang-format"), *(["-i"] if fix else ["--dry-run", "--Werror"]), *c_files()]
    if fix:
        return [
            ("biome", ["npx", "biome", "check", "--write", "."]),
            ("ruff-check", [str(BIN / "ruff"), "check", "--fix", "."]),
            ("ruff-format", [str(BIN / "ruff"), "format", "."]),
            ("clang-format", cfmt),
        ]
    return [
        ("api-report", ["node", "scripts/api-report.mjs"]),
        ("biome", ["npx", "biome", "ci", "--colors=off", "."]),
        ("ruff-check", [str(BIN / "ruff"), "check", "--output-format=concise", "."]),
        ("ruff-format", [str(BIN / "ruff"), "format", "--check", "."]),
        ("clang-format", cfmt),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fix", action="store_true", help="rewrite the files (make format)")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    args = parser.parse_args()
    suite = ET.Element("testsuite", name="lint")
    failed = 0
    for name, cmd in checks(args.fix):
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        case = ET.SubElement(suite, "testcase", classname="lint", name=name)
        if proc.returncode == 0:
            print(f"  {name:12s} ok")
            continue
        failed += 1
        output = (proc.stdout + proc.stderr).strip()
        hint = (
            "make api-report updates the reports, if the change is intended"
            if name == "api-report"
            else "make format fixes formatting"
        )
        print(f"  {name:12s} FAILED ({hint})\n{output[-6000:]}")
        ET.SubElement(case, "failure", message=f"{name} exited {proc.returncode}").text = output
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(failed))
    if args.junit:
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        ET.ElementTree(suite).write(args.junit, encoding="utf-8", xml_declaration=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
