"""The one place a JavaScript error becomes a Python one (:func:`translate`).

A JS ``WebDLPackError`` arrives as a ``pyodide.ffi.JsException``; its code,
``field``, ``value`` and ``expected`` come back on a typed Python error. This
module imports nothing from JavaScript: it reads the attributes of what it is given.
"""

from __future__ import annotations

from ...core.errors import (
    ErrorCode,
    WebDLPackBufferError,
    WebDLPackDeviceError,
    WebDLPackError,
    WebDLPackTypeError,
    WebDLPackValueError,
)

__all__ = ["translate"]

#: JS error codes that reach ``to_js`` / ``from_js`` as a ``BufferError`` / a ``TypeError`` (else ``ValueError``).
_BUFFER_CODES = {ErrorCode.COPY_REQUIRED, ErrorCode.UNSUPPORTED}
_TYPE_CODES = {ErrorCode.INVALID_ARGUMENT}


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
