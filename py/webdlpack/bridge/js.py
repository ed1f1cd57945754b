"""The one crossing from Python into JavaScript: the ``webdlpack_js`` module.

``loadWebDLPack(pyodide)`` (``js/src/bridge/pyodide.ts``) registers that module;
its tensor hand-over functions live there and its GPU functions in
``js/src/bridge/pyodide-gpu.ts``. This is the only webdlpack module that
imports ``webdlpack_js`` or ``pyodide.ffi``, and :func:`translate` is the
only place a JS error becomes a Python one.

On CPython, or in a Pyodide where the bridge was not loaded, every call here
raises a typed error: :class:`~webdlpack.WebDLPackDeviceError` (code
``NO_WEBGPU``) naming the device for GPU work, and
:class:`~webdlpack.WebDLPackBufferError` (``UNSUPPORTED``) for tensor hand-over.

Readbacks are JS Promises. :func:`wait` blocks on one through JSPI
(``pyodide.ffi.run_sync``), which works only when Python was entered
asynchronously (``runPythonAsync``, ``callPromising``, an async function);
otherwise it raises an error naming the two ways out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.errors import (
    ErrorCode,
    WebDLPackBufferError,
    WebDLPackDeviceError,
    WebDLPackError,
    WebDLPackTypeError,
    WebDLPackValueError,
)
from ..core.host import HOST_NAME, IS_PYODIDE
from ..core.native import NATIVE

__all__ = [
    "bridge_loaded",
    "js_module",
    "translate",
    "call",
    "can_wait",
    "require_wait",
    "wait",
    "wait_async",
    "is_js_proxy",
    "is_js_tensor",
    "import_versioned",
    "export_managed",
    "deleter_caller",
]


class _NoJsException(Exception):
    """Stands in for ``pyodide.ffi.JsException`` on CPython, where no JS error can arrive."""


class _NoJsProxy:
    """Stands in for ``pyodide.ffi.JsProxy`` on CPython, where no JS object exists."""


_JsException: type[BaseException] = _NoJsException
_JsProxy: type = _NoJsProxy
_ffi: Any = None
if IS_PYODIDE:  # pragma: no cover - Pyodide only
    import pyodide.ffi

    _ffi = pyodide.ffi
    _JsException = _ffi.JsException
    _JsProxy = _ffi.JsProxy

_FIX = (
    "call it from code entered with pyodide.runPythonAsync (or callPromising), or use await webdlpack.to_cpu_async(x)"
)

#: JS error codes that reach ``to_js`` / ``from_js`` as a ``BufferError`` / a ``TypeError`` (else ``ValueError``).
_BUFFER_CODES = {ErrorCode.COPY_REQUIRED, ErrorCode.UNSUPPORTED}
_TYPE_CODES = {ErrorCode.INVALID_ARGUMENT}

#: JS functions of the tensor hand-over, looked up once (each attribute access on a JS module makes a new proxy).
_HANDOVER: dict[str, Any] = {}


def _load() -> Any:
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
    return _load() is not None


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
    module = _load()
    if module is None:
        raise WebDLPackDeviceError(
            ErrorCode.NO_WEBGPU,
            f"{device} is not reachable: the webdlpack JS bridge is not loaded in this Pyodide",
            field="device",
            value=str(device),
            expected="a Pyodide set up with webdlpack's loadWebDLPack(pyodide)",
        )
    return module


def translate(exc: BaseException, *, gpu: bool) -> WebDLPackError:
    """Turn a JS error (a ``JsException`` carrying a JS ``WebDLPackError``) into a typed Python error.

    The Python error carries the JS error's code, ``field``, ``value`` and
    ``expected`` (as attributes; its message is the JS message, which names them).

    Parameters
    ----------
    exc : BaseException
        What Pyodide raised.
    gpu : bool
        True for a GPU operation: a :class:`~webdlpack.WebDLPackDeviceError`
        (an error without a webdlpack code becomes ``GPU_ERROR``). False for
        the tensor hand-over (``to_js`` / ``from_js``): ``COPY_REQUIRED`` and
        ``UNSUPPORTED`` become :class:`~webdlpack.WebDLPackBufferError`,
        ``INVALID_ARGUMENT`` :class:`~webdlpack.WebDLPackTypeError`, other
        codes :class:`~webdlpack.WebDLPackValueError`, and an error without a
        code a ``WebDLPackValueError`` (``INVALID_ARGUMENT``).

    Returns
    -------
    WebDLPackError
        To raise ``from None``.
    """
    js_error = getattr(exc, "js_error", exc)
    name = getattr(js_error, "code", None)
    code = ErrorCode.__members__.get(str(name)) if name is not None else None
    message = str(getattr(js_error, "message", exc))
    if message.startswith("["):  # the JS message starts with "[CODE] "; the Python error writes its own
        message = message.split("] ", 1)[-1]
    cls: type[WebDLPackError]
    if gpu:
        cls, code = WebDLPackDeviceError, ErrorCode.GPU_ERROR if code is None else code
    elif code is None:
        cls, code = WebDLPackValueError, ErrorCode.INVALID_ARGUMENT
    else:
        cls = (
            WebDLPackBufferError
            if code in _BUFFER_CODES
            else WebDLPackTypeError
            if code in _TYPE_CODES
            else WebDLPackValueError
        )
    # The JS message already reads "what; field F; value V; expected E" (js/src/errors.ts): it is kept whole,
    # and the details become attributes without being written into the message a second time.
    error = cls(code, f"(from JS) {message}")
    field, value, expected = (getattr(js_error, key, None) for key in ("field", "value", "expected"))
    error.field = field if isinstance(field, str) else None
    error.value = value if isinstance(value, (int, float, str, bool)) else None
    error.expected = expected if isinstance(expected, str) else None
    return error


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
    except _JsException as exc:
        raise translate(exc, gpu=True) from None


def can_wait() -> bool:
    """True when this Python call stack may block on a Promise (JSPI, entered asynchronously)."""
    if not IS_PYODIDE:
        return False
    can_run_sync = getattr(_ffi, "can_run_sync", None)
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
        return _ffi.run_sync(promise)
    except _JsException as exc:
        raise translate(exc, gpu=True) from None


async def wait_async(promise: Any) -> Any:
    """``await`` a JS Promise; JS errors come back typed."""
    try:
        return await promise
    except _JsException as exc:
        raise translate(exc, gpu=True) from None


def is_js_proxy(value: Any) -> bool:
    """Whether ``value`` is a JS object seen from Python (a ``pyodide.ffi.JsProxy``); False on CPython."""
    return isinstance(value, _JsProxy)


def _handover(name: str) -> Any:
    """The hand-over function ``webdlpack_js.<name>``, or ``UNSUPPORTED`` where there is no bridge."""
    fn = _HANDOVER.get(name)
    if fn is None:
        module = _load()
        if module is None:
            where = "a Pyodide without it" if IS_PYODIDE else HOST_NAME
            raise WebDLPackBufferError(
                ErrorCode.UNSUPPORTED,
                f"handing tensors to JavaScript needs Pyodide with the webdlpack JS bridge; this is {where}",
                field="webdlpack_js",
                value=None,
                expected="a Pyodide set up with webdlpack's loadWebDLPack(pyodide)",
            )
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
    except _JsException as exc:
        raise translate(exc, gpu=False) from None


def export_managed(value: Any, versioned: bool, copy: bool | None) -> int:
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
    try:
        if versioned and copy is None:  # from_js's common case: one argument to convert, not three
            fn = _HANDOVER.get("exportVersioned") or _handover("exportVersioned")
            return int(fn(value)) & 0xFFFFFFFF
        fn = _HANDOVER.get("exportManaged") or _handover("exportManaged")  # the lookup inline: a hot path
        return int(fn(value, versioned, copy)) & 0xFFFFFFFF
    except _JsException as exc:
        raise translate(exc, gpu=False) from None


def deleter_caller() -> Callable[[int, int], None] | None:
    """A function calling a managed struct's deleter from JS, or None without the bridge.

    With webdlpack's native module (Pyodide's wheel ships it) that is its C ``call_deleter``, bound once
    to JS's deleter caller (``webdlpack_js.deleterCallerIndex``: a table entry that calls the deleter
    inside try/catch): one C -> JS call per release and no Python frame. Otherwise
    ``webdlpack_js.callDeleter`` (a Python -> JS call: in Pyodide a ctypes call goes through libffi's JS
    trampolines and costs about twice as much). Either way a JS error (e.g. an entry that is no
    function, or a deleter that threw) comes back typed (see :func:`translate`).
    """
    module = _load()
    fn = getattr(module, "callDeleter", None) if module is not None else None
    if fn is None:
        return None
    index = getattr(module, "deleterCallerIndex", None)
    if NATIVE is not None and index is not None:
        take = module.takeDeleterError

        def raise_deleter_error() -> None:  # the native call_deleter calls this when JS caught an error
            try:
                take()
            except _JsException as exc:
                raise translate(exc, gpu=False) from None

        NATIVE.set_js_deleter_caller(int(index()), raise_deleter_error)
        native_call: Callable[[int, int], None] = NATIVE.call_deleter
        return native_call

    def call_deleter(deleter: int, address: int) -> None:  # not the module's call(): no device, hand-over errors
        try:
            fn(deleter, address)
        except _JsException as exc:
            raise translate(exc, gpu=False) from None

    return call_deleter
