"""webdlpack: DLPack tensor exchange for Python in the browser (Pyodide) and on CPython.

The same ctypes code runs on both hosts: on CPython "wasm memory" is the
process memory, in Pyodide it is the wasm linear memory JavaScript sees.

Main entry points
-----------------
from_dlpack(x, *, device=None, copy=None)
    Import any ``__dlpack__`` producer (zero-copy), or copy it to another
    device (``"webgpu:0"`` uploads, ``"cpu"`` reads back).
asarray(obj, *, device=None, copy=None)
    The same for buffers (``array.array``...) too.
to_cpu_async(x)
    ``await`` a WebGPU tensor's readback (works from any Python code).
to_js(x) / from_js(js_tensor) / is_js_tensor(value)
    Hand tensors to JavaScript and back, zero-copy (Pyodide with the JS bridge;
    elsewhere they raise ``WebDLPackBufferError`` (``UNSUPPORTED``) saying why).
init()
    ``await webdlpack.init()``: bring up webdlpack's JS half and the page's WebGPU
    device where no page did (``import webdlpack`` does it itself where it can wait).
frameworks.ort / frameworks.tfjs
    ONNX Runtime Web and TensorFlow.js on webdlpack tensors, from Python.
Tensor
    Exports itself with ``__dlpack__`` (``numpy.from_dlpack(t)`` works).
empty / zeros / from_buffer
    Make tensors (``device="webgpu:0"`` for GPU ones; from_buffer: CPU).
layout()
    Sizes and offsets of the DLPack structs on this host.
info()
    What runs: CPython or Pyodide (which version), the native or pure-Python exchange, and why.

Every public name exists on every host, whatever was loaded first.

The package is layered (see ``README.md`` beside this file): ``core`` →
``bridge`` → ``exchange`` → ``tensor`` → ``api`` → ``frameworks``; each module imports only
its own floor or those below.
"""

from . import frameworks
from .api.convert import asarray, to_cpu_async
from .api.create import empty, from_buffer, zeros
from .api.from_dlpack import from_capsule, from_dlpack
from .api.info import info
from .api.js_tensors import from_js, is_js_tensor, to_js
from .bridge.boot import bring_up as _bring_up
from .bridge.boot import init
from .bridge.boot import status as js_half_status
from .core.abi import DLPACK_VERSION, DLDataTypeCode, DLDeviceType, layout
from .core.device import Device, device
from .core.dtype import DType, dtype
from .core.errors import (
    ErrorCode,
    WebDLPackAttributeError,
    WebDLPackBufferError,
    WebDLPackDeviceError,
    WebDLPackError,
    WebDLPackMemoryError,
    WebDLPackTypeError,
    WebDLPackValueError,
)
from .core.host import HOST_NAME, IS_PYODIDE
from .tensor.scope import Scope, keep, scope
from .tensor.tensor import Tensor, TensorFlags

# In a Pyodide no page set up with loadWebDLPack: load the JS half shipped in this package, register it, set up
# the WebGPU device (bridge/boot.py), where this import may wait; else `await webdlpack.init()` does it.
_bring_up()

__version__ = "0.1.0"

__all__ = [
    "DLPACK_VERSION",
    "DLDataTypeCode",
    "DLDeviceType",
    "DType",
    "Device",
    "ErrorCode",
    "Scope",
    "HOST_NAME",
    "IS_PYODIDE",
    "Tensor",
    "TensorFlags",
    "WebDLPackAttributeError",
    "WebDLPackBufferError",
    "WebDLPackDeviceError",
    "WebDLPackError",
    "WebDLPackMemoryError",
    "WebDLPackTypeError",
    "WebDLPackValueError",
    "asarray",
    "device",
    "dtype",
    "empty",
    "from_buffer",
    "from_capsule",
    "from_dlpack",
    "from_js",
    "frameworks",
    "info",
    "init",
    "is_js_tensor",
    "js_half_status",
    "keep",
    "layout",
    "scope",
    "to_cpu_async",
    "to_js",
    "zeros",
]
