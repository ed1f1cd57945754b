"""webdlpack's JS half brought up from Python, for pages whose only code is Python.

A page that writes JS calls ``loadWebDLPack(pyodide)``, which registers the
``webdlpack_js`` module before the package is imported. PyScript pages and
JupyterLite notebooks install the wheel with micropip / ``%pip`` and write no
JS, so the package carries its JS half itself: ``_js/webdlpack.mjs`` (one ES
module, ``js/src/from-python/entry.ts``). Where ``webdlpack_js`` is missing, this
module imports that file through Pyodide's JS access (bridge/js/, the one
crossing: ``import()`` of a ``data:`` URL of its bytes), calls its ``attachPython`` with
Pyodide's API object (``import pyodide_js``) — which joins the realm's webdlpack
context (the global record another copy made) or makes it, and registers
``webdlpack_js`` — and sets up the context's device 0. The same happens in a
Worker (JupyterLite's kernel, PyScript's ``worker``): everything stays in the
realm this Pyodide runs in.

``import webdlpack`` does it at once where Python may wait on a Promise (JSPI,
code entered asynchronously: PyScript scripts and Jupyter cells are);
``await webdlpack.init()`` does it anywhere. What could not be done (no
WebGPU, a file missing, CPython) is kept, and every function that needs it
raises its typed error saying why (:func:`webdlpack.bridge.js.calls.note_unavailable`).
"""

from __future__ import annotations

import base64
from importlib import resources
from typing import Any

from ..core.errors import ErrorCode, WebDLPackDeviceError, WebDLPackError
from ..core.host import HOST_NAME, IS_PYODIDE
from .js import (
    bridge_loaded,
    can_wait,
    import_js_module,
    js_module,
    note_unavailable,
    pyodide_api,
    translate,
    wait,
    wait_async,
)

__all__ = ["JS_HALF_FILE", "js_half_source", "js_half_function", "bring_up", "init", "status"]

#: The JS half inside the package (package data, built by ``make``).
JS_HALF_FILE = "_js/webdlpack.mjs"

#: What the last bring-up found (``status()``): who registered ``webdlpack_js``, the context, the device.
_STATUS: dict[str, Any] = {"bridge": None, "joined_context": None, "realm": None, "device": None}

#: The imported JS half (a JsProxy of the ES module), once imported.
_MODULE: list[Any] = []


def js_half_source() -> bytes | None:
    """The bytes of the JS half shipped in the package, or None when this install has none."""
    try:
        return (resources.files("webdlpack") / JS_HALF_FILE).read_bytes()
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return None


def _unavailable(message: str, expected: str, cause: BaseException | None = None) -> WebDLPackDeviceError:
    error = WebDLPackDeviceError(ErrorCode.NO_WEBGPU, message, field="webdlpack_js", value=HOST_NAME, expected=expected)
    error.__cause__ = cause
    return error


def _import_promise() -> Any:
    """A Promise of the JS half's module namespace (or a typed error saying why it cannot be had)."""
    source = js_half_source()
    if source is None:
        raise _unavailable(
            f"this webdlpack install has no JS half ({JS_HALF_FILE} is missing from the package)",
            "a webdlpack wheel built by `make` (it ships the file), or a page that calls loadWebDLPack(pyodide)",
        )
    return import_js_module("data:text/javascript;base64," + base64.b64encode(source).decode("ascii"))


def _attach(module: Any) -> None:
    report = module.attachPython(pyodide_api())
    _MODULE[:] = [module]
    _STATUS.update(bridge="webdlpack", joined_context=bool(report.joinedContext), realm=str(report.realm))


def _device_done(description: Any) -> None:
    _STATUS["device"] = str(description)
    note_unavailable("device", None)


def _device_failed(exc: BaseException) -> None:
    error = translate(exc, gpu=True)
    _STATUS["device"] = None
    note_unavailable("device", error)


def _setup_device_promise() -> Any:
    """``setupDevice()`` of the JS half we imported, else ``ctx.setup()`` of the page's bridge."""
    note_unavailable("device", None)  # tried again: a failure records its reason anew
    if _MODULE:
        return _MODULE[0].setupDevice()
    return js_module("webgpu:0").context().setup()


