"""Build webdlpack's Pyodide wheel: the package, its emscripten side modules and its JS half, tagged for each ABI.

Usage: python3 scripts/build_pyodide_wheel.py OUT_DIR   (``make wheel``; prints the wheel's path)
       python3 scripts/build_pyodide_wheel.py --name    (prints the wheel's file name only)

The wheel holds ``py/webdlpack/**/*.py``, ``py.typed``, ``webdlpack/_native/*.emscripten-wasm32.so`` (``make``
builds them with emcc from ``py/native/*.c``) and every file under ``webdlpack/_js/`` (the package's JS half, an
ES module a build step puts there), plus LICENSE. It says what it holds: ``Root-Is-Purelib: false`` and one tag
per Pyodide ABI in pyproject.toml's ``[tool.webdlpack.pyodide-wheel]`` (``cp312-abi3-<platform>``; the side
modules use only the stable ABI and load in every listed Pyodide), so ``micropip.install(url)`` accepts it
exactly where it fits and ``loadWebDLPack`` checks the same tags. Name, version and licence come from
``[project]``. The archive is reproducible: sorted entries, fixed timestamps, fixed permissions.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "py" / "webdlpack"
#: Zip entries' timestamp (the earliest a zip can hold): the same bytes on every rebuild.
EPOCH = (1980, 1, 1, 0, 0, 0)


def package_files() -> list[tuple[str, Path]]:
    """``(path in the wheel, file)`` for every file the wheel ships, sorted."""
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    files += [PACKAGE / "py.typed"]
    files += sorted((PACKAGE / "_native").glob("*.emscripten-wasm32.so"))
    js = PACKAGE / "_js"
    files += [p for p in js.rglob("*") if p.is_file()] if js.is_dir() else []
    return sorted((str(p.relative_to(PACKAGE.parent)), p) for p in set(files))


def wheel_name(project: dict, tags: dict) -> tuple[str, list[str]]:
    """The wheel's file name and its tags (``cp312-abi3-pyodide_2024_0_wasm32``, ...)."""
    platforms = list(tags["platforms"])
    name = f"{project['name']}-{project['version']}-{tags['python-tag']}-{tags['abi-tag']}-{'.'.join(platforms)}.whl"
    return name, [f"{tags['python-tag']}-{tags['abi-tag']}-{p}" for p in platforms]


def metadata(project: dict) -> str:
    """METADATA (core metadata 2.4): name, version, summary, licence, Python range, README as description."""
    readme = (ROOT / project["readme"]).read_text()
    head = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"License-Expression: {project['license']}",
        *(f"License-File: {f}" for f in project["license-files"]),
        f"Requires-Python: {project['requires-python']}",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build(out: Path) -> Path:
    """Write the wheel into ``out``; return its path.

    Raises
    ------
    FileNotFoundError
        A side module is missing (run ``make build`` first): the wheel is never written without them.
    """
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = pyproject["project"]
    name, tags = wheel_name(project, pyproject["tool"]["webdlpack"]["pyodide-wheel"])
    files = package_files()
    for stem in ("capsule_destructor", "exchange"):
        if not (PACKAGE / "_native" / f"{stem}.emscripten-wasm32.so").is_file():
            raise FileNotFoundError(f"webdlpack/_native/{stem}.emscripten-wasm32.so is not built (make build)")
    dist_info = f"{project['name']}-{project['version']}.dist-info"
    entries = [(arc, path.read_bytes()) for arc, path in files]
    entries += [(f"{dist_info}/licenses/{f}", (ROOT / f).read_bytes()) for f in project["license-files"]]
    wheel_file = "Wheel-Version: 1.0\nGenerator: webdlpack scripts/build_pyodide_wheel.py\nRoot-Is-Purelib: false\n"
    wheel_file += "".join(f"Tag: {t}\n" for t in tags)
    entries += [(f"{dist_info}/METADATA", metadata(project).encode()), (f"{dist_info}/WHEEL", wheel_file.encode())]
    entries += [(f"{dist_info}/top_level.txt", b"webdlpack\n")]
    record = "".join(_record_line(arc, data) + "\n" for arc, data in entries) + f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    out.mkdir(parents=True, exist_ok=True)
    target = out / name
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arc, data in entries:
            info = zipfile.ZipInfo(arc, date_time=EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", help="folder to write the wheel into")
    parser.add_argument("--name", action="store_true", help="print the wheel's file name and stop")
    args = parser.parse_args()
    if args.name:
        pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
        print(wheel_name(pyproject["project"], pyproject["tool"]["webdlpack"]["pyodide-wheel"])[0])
        return 0
    if args.out is None:
        parser.error("OUT_DIR is required")
    print(build(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
