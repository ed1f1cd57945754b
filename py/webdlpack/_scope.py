"""``with webdlpack.scope():`` — dispose the tensors made inside, unless kept.

The Python side of the context's lifetime ledger scopes (``ctx.scope(fn)`` in
JS). Every :class:`~webdlpack.Tensor` made while a scope is open (by
``empty``/``zeros``/``from_buffer``/``asarray``/``from_dlpack``/``from_js``, a
copy or a readback) is remembered by the innermost open scope; when the scope
closes — normally or by an exception — each one still alive is disposed, which
frees a GPU tensor's pointer and releases a CPU tensor's memory (the producer's
deleter runs once the last user is gone). ``webdlpack.keep(x)`` takes ``x`` out
of every open scope. Scopes follow :mod:`contextvars`, so asyncio tasks and
threads each see their own.

    with webdlpack.scope():
        g = webdlpack.zeros((1024,), "float32", device="webgpu:0")
        y = webdlpack.keep(compute(g))   # g is disposed at the end; y is not
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["Scope", "scope", "keep", "track"]

T = TypeVar("T")


class Scope:
    """The tensors made while one ``with webdlpack.scope()`` block was open.

    Attributes
    ----------
    disposed : int
        How many tensors closing the scope disposed (0 until it closes).
    """

    __slots__ = ("_made", "_kept", "disposed", "closed")

    def __init__(self) -> None:
        self._made: list[weakref.ref[Any]] = []
        self._kept: weakref.WeakSet[Any] = weakref.WeakSet()
        self.disposed = 0
        self.closed = False

    def keep(self, x: T) -> T:
        """Do not dispose ``x`` when this scope closes; returns ``x``."""
        try:
            self._kept.add(x)
        except TypeError:  # not weak-referenceable, so not a tensor this scope tracks
            pass
        return x

    def _close(self) -> None:
        self.closed = True
        made, self._made = self._made, []
        for ref in made:
            tensor = ref()
            if tensor is None or tensor in self._kept or tensor.disposed:
                continue
            tensor.dispose()
            self.disposed += 1
        self._kept = weakref.WeakSet()


_OPEN: ContextVar[tuple[Scope, ...]] = ContextVar("webdlpack_scopes", default=())


def track(tensor: Any) -> None:
    """Remember a new tensor in the innermost open scope (no-op without one)."""
    scopes = _OPEN.get()
    if scopes:
        scopes[-1]._made.append(weakref.ref(tensor))


@contextmanager
def scope() -> Iterator[Scope]:
    """Open a scope: tensors made inside are disposed when it closes, unless kept.

    Yields
    ------
    Scope
        The open scope (``s.keep(x)`` keeps ``x`` from this scope only).

    Examples
    --------
    >>> with webdlpack.scope() as s:                       # doctest: +SKIP
    ...     tmp = webdlpack.zeros((4,), "float32")
    ...     out = webdlpack.keep(webdlpack.zeros((4,), "float32"))
    >>> tmp.disposed, out.disposed                         # doctest: +SKIP
    (True, False)
    """
    opened = Scope()
    token = _OPEN.set(_OPEN.get() + (opened,))
    try:
        yield opened
    finally:
        _OPEN.reset(token)
        opened._close()


def keep(x: T) -> T:
    """Keep ``x`` alive past every open scope (they will not dispose it); returns ``x``.

    Parameters
    ----------
    x : Tensor
        A tensor made inside the open scopes (anything else is returned unchanged).
    """
    for opened in _OPEN.get():
        opened.keep(x)
    return x
