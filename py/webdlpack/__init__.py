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
Tensor
    Exports itself with ``__dlpack__`` (``numpy.from_dlpack(t)`` works).
empty / zeros / from_buffer
    Make tensors (``device="webgpu:0"`` for GPU ones; from_buffer: CPU).
layout()
    Sizes and offsets of the DLPack structs on this host.
"""

from ._abi import DLPACK_VERSION, DLDataTypeCode, DLDeviceType, layout
from ._create import empty, from_buffer, zeros
from ._device import Device, device
from ._dtype import DType, dtype
from ._errors import (
    ErrorCode,
    WebDLPackAttributeError,
    WebDLPackBufferError,
    WebDLPackDeviceError,
    WebDLPackError,
    WebDLPackMemoryError,
    WebDLPackTypeError,
    WebDLPackValueError,
)
from ._host import HOST_NAME, IS_PYODIDE
from ._import import from_capsule, from_dlpack
from ._scope import Scope, keep, scope
from ._tensor import Tensor, TensorFlags
from ._transfer import asarray, to_cpu_async

if IS_PYODIDE:
    try:
        from ._js_bridge import from_js, is_js_tensor, to_js
    except ImportError:  # pragma: no cover - the JS side (loadWebDLPack) was not registered
        pass

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
    "keep",
    "layout",
    "scope",
    "to_cpu_async",
    "zeros",
]

if "to_js" in globals():
    __all__ += ["from_js", "is_js_tensor", "to_js"]
