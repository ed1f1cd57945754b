"""Pyodide only: hand tensors to JavaScript and take them back, by managed-struct address.

Assumed JS side (to be provided by the lead's bridge, registered with
``pyodide.registerJsModule("webdlpack_js", ...)``):

``importManaged(address: number, versioned: boolean) -> JS Tensor``
    Takes ownership of the managed struct at ``address`` in the wasm heap (it
    will call the struct's deleter exactly once). If it throws, it took nothing.
``exportManaged(jsTensor) -> number``
    Writes a new managed ``DLManagedTensorVersioned`` into the wasm heap and
    returns its address; the Python side then owns it and calls its deleter.

Importing this module on CPython raises ImportError (there is no ``js``).
"""

from __future__ import annotations

from typing import Any

from ._errors import ErrorCode, WebDLPackTypeError
from ._exchange import export_managed, import_managed
from ._export import _on_delete
from ._host import IS_PYODIDE
from ._tensor import Tensor

if not IS_PYODIDE:  # pragma: no cover - CPython
    raise ImportError("webdlpack._js_bridge needs Pyodide (the 'js' module)")

import webdlpack_js  # type: ignore[import-not-found]  # noqa: E402

__all__ = ["to_js", "from_js"]


def to_js(x: Any) -> Any:
    """Give a tensor (or any DLPack producer) to JavaScript, zero-copy.

    Parameters
    ----------
    x : Tensor or object with ``__dlpack__``

    Returns
    -------
    JsProxy
        Whatever ``webdlpack_js.importManaged`` returns (a JS Tensor).
        JavaScript owns the new managed struct and calls its deleter once.
    """
    address = export_managed(x, versioned=True)
    try:
        return webdlpack_js.importManaged(address, True)
    except BaseException:
        _on_delete(address)  # JS took nothing: free our export here
        raise


def from_js(js_tensor: Any) -> Tensor:
    """Take a JS tensor into Python, zero-copy (a new managed struct written by JS).

    Raises
    ------
    TypeError
        ``exportManaged`` did not return an address.
    ValueError, BufferError
        The struct JS wrote is invalid (its deleter has been called).
    """
    address = webdlpack_js.exportManaged(js_tensor)
    if not isinstance(address, (int, float)) or address != int(address) or address == 0:
        raise WebDLPackTypeError(ErrorCode.INVALID_POINTER, "exportManaged did not return an address",
                                 field="address", value=address, expected="a non-zero wasm heap address")
    return import_managed(int(address) & 0xFFFFFFFF, versioned=True)