def bring_up() -> None:
    """At ``import webdlpack``: register the JS half and set up device 0 where nobody did, if Python may wait here.

    Never raises: what fails is recorded and raised, with its reason, by the functions that need it.
    """
    if not IS_PYODIDE or bridge_loaded():
        if bridge_loaded() and _STATUS["bridge"] is None:
            _STATUS["bridge"] = "page"
        return
    if not can_wait():
        note_unavailable(
            "bridge",
            _unavailable(
                "`import webdlpack` could not load its JS half here: this code cannot wait for it "
                "(it was not entered asynchronously, or JSPI is off)",
                "await webdlpack.init() before using JS or WebGPU",
            ),
        )
        return
    try:
        _attach(wait(_import_promise()))
    except WebDLPackError as exc:
        note_unavailable("bridge", exc)
        return
    except Exception as exc:  # the JS half failed to evaluate or attach: kept as the reason
        note_unavailable("bridge", _unavailable(f"webdlpack's JS half failed to load: {exc}", "see the cause", exc))
        return
    note_unavailable("bridge", None)
    try:
        _device_done(wait(_setup_device_promise()))
    except WebDLPackError as exc:
        note_unavailable("device", exc)


async def init() -> dict[str, Any]:
    """Bring up webdlpack's JS half and the page's WebGPU device from Python; works in any Pyodide code.

    ``import webdlpack`` already does this where it can wait (PyScript scripts, Jupyter cells, code run with
    ``runPythonAsync``); elsewhere, ``await webdlpack.init()`` first. Safe to call again (a device lost or
    not there the first time is tried again).

    Returns
    -------
    dict
        ``{"bridge": "page" | "webdlpack", "joined_context": bool | None, "realm": "window" | "worker" | ...,
        "device": adapter description}``: who registered ``webdlpack_js`` ("page": ``loadWebDLPack``;
        "webdlpack": this package, from its own JS half), whether it joined a context another copy made, and
        the device 0 it set up.

    Raises
    ------
    WebDLPackDeviceError
        ``NO_WEBGPU`` on CPython, where the JS half is missing or failed, or where this realm has no WebGPU
        (then the CPU hand-over ``to_js`` / ``from_js`` still works); ``NO_ADAPTER`` and the like from the
        device set-up.
    """
    if not IS_PYODIDE:
        raise _unavailable(
            f"webdlpack's JS half runs only in Pyodide; this is {HOST_NAME}", "Pyodide in a browser page or Worker"
        )
    if not bridge_loaded():
        try:
            _attach(await wait_async(_import_promise()))
        except WebDLPackError as exc:
            note_unavailable("bridge", exc)
            raise
        except Exception as exc:  # the JS half failed to evaluate or attach
            error = _unavailable(f"webdlpack's JS half failed to load: {exc}", "see the cause", exc)
            note_unavailable("bridge", error)
            raise error from exc
        note_unavailable("bridge", None)
    elif _STATUS["bridge"] is None:
        _STATUS["bridge"] = "page"
    try:
        _device_done(await _setup_device_promise())
    except Exception as exc:
        _device_failed(exc)
        raise translate(exc, gpu=True) from None
    return status()


def status() -> dict[str, Any]:
    """What the bring-up found so far (see :func:`init`); ``"device"`` is None until device 0 is set up."""
    return dict(_STATUS)


def js_half_function(name: str) -> Any:
    """The framework function ``webdlpack_js.<name>`` (js/src/from-python/frameworks.ts), or a typed error saying why.

    Raises
    ------
    WebDLPackDeviceError
        ``NO_WEBGPU`` (with the reason) where the JS half or the device is missing; ``UNSUPPORTED`` where the
        page's own ``loadWebDLPack`` registered ``webdlpack_js``, which has no framework functions.
    """
    fn = getattr(js_module("webgpu:0"), name, None)
    if fn is None:
        raise WebDLPackDeviceError(
            ErrorCode.UNSUPPORTED,
            f"webdlpack.frameworks needs the JS half the Python package loads itself; this Pyodide's webdlpack_js was "
            f"registered by the page's loadWebDLPack, which has no {name}",
            field="webdlpack_js",
            value=name,
            expected="a page that leaves webdlpack's JS to the Python package, or JS code using webdlpack/adapters",
        )
    return fn
