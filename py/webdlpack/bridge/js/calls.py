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

from ...core.errors import ErrorCode, WebDLPackDeviceError, WebDLPackError
from ...core.host import HOST_NAME, IS_PYODIDE
from .errors import translate

__all__ = [
    "FIX_BRIDGE",
    "JsException",
    "bridge_loaded",
    "call",
    "ffi",
    "import_js_module",
    "is_js_proxy",
    "js_module",
    "load",
    "note_unavailable",
    "pyodide_api",
    "why",
]


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


#: Why the JS half ("bridge") or the context's device 0 ("device") is missing, as bridge/boot.py found it
#: when it brought the JS half up itself: the errors below then say why, not only what is missing.
_WHY: dict[str, WebDLPackError] = {}

#: What to do about a missing bridge / device, for the errors' ``expected``.
FIX_BRIDGE = "await webdlpack.init(), or a page that called webdlpack's loadWebDLPack(pyodide)"
_FIX_DEVICE = "a browser with WebGPU (navigator.gpu) in this thread, then await webdlpack.init()"


def note_unavailable(what: str, error: WebDLPackError | None) -> None:
    """Record why ``what`` (``"bridge"`` or ``"device"``) cannot be used, or clear it with None.

    Parameters
    ----------
    what : str
        ``"bridge"``: ``webdlpack_js`` could not be registered; ``"device"``: the device could not be set up.
    error : WebDLPackError or None
        The reason, raised (chained) by every call that needs ``what``; None once it works.
    """
    if error is None:
        _WHY.pop(what, None)
    else:
        _WHY[what] = error


def why(what: str) -> tuple[str, WebDLPackError | None]:
    """`` (why: ...)`` for a message and the recorded reason (to chain), or ``("", None)`` when none was recorded."""
    reason = _WHY.get(what)
    # The reason's own message only: its field / value / expected belong to it, not to the error that cites it.
    return (f" (why: {str(reason).split('; field ')[0]})", reason) if reason is not None else ("", None)


def import_js_module(url: str) -> Any:
    """A Promise of the ES module at ``url`` (JS ``import(url)`` in this realm; bridge/boot.py loads the JS half)."""
    from pyodide.code import run_js

    return run_js("(url) => import(url)")(url)


def pyodide_api() -> Any:
    """Pyodide's JS API object (what ``loadPyodide()`` returned), as the JS half's ``attachPython`` takes it."""
    import pyodide_js

    return pyodide_js


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
        what, missing, expected = "bridge", "the webdlpack JS bridge is not loaded in this Pyodide", FIX_BRIDGE
    elif "device" in _WHY:
        what, missing, expected = "device", "webdlpack could not set up the page's WebGPU device", _FIX_DEVICE
    else:
        return module
    text, reason = why(what)
    raise WebDLPackDeviceError(
        ErrorCode.NO_WEBGPU,
        f"{device} is not reachable: {missing}{text}",
        field="device",
        value=str(device),
        expected=expected,
    ) from reason


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
