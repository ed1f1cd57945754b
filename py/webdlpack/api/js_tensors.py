"""Pyodide only: hand tensors to JavaScript and take them back, zero-copy.

Tensors cross as the address of a ``DLManagedTensorVersioned`` in the wasm
heap; the JS half (``js/src/bridge/pyodide.ts``) is registered by
``loadWebDLPack(pyodide)`` as the module ``webdlpack_js``, reached only
through :mod:`webdlpack.bridge.js`:

``importManaged(address, versioned) -> Tensor`` (JS; ``importVersioned(address)`` for a versioned one)
    JS takes ownership of a struct Python exported and calls its deleter
    exactly once (on ``dispose()``, or when the JS object is collected). If it
    refuses the struct it still calls the deleter, unless the struct could not
    be read at all.
``exportManaged(value, versioned, copy) -> int``
    JS writes a new managed struct into the heap (for bytes outside the heap:
    a copy with IS_COPIED) and Python owns it.

Errors thrown by JS arrive as typed webdlpack errors with the same code.
``webdlpack`` exports these functions everywhere; without the bridge (CPython,
or a Pyodide before ``loadWebDLPack``) ``to_js`` / ``from_js`` raise
``WebDLPackBufferError`` (``UNSUPPORTED``) saying so, and ``is_js_tensor`` is False.
"""

from __future__ import annotations

from typing import Any

from ..bridge import js
from ..bridge.js import is_js_tensor
from ..core.errors import WebDLPackError
from ..core.native import NATIVE
from ..exchange.export import release_export
from ..tensor.moves import check_copy
from ..tensor.tensor import Tensor
from .from_dlpack import adopt, adopt_seen
from .managed import export_managed

__all__ = ["to_js", "from_js", "is_js_tensor"]


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
    exporter = x._exporter if type(x) is Tensor else None  # bound after a first export (see export_managed)
    address = exporter() if exporter is not None else export_managed(x, versioned=True)
    try:
        return js.import_versioned(address)
    except WebDLPackError:
        # JS calls the deleter of a struct it refuses; free only what it never touched.
        release_export(address)
        raise


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
        ``js_tensor`` is neither a JS Tensor nor a TypedArray; or ``copy`` is
        not None, True or False (``INVALID_ARGUMENT``, field ``copy``, as
        ``from_dlpack``), checked before JS is called.
    """
    if copy is None:
        try:
            return _take(js_tensor)  # type: ignore[no-any-return]
        except js.JsException as exc:  # JS refused the value (nothing was taken)
            raise js.translate(exc, gpu=False) from None
    return adopt(js.managed_from_js(js_tensor, True, check_copy(copy)), True)


def _take_in_python(js_tensor: Any) -> Tensor:
    """from_js's common case without the native module: JS's export, then :func:`adopt`."""
    return adopt(js.export_versioned(js_tensor), True)


#: from_js's common case: the native module's take (py/native/adopt.c: JS's export and, when adopt_view's cache
#: holds the block unchanged, the Tensor, in one C call) where there is a cache (Pyodide), else in Python.
_take: Any = _take_in_python
if NATIVE is not None and adopt_seen is not None:
    NATIVE.bind_take(js.export_versioned_functions, adopt)
    _take = NATIVE.take

    def _translate(exc: Any) -> BaseException:
        """The typed webdlpack error for JS's error ``exc`` (from_js's ``except`` clause, for the C from_js)."""
        return js.translate(exc, gpu=False)

    # from_js in C (py/native/functions.c), with this docstring and signature: copy=None (the common case) goes
    # to take with no Python frame before it; any other copy to the Python function above.
    from_js = NATIVE.from_js_function(from_js, js.JsException, _translate, __name__)
