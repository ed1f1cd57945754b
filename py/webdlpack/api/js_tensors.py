"""Pyodide only: hand tensors to JavaScript and take them back, zero-copy.

Tensors cross as the address of a ``DLManagedTensorVersioned`` in the wasm
heap; the JS half (``js/src/bridge/pyodide.ts``) is registered by
``loadWebDLPack(pyodide)`` as the module ``webdlpack_js``:

``importManaged(address, versioned) -> Tensor`` (JS; ``importVersioned(address)`` for a versioned one)
    JS takes ownership of a struct Python exported and calls its deleter
    exactly once (on ``dispose()``, or when the JS object is collected). If it
    refuses the struct it still calls the deleter, unless the struct could not
    be read at all.
``exportManaged(value, versioned, copy) -> int``
    JS writes a new managed struct into the heap (for bytes outside the heap:
    a copy with IS_COPIED) and Python owns it.

Errors thrown by JS arrive as typed webdlpack errors with the same code.
Importing this module on CPython raises ImportError (there is no JS).
"""

from __future__ import annotations

from typing import Any

from ._errors import (
    ErrorCode,
    WebDLPackBufferError,
    WebDLPackError,
    WebDLPackTypeError,
    WebDLPackValueError,
)
from ._exchange import export_managed
from ._import import adopt
from ._export import release_export
from ._host import IS_PYODIDE
from ._tensor import Tensor

if not IS_PYODIDE:  # pragma: no cover - CPython
    raise ImportError("webdlpack._js_bridge needs Pyodide (the 'js' module)")

import webdlpack_js  # noqa: E402
from pyodide.ffi import JsException  # noqa: E402

__all__ = ["to_js", "from_js", "is_js_tensor"]

# Looked up once: each attribute access on a JS module makes a new proxy.
_import_versioned = webdlpack_js.importVersioned
_export_managed = webdlpack_js.exportManaged

_BUFFER_CODES = {ErrorCode.COPY_REQUIRED, ErrorCode.UNSUPPORTED}
_TYPE_CODES = {ErrorCode.INVALID_ARGUMENT}


def _translate(exc: JsException) -> WebDLPackError:
    """Turn a JS ``WebDLPackError`` into the Python error of the same code."""
    js_error = getattr(exc, "js_error", exc)
    name = getattr(js_error, "code", None)
    code = ErrorCode.__members__.get(str(name)) if name is not None else None
    message = str(getattr(js_error, "message", exc))
    if message.startswith("["):  # the JS message already starts with "[CODE] "
        message = message.split("] ", 1)[-1]
    if code is None:
        return WebDLPackValueError(ErrorCode.INVALID_ARGUMENT, f"JavaScript error: {message}")
    cls: type[WebDLPackError]
    if code in _BUFFER_CODES:
        cls = WebDLPackBufferError
    elif code in _TYPE_CODES:
        cls = WebDLPackTypeError
    else:
        cls = WebDLPackValueError
    return cls(code, f"(from JS) {message}")


def is_js_tensor(value: Any) -> bool:
    """Whether ``value`` is a JS webdlpack ``Tensor`` (a JsProxy of one)."""
    try:
        return bool(webdlpack_js.isTensor(value))
    except Exception:
        return False


def to_js(x: Any) -> Any:
    """Give a tensor (or any DLPack producer) to JavaScript, zero-copy.

    Parameters
    ----------
    x : Tensor or object with ``__dlpack__``
        What to hand over. Its bytes stay where they are (the wasm heap).

    Returns
    -------
    JsProxy
        A JS ``Tensor`` whose ``view`` is a TypedArray over the same bytes.
        JS owns the new managed struct: its ``dispose()`` (or collection) runs
        the deleter once, which releases Python's reference to ``x``.

    Raises
    ------
    WebDLPackError
        JS refused the tensor (typed, with the JS error's code).
    """
    address = x._export(True) if type(x) is Tensor else export_managed(x, versioned=True)
    try:
        return _import_versioned(address)
    except JsException as exc:
        # JS calls the deleter of a struct it refuses; free only what it never touched.
        release_export(address)
        raise _translate(exc) from None


def from_js(js_tensor: Any, *, copy: bool | None = None) -> Tensor:
    """Take a JS tensor (or TypedArray) into Python.

    Parameters
    ----------
    js_tensor : JsProxy
        A JS webdlpack ``Tensor``, or a TypedArray.
    copy : bool, optional
        ``None`` (default): zero-copy when the bytes live in the wasm heap,
        else one copy into the heap (IS_COPIED set). ``True``: always copy.
        ``False``: never copy; bytes outside the heap raise ``BufferError``.

    Returns
    -------
    Tensor
        Owns a managed struct JS wrote; JS's own reference stays valid.

    Raises
    ------
    BufferError
        ``copy=False`` but the bytes are not in the wasm heap.
    TypeError
        ``js_tensor`` is neither a JS Tensor nor a TypedArray.
    """
    try:
        address = _export_managed(js_tensor, True, copy)
    except JsException as exc:
        raise _translate(exc) from None
    return adopt(int(address) & 0xFFFFFFFF, True)
