"""The way from Python to the page's WebGPU context: the ``webdlpack_js`` module.

``loadWebDLPack(pyodide)`` (``js/src/bridge/pyodide.ts``) registers that module;
its GPU functions live in ``js/src/bridge/pyodide-gpu.ts``. On CPython, or in a
Pyodide where the bridge was not loaded, every function here raises
:class:`~webdlpack.WebDLPackDeviceError` (code ``NO_WEBGPU``) naming the device.

Readbacks are JS Promises. :func:`wait` blocks on one through JSPI
(``pyodide.ffi.run_sync``), which works only when Python was entered
asynchronously (``runPythonAsync``, ``callPromising``, an async function);
otherwise it raises an error naming the two ways out.
"""

from __future__ import annotations

from typing import Any, Callable

from ._errors import ErrorCode, WebDLPackDeviceError
from ._host import HOST_NAME, IS_PYODIDE

__all__ = ["js_module", "call", "can_wait", "require_wait", "wait", "wait_async", "translate"]

_FIX = "call it from code entered with pyodide.runPythonAsync (or callPromising), or use await webdlpack.to_cpu_async(x)"


def js_module(device: Any) -> Any:
    """The ``webdlpack_js`` module, or a ``NO_WEBGPU`` error naming ``device``.

    Parameters
    ----------
    device : Device or str
        The device the caller wants to reach (for the message).
    """
    if not IS_PYODIDE:
        raise WebDLPackDeviceError(ErrorCode.NO_WEBGPU, f"{device} is not available on {HOST_NAME}: WebGPU tensors "
                                   "need Pyodide in a browser page with the webdlpack JS bridge",
                                   field="device", value=str(device), expected="'cpu' on this host")
    try:
        import webdlpack_js
    except ImportError:
        raise WebDLPackDeviceError(ErrorCode.NO_WEBGPU, f"{device} is not reachable: the webdlpack JS bridge is not "
                                   "loaded in this Pyodide", field="device", value=str(device),
                                   expected="a Pyodide set up with webdlpack's loadWebDLPack(pyodide)") from None
    return webdlpack_js


def translate(exc: BaseException) -> WebDLPackDeviceError:
    """Turn a JS error (a ``JsException`` carrying a JS ``WebDLPackError``) into a typed Python error.

    The JS error's code, field, value and expected travel along; an error
    without a webdlpack code becomes ``GPU_ERROR``.
    """
    js_error = getattr(exc, "js_error", exc)
    name = getattr(js_error, "code", None)
    code = ErrorCode.__members__.get(str(name), ErrorCode.GPU_ERROR) if name is not None else ErrorCode.GPU_ERROR
    message = str(getattr(js_error, "message", exc))
    if message.startswith("["):  # the JS message already starts with "[CODE] "
        message = message.split("] ", 1)[-1]
    kwargs: dict[str, Any] = {}
    field = getattr(js_error, "field", None)
    if isinstance(field, str):
        kwargs["field"] = field
    expected = getattr(js_error, "expected", None)
    if isinstance(expected, str):
        kwargs["expected"] = expected
    value = getattr(js_error, "value", None)
    if isinstance(value, (int, float, str, bool)):
        kwargs["value"] = value
    return WebDLPackDeviceError(code, f"(from JS) {message}", **kwargs)


def call(device: Any, fn: Callable[[Any], Callable[..., Any]], *args: Any) -> Any:
    """Call ``fn(webdlpack_js)(*args)``; a JS error comes back typed (see :func:`translate`)."""
    module = js_module(device)
    from pyodide.ffi import JsException

    try:
        return fn(module)(*args)
    except JsException as exc:
        raise translate(exc) from None


def can_wait() -> bool:
    """True when this Python call stack may block on a Promise (JSPI, entered asynchronously)."""
    if not IS_PYODIDE:
        return False
    try:
        from pyodide.ffi import can_run_sync
    except ImportError:  # pragma: no cover - a Pyodide without JSPI support in its API
        return False
    try:
        return bool(can_run_sync())
    except Exception:  # pragma: no cover
        return False


def require_wait(what: str, device: Any) -> None:
    """Raise the clear "cannot wait here" error unless :func:`can_wait`.

    Call it *before* starting GPU work, so nothing is left half done.
    """
    js_module(device)
    if not can_wait():
        raise WebDLPackDeviceError(ErrorCode.UNSUPPORTED,
                                   f"{what} waits for the GPU (WebGPU reads back asynchronously), and this Python code "
                                   "cannot wait: it was not entered asynchronously, or JSPI is off",
                                   field="device", value=str(device), expected=_FIX)


def wait(promise: Any) -> Any:
    """Block on a JS Promise through ``pyodide.ffi.run_sync``; JS errors come back typed.

    Check :func:`require_wait` first.
    """
    from pyodide.ffi import JsException, run_sync

    try:
        return run_sync(promise)
    except JsException as exc:
        raise translate(exc) from None


async def wait_async(promise: Any) -> Any:
    """``await`` a JS Promise; JS errors come back typed."""
    from pyodide.ffi import JsException

    try:
        return await promise
    except JsException as exc:
        raise translate(exc) from None
