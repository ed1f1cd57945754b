"""Handing DLPack structs across: JS imports Python's structs, exports its own to Python, calls deleters.

Each function is one ``webdlpack_js`` call; JS errors come back typed
(:func:`~webdlpack.bridge.js.errors.translate`). Without the bridge they raise
:class:`~webdlpack.WebDLPackBufferError` (``UNSUPPORTED``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.errors import ErrorCode, WebDLPackBufferError
from ...core.host import HOST_NAME, IS_PYODIDE
from ...core.native import NATIVE
from .calls import FIX_BRIDGE, JsException, load, why
from .errors import translate

__all__ = [
    "deleter_caller",
    "managed_from_js",
    "export_versioned",
    "export_versioned_functions",
    "import_versioned",
    "is_js_tensor",
]

#: JS functions of the tensor hand-over, looked up once (each attribute access on a JS module makes a new proxy).
_HANDOVER: dict[str, Any] = {}


def _handover(name: str) -> Any:
    """The hand-over function ``webdlpack_js.<name>``, or ``UNSUPPORTED`` where there is no bridge."""
    fn = _HANDOVER.get(name)
    if fn is None:
        module = load()
        if module is None:
            where = "a Pyodide without it" if IS_PYODIDE else HOST_NAME
            text, reason = why("bridge")
            raise WebDLPackBufferError(
                ErrorCode.UNSUPPORTED,
                f"handing tensors to JavaScript needs Pyodide with the webdlpack JS bridge; this is {where}{text}",
                field="webdlpack_js",
                value=None,
                expected=FIX_BRIDGE,
            ) from reason
        fn = _HANDOVER[name] = getattr(module, name)
    return fn


def is_js_tensor(value: Any) -> bool:
    """Whether ``value`` is a JS webdlpack ``Tensor`` (a JsProxy of one)."""
    try:
        return bool(_handover("isTensor")(value))
    except Exception:
        return False


def import_versioned(address: int) -> Any:
    """``webdlpack_js.importVersioned(address)``: JS takes the versioned managed struct at ``address``.

    JS calls the deleter of a struct it refuses (unless it could not read it);
    its error comes back typed (see :func:`translate`).
    """
    fn = _HANDOVER.get("importVersioned") or _handover("importVersioned")  # the lookup inline: a hot path
    try:
        return fn(address)
    except JsException as exc:
        raise translate(exc, gpu=False) from None


def managed_from_js(value: Any, versioned: bool, copy: bool | None) -> int:
    """``webdlpack_js.exportManaged(value, versioned, copy)``: the address of a managed struct JS wrote.

    Python owns the struct; a JS error comes back typed (see :func:`translate`).

    Parameters
    ----------
    value : JsProxy
        A JS webdlpack ``Tensor`` or a TypedArray.
    versioned : bool
        ``DLManagedTensorVersioned`` (True) or a legacy ``DLManagedTensor``.
    copy : bool or None
        As ``from_js``'s ``copy``, already checked.

    Returns
    -------
    int
        The struct's address (unsigned) in the wasm memory.
    """
    if versioned and copy is None:  # from_js's common case: one argument to convert, not three
        return export_versioned(value)
    try:
        fn = _HANDOVER.get("exportManaged") or _handover("exportManaged")  # the lookup inline: a hot path
        return int(fn(value, versioned, copy)) & 0xFFFFFFFF
    except JsException as exc:
        raise translate(exc, gpu=False) from None


def export_versioned(value: Any) -> int:
    """``webdlpack_js.exportVersioned(value)``: ``managed_from_js(value, True, None)`` with one argument to convert.

    The address of a versioned managed struct JS wrote for ``value`` (unsigned); Python owns it. A JS error
    comes back typed (see :func:`translate`).
    """
    fn = _HANDOVER.get("exportVersioned") or _handover("exportVersioned")  # the lookup inline: a hot path
    try:
        return int(fn(value)) & 0xFFFFFFFF
    except JsException as exc:
        raise translate(exc, gpu=False) from None


def export_versioned_functions() -> tuple[Any, int, Any]:
    """What a caller of :func:`export_versioned` from C needs (the native module's ``take``; it translates errors).

    Returns
    -------
    tuple
        The JS function behind :func:`export_versioned`; the wasm-table index of JS's export caller
        (``webdlpack_js.exportCallerIndex``: C calls it with the PyObject* of a JsProxy and gets the address
        without Pyodide's Python -> JS call; 0 where the bridge or this Pyodide has none); and the function
        that raises the error of that caller's last failed export (None with index 0).

    Raises ``UNSUPPORTED`` without the bridge, as :func:`export_versioned` does.
    """
    fn = _HANDOVER.get("exportVersioned") or _handover("exportVersioned")
    index = getattr(load(), "exportCallerIndex", None)
    caller = int(index()) if index is not None else 0
    return fn, caller, (_handover("takeExportError") if caller else None)


def deleter_caller() -> Callable[[int, int], None] | None:
    """A function calling a managed struct's deleter from JS, or None without the bridge.

    With webdlpack's native module (Pyodide's wheel ships it) that is its C ``call_deleter``, bound once
    to JS's deleter caller (``webdlpack_js.deleterCallerIndex``: a table entry that calls the deleter
    inside try/catch): one C -> JS call per release and no Python frame. Otherwise
    ``webdlpack_js.callDeleter`` (a Python -> JS call: in Pyodide a ctypes call goes through libffi's JS
    trampolines and costs about twice as much). Either way a JS error (e.g. an entry that is no
    function, or a deleter that threw) comes back typed (see :func:`translate`).
    """
    module = load()
    fn = getattr(module, "callDeleter", None) if module is not None else None
    if fn is None:
        return None
    index = getattr(module, "deleterCallerIndex", None)
    if NATIVE is not None and index is not None:
        take = module.takeDeleterError

        def raise_deleter_error() -> None:  # the native call_deleter calls this when JS caught an error
            try:
                take()
            except JsException as exc:
                raise translate(exc, gpu=False) from None

        NATIVE.set_js_deleter_caller(int(index()), raise_deleter_error)
        native_call: Callable[[int, int], None] = NATIVE.call_deleter
        return native_call

    def call_deleter(deleter: int, address: int) -> None:  # not the module's call(): no device, hand-over errors
        try:
            fn(deleter, address)
        except JsException as exc:
            raise translate(exc, gpu=False) from None

    return call_deleter
