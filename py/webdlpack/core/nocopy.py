"""``NotCopyable``: objects that own memory by address refuse ``copy``, ``deepcopy`` and ``pickle``.

An owner (host block, GPU allocation, adopted managed struct) is a promise
to free one address exactly once. ``copy.copy`` would give two objects the
same promise (a double free), ``copy.deepcopy`` and ``pickle`` a new object
still naming the old address (a use after free). So they raise instead,
with a typed error saying what to do.
"""

from __future__ import annotations

from typing import Any, NoReturn

from .errors import ErrorCode, WebDLPackTypeError

__all__ = ["NotCopyable", "raise_not_copyable"]


def raise_not_copyable(obj: Any, how: str, *, field: str | None = None, expected: str | None = None) -> NoReturn:
    """Raise the typed error for copying or pickling ``obj``.

    Parameters
    ----------
    obj : object
        What was to be copied.
    how : str
        The operation, e.g. ``"pickled"`` or ``"deep-copied"``.
    field : str, optional
        Field to name; the class name by default.
    expected : str, optional
        What to do instead; by default "copy the tensor that owns it".

    Raises
    ------
    WebDLPackTypeError
        Always, with code ``INVALID_ARGUMENT``.
    """
    name = type(obj).__name__
    try:
        shown = repr(obj)
    except Exception:  # a half-built object (e.g. made without __init__)
        shown = f"<{name}>"
    raise WebDLPackTypeError(
        ErrorCode.INVALID_ARGUMENT,
        f"a webdlpack {name} owns memory by address and cannot be {how}",
        field=field or name,
        value=shown,
        expected=expected or "copy the tensor that owns it: tensor.copy() or copy.deepcopy(tensor)",
    )


class NotCopyable:
    """Mixin: ``copy.copy``, ``copy.deepcopy`` and ``pickle`` raise :class:`WebDLPackTypeError`.

    Subclasses may override :meth:`__copy__` / :meth:`__deepcopy__` with a
    safe meaning (as :class:`~webdlpack.Tensor` does); pickling stays refused.
    """

    __slots__ = ()

    def __copy__(self) -> Any:
        """Refuse ``copy.copy`` (:class:`~webdlpack.WebDLPackTypeError`)."""
        raise_not_copyable(self, "copied")

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """Refuse ``copy.deepcopy`` (:class:`~webdlpack.WebDLPackTypeError`)."""
        raise_not_copyable(self, "deep-copied")

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        """Refuse pickling (:class:`~webdlpack.WebDLPackTypeError`)."""
        raise_not_copyable(self, "pickled")

    def __reduce__(self) -> NoReturn:
        """Refuse pickling (:class:`~webdlpack.WebDLPackTypeError`)."""
        raise_not_copyable(self, "pickled")
