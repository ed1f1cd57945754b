"""Loading the ``webdlpack_js`` module and calling it: the one module of webdlpack that imports JavaScript.

``loadWebDLPack(pyodide)`` (``js/src/bridge/pyodide.ts``) registers ``webdlpack_js``;
its tensor hand-over functions live there and its GPU functions in
``js/src/bridge/pyodide-gpu.ts``. Only this module imports ``webdlpack_js`` or
``pyodide.ffi``; the rest of :mod:`webdlpack.bridge.js` uses what it exposes.

On CPython, or in a Pyodide where the bridge was not loaded, :func:`js_module`
and :func:`call` raise :class:`~webdlpack.WebDLPackDeviceError` (code
``NO_WEBGPU``) naming the device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.errors import ErrorCode, WebDLPackDeviceError
from ...core.host import HOST_NAME, IS_PYODIDE
from .errors import translate

__all__ = ["JsException", "bridge_loaded", "call", "ffi", "is_js_proxy", "js_module", "load"]


class _NoJsException(Exception):
    """Stands in for ``pyodide.ffi.JsException`` on CPython, where no JS error can arrive."""


class _NoJsProxy:
    """Stands in for ``pyodide.ffi.JsProxy`` on CPython, where no JS object exists."""


#: What Pyodide raises for a JS error (a stand-in that never arrives on CPython).
JsException: type[BaseException] = _NoJsException
_JsProxy: type = _NoJsProxy
#: ``pyodide.ffi``, or None on CPython.
ffi: Any = None
if IS_PYODIDE:  # pragma: no cover - Pyodide only
    import pyodide.ffi

    ffi = pyodide.ffi
    JsException = ffi.JsException
    _JsProxy = ffi.JsProxy


def load() -> Any:
    """``webdlpack_js``, or None when this is not Pyodide or the bridge was not registered (yet)."""
    if not IS_PYODIDE:
        return None
    try:
        import webdlpack_js  # registered at run time by loadWebDLPack(pyodide), so looked up when needed
    except ImportError:
        return None
    return webdlpack_js


def bridge_loaded() -> bool:
    """True in a Pyodide where ``loadWebDLPack(pyodide)`` registered ``webdlpack_js``."""
    return load() is not None


def js_module(device: Any) -> Any:
    """The ``webdlpack_js`` module, or a ``NO_WEBGPU`` error naming ``device``.

    Parameters
    ----------
    device : Device or str
        The device the caller wants to reach (for the message).
    """
    if not IS_PYODIDE:
        raise WebDLPackDeviceError(
            ErrorCode.NO_WEBGPU,
            f"{device} is not available on {HOST_NAME}: WebGPU tensors "
            "need Pyodide in a browser page with the webdlpack JS bridge",
            field="device",
            value=str(device),
            expected="'cpu' on this host",
        )
    module = load()
    if module is None:
        raise WebDLPackDeviceError(
            ErrorCode.NO_WEBGPU,
            f"{device} is not reachable: the webdlpack JS bridge is not loaded in this Pyodide",
            field="device",
            value=str(device),
            expected="a Pyodide set up with webdlpack's loadWebDLPack(pyodide)",
        )
    return module


def call(device: Any, fn: Callable[[Any], Callable[..., Any]], *args: Any) -> Any:
    """Call ``fn(webdlpack_js)(*args)`` for GPU work on ``device``; a JS error comes back typed (see :func:`translate`).

    Parameters
    ----------
    device : Device or str
        The device the work is for (named by ``NO_WEBGPU`` where there is no bridge).
    fn : callable
        Picks the JS function from the module, e.g. ``lambda js: js.gpuFree``.
    *args
        Its arguments.

    Returns
    -------
    object
        What the JS function returned (a JsProxy for objects and Promises).
    """
    module = js_module(device)
    try:
        return fn(module)(*args)
    except JsException as exc:
        raise translate(exc, gpu=True) from None


def is_js_proxy(value: Any) -> bool:
    """Whether ``value`` is a JS object seen from Python (a ``pyodide.ffi.JsProxy``); False on CPython."""
    return isinstance(value, _JsProxy)
