"""Python half of the CPU exchange benchmark (bench/cpu-exchange.js), run inside Pyodide.

Every case of the benchmark is ONE JS -> Python call of one function below, with one argument, and the
function does the whole exchange (hand over, touch, release) and returns a number. So a webdlpack row and
the copy row it is compared with cross between the languages the same number of times; ``ffi_int`` (the
same call doing nothing) is the baseline of what that one call costs.

JS installs this file as the module ``webdlpack_bench`` and calls :func:`attach` once, :func:`setup` once
per size.
"""

from __future__ import annotations

import array
import ctypes
from typing import Any

import webdlpack
from pyodide.ffi import to_js as _ffi_to_js

try:  # the address-level seam the JS bridge uses (package layout after the architecture split)
    from webdlpack.api import debug as _debug
    from webdlpack.api.managed import export_managed, import_managed
except ImportError:  # pragma: no cover - layout before the split
    from webdlpack import _debug  # type: ignore[no-redef]
    from webdlpack._exchange import export_managed, import_managed  # type: ignore[no-redef]

_VP = ctypes.c_void_p

# Set by attach() / setup().
_consume_tensor: Any = None  # JS (jt) => jt.view[0] after which jt.dispose()
_consume_array: Any = None  # JS (a) => a[0]
_create: Any = None
_validate: Any = None
_release: Any = None
_malloc: Any = None
_free: Any = None
_buf: Any = None  # array.array of the current size
_t: Any = None  # webdlpack.Tensor over _buf
_src = 0  # address of _buf's bytes
_c_view = 0  # DLTensor of a C-owned buffer (made by the side module)
_c_data = 0
_nbytes = 0


def _fn(lib: Any, name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


def attach(clib_path: str, consume_tensor: Any, consume_array: Any) -> None:
    """Bind the side module (already loaded by JS at ``clib_path``) and the two JS consumers."""
    global _consume_tensor, _consume_array, _create, _validate, _release, _malloc, _free
    _consume_tensor, _consume_array = consume_tensor, consume_array
    lib = ctypes.CDLL(clib_path)
    # The one-argument producer (create_from_view with flags 0, no release callback): ctypes costs per argument.
    _create = _fn(lib, "wdl_managed_tensor_create_borrowed", _VP, _VP)
    # Validation against the current memory size (wdl_managed_tensor_validate(t, wdl_memory_size())): one argument.
    _validate = _fn(lib, "wdl_managed_tensor_check", ctypes.c_int, _VP)
    _release = _fn(lib, "wdl_managed_tensor_release", ctypes.c_int, _VP)
    libc = ctypes.CDLL(None)
    _malloc = _fn(libc, "malloc", _VP, ctypes.c_size_t)
    _free = _fn(libc, "free", None, _VP)


def setup(nbytes: int, c_view: int, c_data: int) -> Any:
    """Make this size's Python tensor; remember the C tensor's DLTensor. Returns the tensor (JS keeps a proxy)."""
    global _buf, _t, _src, _c_view, _c_data, _nbytes
    _buf = array.array("f", bytes(nbytes))
    _t = webdlpack.from_buffer(_buf)
    _src = _buf.buffer_info()[0]
    _c_view, _c_data, _nbytes = c_view, c_data, nbytes
    return _t


def teardown() -> None:
    """Drop this size's tensor and buffer."""
    global _buf, _t
    if _t is not None:
        _t.dispose()
    _buf = _t = None


def live_counts() -> dict[str, int]:
    """Python's live counts: exports not yet deleted (the size's JS tensor holds one), deleter calls on
    unknown addresses, adopted structs not yet released."""
    exports, imports = _debug.export_stats(), _debug.import_stats()
    return {
        "pyLiveExports": exports["live"],
        "pyUnknownDeletes": exports["unknown_deletes"],
        "pyLiveImports": imports["live"],
    }


# -- baseline ---------------------------------------------------------------------


def ffi_int(n: int) -> int:
    """One plain Pyodide FFI call with one integer argument: nothing else."""
    return n


# -- Python -> JS: Python hands a tensor to a JS function ---------------------------


def py_to_js(_: int) -> Any:
    """``webdlpack.to_js`` of the tensor, given to a JS consumer that touches it and disposes it."""
    return _consume_tensor(webdlpack.to_js(_t))


def py_to_js_copy(_: int) -> Any:
    """Pyodide's copy (``pyodide.ffi.to_js`` of the buffer: a TypedArray), given to a JS consumer."""
    return _consume_array(_ffi_to_js(_buf))


# -- JS -> Python: JS gives Python a tensor ----------------------------------------------


def js_to_py(x: Any) -> int:
    """``webdlpack.from_js`` of a JS tensor, touched (nbytes) and disposed."""
    t = webdlpack.from_js(x)
    n = t.nbytes
    t.dispose()
    return n


def js_to_py_copy(x: Any) -> int:
    """Pyodide's copy of a JS TypedArray (``to_py``)."""
    return len(x.to_py())


def js_address_to_py(address: int) -> int:
    """Adopt a managed struct JS already wrote (``tensor.toManaged``), touch it, dispose it."""
    t = import_managed(address)
    n = t.nbytes
    t.dispose()
    return n


# -- C <-> Python ---------------------------------------------------------------------------


def c_to_py(_: int) -> int:
    """The side module makes a managed tensor over its buffer; Python adopts, touches and disposes it (deleter → C)."""
    t = import_managed(_create(_c_view))
    n = t.nbytes
    t.dispose()
    return n


def c_to_py_copy(_: int) -> int:
    """Python copies the C buffer's bytes (``ctypes.string_at``)."""
    return len(ctypes.string_at(_c_data, _nbytes))


def py_to_c(_: int) -> int:
    """Python exports its tensor; C takes it (validates) and releases it (deleter → Python)."""
    address = export_managed(_t)
    if _validate(address) != 0:
        raise RuntimeError("wdl_managed_tensor_check refused webdlpack's own export")
    _release(address)
    return 1


def py_to_c_copy(_: int) -> int:
    """Python copies its bytes into C memory (``malloc`` + ``memmove`` + ``free``)."""
    p = _malloc(_nbytes)
    ctypes.memmove(p, _src, _nbytes)
    _free(p)
    return _nbytes
