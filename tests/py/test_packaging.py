"""webdlpack's Python packages say what they hold, and build the way users build them.

- The Pyodide wheel (``scripts/build_pyodide_wheel.py``, what ``make build`` ships in js/dist/python/): tagged
  ``cp312-abi3`` for each Pyodide ABI listed in pyproject.toml, ``Root-Is-Purelib: false``, holding the package,
  its emscripten side modules and nothing built for this host, with a RECORD that matches; reproducible; pip on
  CPython refuses it.
- From a clean copy of the tree (the tracked files, as a fresh clone has them): ``python -m build`` makes an
  sdist carrying the C sources and a ``cp311-abi3-<platform>`` wheel built from it with this machine's compiler,
  and the installed wheel runs the native exchange; with no working compiler the wheel is ``py3-none-any``, the
  build warns, and ``webdlpack.info()`` says why the pure-Python exchange runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import build_pyodide_wheel  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
HOST_PLATFORM = sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _wheel_metadata(wheel: zipfile.ZipFile, name: str) -> str:
    (path,) = [n for n in wheel.namelist() if n.endswith(f".dist-info/{name}")]
    return wheel.read(path).decode()


def _record_matches(wheel: zipfile.ZipFile) -> None:
    """Every file is in RECORD with its size and sha256, and RECORD lists nothing else."""
    rows = [line.split(",") for line in _wheel_metadata(wheel, "RECORD").splitlines()]
    listed = {path: (digest, size) for path, digest, size in rows}
    assert sorted(listed) == sorted(wheel.namelist())
    for path, (digest, size) in listed.items():
        if path.endswith("RECORD"):
            continue
        data = wheel.read(path)
        expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (expected, len(data)), path


def test_the_pyodide_wheel_is_tagged_for_each_pyodide_abi_and_holds_its_side_modules(tmp_path: Path) -> None:
    wheel_path = build_pyodide_wheel.build(tmp_path)
    tags = PYPROJECT["tool"]["webdlpack"]["pyodide-wheel"]
    assert wheel_path.name == f"webdlpack-0.1.0-cp312-abi3-{'.'.join(tags['platforms'])}.whl"
    with zipfile.ZipFile(wheel_path) as wheel:
        meta = _wheel_metadata(wheel, "WHEEL")
        assert "Root-Is-Purelib: false" in meta
        assert [line[5:] for line in meta.splitlines() if line.startswith("Tag: ")] == [
            f"cp312-abi3-{p}" for p in tags["platforms"]
        ]
        names = wheel.namelist()
        assert sorted(n for n in names if n.endswith(".so")) == [
            "webdlpack/_native/capsule_destructor.emscripten-wasm32.so",
            "webdlpack/_native/exchange.emscripten-wasm32.so",
        ]
        for so in (n for n in names if n.endswith(".so")):
            assert wheel.read(so)[:4] == b"\0asm", so
        sources = sorted(str(p.relative_to(ROOT / "py")) for p in (ROOT / "py/webdlpack").rglob("*.py"))
        assert sorted(n for n in names if n.endswith(".py")) == [s for s in sources if "__pycache__" not in s]
        assert "webdlpack-0.1.0.dist-info/licenses/LICENSE" in names
        assert not [n for n in names if "build-info" in n or HOST_PLATFORM.replace("_", "-") in n]
        assert "License-Expression: Apache-2.0" in _wheel_metadata(wheel, "METADATA")
        _record_matches(wheel)
    # pip on CPython refuses it (it used to install as py3-none-any, wasm and all, and run pure Python).
    refused = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", str(wheel_path)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "is not a supported wheel on this platform" in refused.stderr, refused.stderr
    again = build_pyodide_wheel.build(tmp_path / "again")
    # exact: a zip of the same files with fixed timestamps, no floats involved
    assert again.read_bytes() == wheel_path.read_bytes(), "the Pyodide wheel is not reproducible"


@pytest.fixture(scope="module")
def clean_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files a fresh clone has (tracked, plus untracked ones git does not ignore), copied: no build outputs."""
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    tree = tmp_path_factory.mktemp("clone")
    for name in filter(None, files.split("\0")):
        src = ROOT / name
        if src.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tree / name)
    assert not (tree / "py/webdlpack/_native").exists()
    return tree


