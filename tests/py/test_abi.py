"""The ctypes mirror matches wasm/include/webdlpack/dlpack.h and the host's C layout."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import webdlpack
from webdlpack.core import abi as _abi
from webdlpack.core import host as _host

HEADER = Path(__file__).resolve().parents[2] / "wasm/include/webdlpack/dlpack.h"


def _header_code() -> str:
    """The header without comments."""
    return re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)


def _header_enum(name: str) -> dict[str, int]:
    body = re.search(r"typedef enum \{([^{}]*)\}\s*" + name + ";", _header_code()).group(1)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+)\s*=\s*(\d+)", body)}


def test_device_enum_matches_header():
    assert _header_enum("DLDeviceType") == {m.name: int(m) for m in _abi.DLDeviceType}


def test_dtype_code_enum_matches_header():
    assert _header_enum("DLDataTypeCode") == {m.name: int(m) for m in _abi.DLDataTypeCode}


def test_flags_and_version_match_header():
    text = HEADER.read_text()
    flags = {
        m.group(1): 1 << int(m.group(2))
        for m in re.finditer(r"#define DLPACK_FLAG_BITMASK_(\w+) \(1ULL << (\d+)\)", text)
    }
    assert flags == {
        "READ_ONLY": _abi.FLAG_READ_ONLY,
        "IS_COPIED": _abi.FLAG_IS_COPIED,
        "IS_SUBBYTE_TYPE_PADDED": _abi.FLAG_IS_SUBBYTE_TYPE_PADDED,
    }
    major = int(re.search(r"#define DLPACK_MAJOR_VERSION (\d+)", text).group(1))
    minor = int(re.search(r"#define DLPACK_MINOR_VERSION (\d+)", text).group(1))
    assert webdlpack.DLPACK_VERSION == (major, minor) == (1, 1)


def test_struct_fields_follow_header_order():
    text = _header_code()
    body = re.search(r"typedef struct \{([^{}]*)\}\s*DLTensor;", text).group(1)
    names = re.findall(r"\*?(\w+);", body)
    assert names == [f[0] for f in _abi.DLTensor._fields_]
    body = re.search(r"typedef struct DLManagedTensorVersioned \{([^{}]*)\}\s*DLManagedTensorVersioned;", text).group(1)
    names = re.findall(r"(?:\*?(\w+);|\(\*(\w+)\))", body)
    assert [a or b for a, b in names] == [f[0] for f in _abi.DLManagedTensorVersioned._fields_]


def test_layout_matches_native_c_rules():
    p = _host.POINTER_SIZE
    lay = webdlpack.layout()
    lay = {name: {k: v for k, v in entry.items() if k != "align"} for name, entry in lay.items()}
    assert lay["DLPackVersion"] == {"size": 8, "major": 0, "minor": 4}
    assert lay["DLDevice"] == {"size": 8, "device_type": 0, "device_id": 4}
    assert lay["DLDataType"] == {"size": 4, "code": 0, "bits": 1, "lanes": 2}
    if p == 8:
        assert lay["DLTensor"] == {
            "size": 48,
            "data": 0,
            "device": 8,
            "ndim": 16,
            "dtype": 20,
            "shape": 24,
            "strides": 32,
            "byte_offset": 40,
        }
        assert lay["DLManagedTensor"] == {"size": 64, "dl_tensor": 0, "manager_ctx": 48, "deleter": 56}
        assert lay["DLManagedTensorVersioned"] == {
            "size": 80,
            "version": 0,
            "manager_ctx": 8,
            "deleter": 16,
            "flags": 24,
            "dl_tensor": 32,
        }
    else:  # wasm32: the numbers the header asserts
        assert lay["DLTensor"]["size"] == 40 and lay["DLTensor"]["byte_offset"] == 32
        assert lay["DLManagedTensor"]["size"] == 48
        assert lay["DLManagedTensorVersioned"]["size"] == 64
        assert lay["DLManagedTensorVersioned"]["dl_tensor"] == 24


def test_layout_keys_name_every_field():
    lay = webdlpack.layout()
    for name, struct in [("DLTensor", _abi.DLTensor), ("DLManagedTensorVersioned", _abi.DLManagedTensorVersioned)]:
        assert set(lay[name]) == {"size", "align"} | {f[0] for f in struct._fields_}
        assert lay[name]["size"] == ctypes.sizeof(struct) and lay[name]["align"] == ctypes.alignment(struct)


def test_host_detection_on_cpython():
    assert not _host.IS_PYODIDE and _host.HOST_NAME == "cpython"
    assert _host.POINTER_SIZE == ctypes.sizeof(ctypes.c_void_p)
    assert _host.MAX_ADDRESS == 2 ** (8 * _host.POINTER_SIZE) - 1
