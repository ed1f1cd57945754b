"""Typed errors for every failure webdlpack reports.

Each error carries a stable :class:`ErrorCode` (the same numbers as the JS
``ErrorCode`` and the C library's ``wdl_error_code``) and, where it applies,
the ``field`` that was wrong, the ``value`` found there and what was
``expected``. The concrete classes also derive from the built-in exception the
array API standard asks for (``ValueError``, ``BufferError``, ``TypeError``),
so ``except BufferError`` keeps working for code that knows nothing about
webdlpack.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = [
    "ErrorCode",
    "WebDLPackError",
    "WebDLPackValueError",
    "WebDLPackBufferError",
    "WebDLPackTypeError",
    "WebDLPackAttributeError",
    "WebDLPackDeviceError",
    "WebDLPackMemoryError",
]


class ErrorCode(enum.IntEnum):
    """Stable error codes shared with the JS package and the C library."""

    OK = 0
    INVALID_ARGUMENT = 1
    OUT_OF_BOUNDS = 2
    NULL_POINTER = 3
    BAD_NDIM = 4
    BAD_SHAPE = 5
    BAD_STRIDES = 6
    SIZE_OVERFLOW = 7
    BAD_DTYPE = 8
    BAD_DEVICE = 9
    VERSION_MISMATCH = 10
    BAD_FLAGS = 11
    NO_WEBGPU = 12
    NO_ADAPTER = 13
    UNKNOWN_DEVICE = 14
    DEVICE_LOST = 15
    INVALID_POINTER = 16
    STALE_POINTER = 17
    DOUBLE_FREE = 18
    OUT_OF_MEMORY = 19
    ALREADY_CONSUMED = 20
    DISPOSED = 21
    INCOMPATIBLE_CONTEXT = 22
    COPY_REQUIRED = 23
    UNSUPPORTED = 24
    GPU_ERROR = 25


_UNSET: Any = object()


def _describe(value: Any) -> str:
    try:
        return repr(value)
    except Exception:  # pragma: no cover - a repr that raises
        return "<unprintable>"


class WebDLPackError(Exception):
    """Base class of every webdlpack error.

    Parameters
    ----------
    code : ErrorCode
        Stable machine-readable code.
    message : str
        What went wrong, for people.
    field : str, optional
        The struct field or argument that was wrong, e.g. ``"DLTensor.ndim"``.
    value : object, optional
        The value found in ``field``.
    expected : str, optional
        What was expected instead, in words, e.g. ``"0 <= ndim <= 32"``.

    Attributes
    ----------
    code : ErrorCode
    errno : int
        ``int(code)``, the number shared with JS and C.
    field : str or None
    value : object
    expected : str or None
    """

    code: ErrorCode
    field: str | None
    value: Any
    expected: str | None

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        field: str | None = None,
        value: Any = _UNSET,
        expected: str | None = None,
    ) -> None:
        parts = [message]
        if field is not None:
            parts.append(f"field {field}")
        if value is not _UNSET:
            parts.append(f"value {_describe(value)}")
        if expected is not None:
            parts.append(f"expected {expected}")
        super().__init__(f"[{code.name}] " + "; ".join(parts))
        self.code = code
        self.field = field
        self.value = None if value is _UNSET else value
        self.expected = expected

    @property
    def errno(self) -> int:
        """Numeric error code, the same number in JS, C and Python."""
        return int(self.code)


class WebDLPackValueError(WebDLPackError, ValueError):
    """A value is wrong: a malformed struct, a bad argument, a disposed tensor."""


class WebDLPackBufferError(WebDLPackError, BufferError):
    """The data cannot be exchanged as asked (device, copy or layout rules)."""


class WebDLPackTypeError(WebDLPackError, TypeError):
    """An argument has the wrong type (for example not a DLPack capsule)."""


class WebDLPackAttributeError(WebDLPackError, AttributeError):
    """An object lacks the DLPack protocol methods (``__dlpack__``)."""


class WebDLPackDeviceError(WebDLPackBufferError, ValueError):
    """Data cannot reach the requested device: no WebGPU here, a cross-device
    copy refused with ``copy=False``, or a GPU operation that failed.

    It is a ``BufferError`` (what DLPack's ``__dlpack__`` and ``from_dlpack``'s
    ``copy`` rule ask for) and a ``ValueError`` (what the array API asks of
    ``from_dlpack``'s ``device`` rule and of creation functions), so either
    ``except`` catches it.
    """


class WebDLPackMemoryError(WebDLPackError, MemoryError):
    """Memory for a tensor could not be allocated (code ``OUT_OF_MEMORY``).

    It is a ``MemoryError``, so ``except MemoryError`` keeps working.
    """
