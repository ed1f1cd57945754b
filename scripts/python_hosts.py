"""Set up the Python-only hosts the browser tests run offline: a local Pyodide, PyScript's page, JupyterLite.

    .venv/bin/python scripts/python_hosts.py [--out build/python-hosts]

What it makes under ``--out`` (served from the repo root by scripts/serve.mjs):

``pyodide/``
    The npm package ``pyodide`` (node_modules/pyodide) plus the package wheels a Python-only host loads from
    Pyodide's lock: micropip and packaging (PyScript's ``packages``, JupyterLite's ``%pip``), ipython and its
    lock closure, jedi and parso (JupyterLite's kernel). Pyodide's npm package has none of them; PyPI has them
    at the lock's versions and file names, but not the lock's bytes (the lock lists Pyodide's rebuilt wheels),
    so ``pyodide-lock.json`` gets the PyPI wheels' sha256 (the browser checks integrity).
``lite/``
    ``jupyter lite build`` of an empty site whose Pyodide kernel loads that Pyodide (``pyodideUrl``) and never
    PyPI (``disablePyPIFallback``); ``comm`` (the kernel installs it at boot) is a local wheel in its ``pypi/``.

Needs: ``make setup`` (npm packages; ``jupyterlite-core`` and ``jupyterlite-pyodide-kernel`` in the venv) and
PyPI for the wheels (``pip download``, cached by pip). PyScript itself is the npm package ``@pyscript/core``,
served from node_modules.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYODIDE_NPM = ROOT / "node_modules" / "pyodide"
#: Lock packages a Python-only host loads; each is fetched at the lock's version with its lock closure.
HOST_PACKAGES = ("micropip", "packaging", "ipython", "jedi")
#: Not in Pyodide's lock: the JupyterLite kernel's boot installs it from the site's pypi/ folder.
LITE_WHEELS = ("comm==0.2.3",)
#: The kernel settings (pyodideUrl: this Pyodide on the test server, which serves the repo root; no PyPI).
LITE_SETTINGS = ROOT / "examples" / "python_only" / "jupyter-lite.json"
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def lock_closure(lock: dict, names: tuple[str, ...]) -> list[str]:
    """The lock's names for ``names`` and everything they depend on, in the lock."""
    packages = lock["packages"]
    seen: list[str] = []
    todo = [n.lower().replace("_", "-") for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in packages:
            sys.exit(f"python_hosts: {name} is not in Pyodide's lock (pyodide {lock['info']['python']})")
        seen.append(name)
        todo += [d.lower().replace("_", "-") for d in packages[name]["depends"]]
    return sorted(seen)


def pip_download(specs: list[str], dest: Path) -> None:
    """Pure-Python wheels for Pyodide's CPython from PyPI, no dependencies (the lock gives those)."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.14",
            "--platform",
            "any",
            "-d",
            str(dest),
            *specs,
        ],
        check=True,
    )


def local_pyodide(out: Path) -> None:
    """``out/pyodide``: Pyodide with the host packages' wheels and a lock that names their hashes."""
    dest = out / "pyodide"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(PYODIDE_NPM, dest, ignore=shutil.ignore_patterns("*.d.ts", "*.map", "package.json", "README.md"))
    lock = json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text())
    names = lock_closure(lock, HOST_PACKAGES)
    pip_download([f"{n}=={lock['packages'][n]['version']}" for n in names], dest)
    for name in names:
        entry = lock["packages"][name]
        wheel = dest / entry["file_name"]
        if not wheel.is_file():
            sys.exit(f"python_hosts: PyPI gave no {entry['file_name']} (the lock's file name for {name})")
        entry["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (dest / "pyodide-lock.json").write_text(json.dumps(lock))
    print(f"python_hosts: {dest}: Pyodide {lock['info']['python']} + {len(names)} wheels")


def jupyterlite(out: Path) -> None:
    """``out/lite``: a JupyterLite site whose Pyodide kernel uses ``out/pyodide`` and never reaches PyPI."""
    src, site = out / "lite-src", out / "lite"
    for d in (src, site):
        if d.exists():
            shutil.rmtree(d)
    pip_download(list(LITE_WHEELS), src / "pypi")
    build = subprocess.run(
        [
            str(Path(sys.executable).with_name("jupyter")),
            "lite",
            "build",
            "--lite-dir",
            str(src),
            "--output-dir",
            str(site),
        ],
        cwd=src,
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:  # its output only then: a good build warns about optional packages it does not need
        sys.exit(f"python_hosts: jupyter lite build failed:\n{build.stdout}\n{build.stderr}")
    # A build with a pypi/ folder writes its own kernel settings: ours (the file docs/python-only.md shows) go in
    # afterwards.
    ours = json.loads(LITE_SETTINGS.read_text())["jupyter-config-data"]["litePluginSettings"][KERNEL_PLUGIN]
    config_path = site / "jupyter-lite.json"
    config = json.loads(config_path.read_text())
    data = config.setdefault("jupyter-config-data", {})
    data.setdefault("litePluginSettings", {}).setdefault(KERNEL_PLUGIN, {}).update(ours)
    config_path.write_text(json.dumps(config, indent=2))
    print(f"python_hosts: {site}: JupyterLite, kernel Pyodide {ours['pyodideUrl']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "python-hosts"))
    out = Path(parser.parse_args().out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    local_pyodide(out)
    jupyterlite(out)


if __name__ == "__main__":
    main()
