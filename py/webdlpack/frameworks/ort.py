"""ONNX Runtime Web from Python, on the page's shared WebGPU device.

::

    from pyscript.js_modules import ort          # or: ort = await run_js("import('/ort.webgpu.min.mjs')")
    session = await webdlpack.frameworks.ort.create_session(ort, model_bytes)
    outputs = await webdlpack.frameworks.ort.run(session, {"X": x})   # x: a webdlpack Tensor on webgpu:0
    y = outputs["Y"]                                                 # a webdlpack Tensor over ORT's GPU buffer

``ort`` must be the WebGPU build (``onnxruntime-web/webgpu``); sessions run on
device 0 of webdlpack's context, with outputs left on the GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api.js_tensors import from_js, to_js
from ..bridge.boot import js_half_function
from ..bridge.js import wait_async
from ..core.errors import ErrorCode, WebDLPackTypeError

__all__ = ["session_options", "create_session", "run"]


def session_options(ort: Any, **extra: Any) -> Any:
    """ORT session options (a JS object) that run on webdlpack's device, outputs on the GPU.

    Parameters
    ----------
    ort : JsProxy
        The ``onnxruntime-web/webgpu`` namespace.
    **extra
        Further options, e.g. ``preferredOutputLocation="cpu"``; JS values as Pyodide converts them.
    """
    return js_half_function("ortSessionOptions")(ort, _options(extra))


async def create_session(ort: Any, model: Any, **extra: Any) -> Any:
    """``ort.InferenceSession.create(model, options)`` on webdlpack's device; :func:`run` knows its ``ort``.

    Parameters
    ----------
    ort : JsProxy
        The ``onnxruntime-web/webgpu`` namespace.
    model : bytes, str or JsProxy
        The model's bytes (``bytes`` become a JS ``Uint8Array``) or URL.
    **extra
        Further session options (see :func:`session_options`).

    Returns
    -------
    JsProxy
        The ``InferenceSession``.
    """
    create = js_half_function("ortCreateSession")
    return await wait_async(create(ort, _model(model), _options(extra)))


async def run(session: Any, feeds: Mapping[str, Any], *, ort: Any = None) -> dict[str, Any]:
    """Run ``session`` on webdlpack tensors; the outputs come back as webdlpack tensors, without a copy.

    Parameters
    ----------
    session : JsProxy
        An ORT session on webdlpack's device: from :func:`create_session`, or one made with
        :func:`session_options` (then pass ``ort``).
    feeds : mapping of str to Tensor
        Input name -> tensor (any DLPack producer). A WebGPU tensor is read by ORT in place.
    ort : JsProxy, optional
        The ``ort`` namespace, for a session :func:`create_session` did not make.

    Returns
    -------
    dict of str to Tensor
        Output name -> a ``webdlpack.Tensor`` over ORT's output (a WebGPU tensor over ORT's own buffer, kept
        from ORT's reuse until released: ``dispose()`` it, or use ``webdlpack.scope()``).
    """
    if not isinstance(feeds, Mapping):
        raise WebDLPackTypeError(
            ErrorCode.INVALID_ARGUMENT,
            f"feeds must map input names to tensors, not {type(feeds).__name__}",
            field="feeds",
            value=type(feeds).__name__,
            expected="a dict like {'X': x}",
        )
    names = [str(name) for name in feeds]
    handed = [to_js(feeds[name]) for name in names]
    try:
        pairs = await wait_async(js_half_function("ortRun")(session, names, handed, ort))
    finally:
        for jt in handed:
            jt.dispose()
    return _adopt_all(pairs)


def _adopt_all(pairs: Any) -> dict[str, Any]:
    """``[[name, JS Tensor], ...]`` -> ``{name: Tensor}``; each JS tensor is released once Python holds it."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, jt = str(pair[0]), pair[1]
        try:
            out[name] = from_js(jt)
        finally:
            jt.dispose()
    return out


def _model(model: Any) -> Any:
    """Model bytes as a JS Uint8Array (through a memoryview, which Pyodide converts), else as given."""
    return memoryview(model) if isinstance(model, (bytes, bytearray)) else model


def _options(extra: dict[str, Any]) -> Any:
    """Keyword options as a JS object, or None."""
    return js_half_function("plainObject")(list(extra), list(extra.values())) if extra else None
