"""Waiting for JS Promises (GPU readbacks) from Python.

:func:`wait` blocks on one through JSPI (``pyodide.ffi.run_sync``), which works
only when Python was entered asynchronously (``runPythonAsync``,
``callPromising``, an async function); :func:`require_wait` raises an error
naming the two ways out otherwise. :func:`wait_async` always works.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import ErrorCode, WebDLPackDeviceError
from ...core.host import IS_PYODIDE
from . import calls
from .calls import JsException, js_module
from .errors import translate

__all__ = ["can_wait", "require_wait", "wait", "wait_async"]

_FIX = (
    "call it from code entered with pyodide.runPythonAsync (or callPromising), or use await webdlpack.to_cpu_async(x)"
)


def can_wait() -> bool:
    """True when this Python call stack may block on a Promise (JSPI, entered asynchronously)."""
    if not IS_PYODIDE:
        return False
    can_run_sync = getattr(calls.ffi, "can_run_sync", None)
    if can_run_sync is None:  # pragma: no cover - a Pyodide without JSPI support in its API
        return False
    try:
        return bool(can_run_sync())
    except Exception:  # pragma: no cover
        return False


def require_wait(what: str, device: Any) -> None:
    """Raise the clear "cannot wait here" error unless :func:`can_wait`.

    Call it *before* starting GPU work, so nothing is left half done.

    Parameters
    ----------
    what : str
        What would wait, for the message (e.g. "reading WebGPU data back synchronously").
    device : Device or str
        The device it would wait on.

    Raises
    ------
    WebDLPackDeviceError
        ``NO_WEBGPU`` without the bridge; ``UNSUPPORTED`` (field ``device``)
        where this call stack cannot block.
    """
    js_module(device)
    if not can_wait():
        raise WebDLPackDeviceError(
            ErrorCode.UNSUPPORTED,
            f"{what} waits for the GPU (WebGPU reads back asynchronously), and this Python code "
            "cannot wait: it was not entered asynchronously, or JSPI is off",
            field="device",
            value=str(device),
            expected=_FIX,
        )


def wait(promise: Any) -> Any:
    """Block on a JS Promise through ``pyodide.ffi.run_sync``; JS errors come back typed.

    Check :func:`require_wait` first.
    """
    try:
        return calls.ffi.run_sync(promise)
    except JsException as exc:
        raise translate(exc, gpu=True) from None


async def wait_async(promise: Any) -> Any:
    """``await`` a JS Promise; JS errors come back typed."""
    try:
        return await promise
    except JsException as exc:
        raise translate(exc, gpu=True) from None
