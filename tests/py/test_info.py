"""``webdlpack.info()`` says what runs: the host, its Python, and the native or pure-Python exchange, and why."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import webdlpack
from webdlpack.core import host


def test_info_names_the_host_the_python_and_the_exchange() -> None:
    info = webdlpack.info()
    assert info["host"] == "cpython" and info["pyodide"] is None
    assert info["python"] == platform.python_version()
    assert info["platform"] == sysconfig.get_platform().replace("-", "_").replace(".", "_")
    off = os.environ.get("WEBDLPACK_NATIVE") == "0"
    assert info["exchange"] == ("python" if off else "native")
    assert (info["fallback"] != {}) == off


def test_turned_off_it_says_so_without_a_warning() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import json, webdlpack; print(json.dumps(webdlpack.info()))"],
        env={**os.environ, "WEBDLPACK_NATIVE": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    info = json.loads(done.stdout)
    assert (info["exchange"], info["capsule_destructor"]) == ("python", "none")
    assert info["fallback"] == {
        "exchange": "turned off (WEBDLPACK_NATIVE=0)",
        "capsule_destructor": "turned off (WEBDLPACK_NATIVE=0)",
    }


def test_a_failed_build_is_reported_in_its_own_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBDLPACK_NATIVE", raising=False)
    monkeypatch.setattr(host, "NATIVE_DIR", tmp_path)
    assert host.native_missing_reason("exchange").startswith(f"not built for {host.NATIVE_HOST}")
    info = {
        "host": host.NATIVE_HOST,
        "libraries": {"exchange": "no C compiler: cc not found", "capsule_destructor": "built"},
    }
    (tmp_path / "build-info.json").write_text(json.dumps(info))
    assert (
        host.native_missing_reason("exchange") == "not built when webdlpack was installed: no C compiler: cc not found"
    )
    (tmp_path / "build-info.json").write_text("{not json")
    assert host.native_missing_reason("exchange").startswith("not built for")
