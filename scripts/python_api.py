"""The Python package's public names: ``__all__`` of each public module, with what each name is.

Usage: python scripts/python_api.py [--update]

Writes (``--update``, run by ``make api-report``) or checks ``api/webdlpack.python.txt``, the committed list
``tests/py/test_public_api.py`` compares against, so a change to what ``import webdlpack`` offers shows in a
diff and fails the suite until the list is updated on purpose (as ``api/*.api.md`` do for the JS entries).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "api" / "webdlpack.python.txt"
UPDATE_COMMAND = "make api-report"
# The public modules: the package root and the framework helpers it exposes as `webdlpack.frameworks.*`.
PUBLIC_MODULES = ("webdlpack", "webdlpack.frameworks", "webdlpack.frameworks.ort", "webdlpack.frameworks.tfjs")


def kind_of(value: object) -> str:
    """Return what a public name is: module, class, exception, function or constant (with its type)."""
    if inspect.ismodule(value):
        return "module"
    if inspect.isclass(value):
        return "exception" if issubclass(value, BaseException) else "class"
    if callable(value):
        return "function"
    return f"constant: {type(value).__name__}"


def listing() -> str:
    """Return the report: one section per public module, one ``name: kind`` line per name of its ``__all__``."""
    lines = [
        "# The public Python API: __all__ of each public module (scripts/python_api.py; update: make api-report).",
    ]
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        lines.append("")
        lines.append(f"[{name}]")
        lines.extend(f"{n}: {kind_of(getattr(module, n))}" for n in sorted(module.__all__))
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write or check the report; exit 1 naming the update command when it differs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite api/webdlpack.python.txt")
    args = parser.parse_args()
    now = listing()
    if args.update:
        REPORT.write_text(now)
        print(f"  {'webdlpack (Python)':22s} written  {REPORT.relative_to(ROOT)}")
        return 0
    if not REPORT.exists() or REPORT.read_text() != now:
        print(f"{REPORT.relative_to(ROOT)} differs from the package's __all__: run `{UPDATE_COMMAND}`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