def _build(tree: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """``python -m build --no-isolation`` (the venv's setuptools and build, no download) in ``tree``; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), *args],
        cwd=tree,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def _info_of(wheel_path: Path, site: Path) -> tuple[dict[str, object], str]:
    """``webdlpack.info()`` of the wheel unpacked into ``site`` (a fresh interpreter), and what it printed."""
    with zipfile.ZipFile(wheel_path) as wheel:
        wheel.extractall(site)
    done = subprocess.run(
        [sys.executable, "-c", "import json, webdlpack; print(json.dumps(webdlpack.info()))"],
        cwd=site,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


def test_python_m_build_makes_an_sdist_with_the_c_sources_and_a_native_abi3_wheel(
    clean_tree: Path, tmp_path: Path
) -> None:
    output = _build(clean_tree, tmp_path / "dist")
    assert "SetuptoolsDeprecationWarning" not in output and "BuildBackendWarning" not in output
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    native_sources = {str(p.relative_to(ROOT)) for p in (ROOT / "py/native").iterdir()}
    assert native_sources <= names, native_sources - names
    assert {"LICENSE", "setup.py", "pyproject.toml", "wasm/include/webdlpack/dlpack.h"} <= names
    assert not [n for n in names if n.endswith(".so")]
    (wheel_path,) = (tmp_path / "dist").glob("*.whl")
    assert wheel_path.name == f"webdlpack-0.1.0-cp311-abi3-{HOST_PLATFORM}.whl"
    with zipfile.ZipFile(wheel_path) as wheel:
        assert "Root-Is-Purelib: false" in _wheel_metadata(wheel, "WHEEL")
        libs = sorted(n for n in wheel.namelist() if n.endswith(".so"))
        assert not [n for n in libs if "emscripten" in n], "wasm side modules in a CPython wheel"
        assert len(libs) == 2 and all(n.startswith("webdlpack/_native/") for n in libs), libs
        _record_matches(wheel)
    info, _ = _info_of(wheel_path, tmp_path / "site")
    assert (info["host"], info["exchange"], info["capsule_destructor"], info["fallback"]) == (
        "cpython",
        "native",
        "native",
        {},
    )


def test_without_a_compiler_the_wheel_is_pure_python_and_says_so(clean_tree: Path, tmp_path: Path) -> None:
    output = _build(clean_tree, tmp_path / "dist", "--wheel", env={"CC": str(tmp_path / "no-such-cc")})
    assert "the native exchange library was not built" in output and "pure-Python implementation" in output
    (wheel_path,) = (tmp_path / "dist").glob("*.whl")
    assert wheel_path.name == "webdlpack-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel_path) as wheel:
        assert "Root-Is-Purelib: true" in _wheel_metadata(wheel, "WHEEL")
        assert not [n for n in wheel.namelist() if n.endswith(".so")]
    info, stderr = _info_of(wheel_path, tmp_path / "site")
    assert (info["exchange"], info["capsule_destructor"]) == ("python", "none")
    fallback = info["fallback"]
    assert isinstance(fallback, dict) and "no-such-cc" in fallback["exchange"], fallback
    assert fallback["exchange"].startswith("not built when webdlpack was installed")
    assert "RuntimeWarning" in stderr and "pure-Python exchange" in stderr


def test_each_command_installs_only_the_extras_it_runs(clean_tree: Path) -> None:
    """``make -n`` on a fresh tree: the demo's set-up is pip alone; the tests, lint and bench name their extras."""

    def planned(target: str) -> list[str]:
        out = subprocess.run(["make", "-n", target], cwd=clean_tree, capture_output=True, text=True, check=True)
        return [line for line in out.stdout.splitlines() if "pip install" in line]

    assert planned("demo") == [".venv/bin/python -m pip install -q --upgrade pip"]
    assert any("-e '.[test,interop,lint]'" in line for line in planned("test"))
    assert [line for line in planned("lint") if "-e '." in line] == [
        ".venv/bin/python -m pip install -q --no-build-isolation -e '.[lint]'"
    ]
    assert any("-e '.[bench]'" in line for line in planned("bench"))
    extras = PYPROJECT["project"]["optional-dependencies"]
    heavy = ("jax", "matplotlib", "apache-tvm-ffi", "onnx", "tflite")
    assert not [r for r in extras["test"] + extras["lint"] if r.startswith(("jax", "matplotlib"))]
    assert all(any(r.startswith(h) for name in ("test", "interop", "bench") for r in extras[name]) for h in heavy)
