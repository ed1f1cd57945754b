"""``with webdlpack.scope():`` — dispose the tensors made inside, unless kept.

The Python side of the context's lifetime ledger scopes (``ctx.scope(fn)`` in
JS). Every :class:`~webdlpack.Tensor` made while a scope is open (by
``empty``/``zeros``/``from_buffer``/``asarray``/``from_dlpack``/``from_js``, a
copy or a readback) is remembered by the innermost open scope; when the scope
closes — normally or by an exception — each one still alive is disposed, which
frees a GPU tensor's pointer and releases a CPU tensor's memory (the producer's
deleter runs once the last user is gone).

Two ways to keep a tensor, as in JS:

``s.keep(x)`` (:meth:`Scope.keep`)
    Keeps ``x`` from scope ``s`` only: when ``s`` closes, ``x`` moves to the
    scope that encloses ``s`` (like ``ctx.keep`` inside nested ``ctx.scope``),
    which disposes it when it closes unless it is kept there too.
``webdlpack.keep(x)`` (:func:`keep`)
    Keeps ``x`` from every scope open now: it outlives them all.

Scopes follow :mod:`contextvars`, so asyncio tasks and threads each see their own.

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

__all__ = ["Scope", "scope", "keep", "track", "OPEN_SCOPES"]

T = TypeVar("T")

#: ``_made`` is pruned of collected and disposed tensors when it reaches this many entries (then twice its size).
_PRUNE_FIRST = 64


class Scope:
    """The tensors made while one ``with webdlpack.scope()`` block was open.

    Parameters
    ----------
    parent : Scope, optional
        The scope this one is nested in (the innermost open one when it
        opened); tensors kept from this scope move there when it closes.

    Attributes
    ----------
    disposed : int
        How many tensors closing the scope disposed (0 until it closes).
    closed : bool
        True once the scope has closed.
    """

    __slots__ = ("_made", "_kept", "_parent", "_prune_at", "disposed", "closed")

    def __init__(self, parent: Scope | None = None) -> None:
        self._made: list[weakref.ref[Any]] = []
        self._kept: weakref.WeakSet[Any] = weakref.WeakSet()
        self._parent = parent
        self._prune_at = _PRUNE_FIRST
        self.disposed = 0
        self.closed = False

    def keep(self, x: T) -> T:
        """Do not dispose ``x`` when this scope closes; returns ``x``.

        ``x`` is kept from this scope only: if this scope made it, it moves to
        the enclosing scope when this one closes, and that scope disposes it
        unless it is kept there too. Use :func:`webdlpack.keep` to keep ``x``
        from every open scope.

        Parameters
        ----------
        x : Tensor
            Anything else is returned unchanged.

        Returns
        -------
        object
            ``x``.
        """
        try:
            self._kept.add(x)
        except TypeError:  # not weak-referenceable, so not a tensor this scope tracks
            pass
        return x

    def _remember(self, ref: weakref.ref[Any]) -> None:
        made = self._made
        made.append(ref)
        if len(made) >= self._prune_at:  # amortised O(1): the list at most doubles between prunes
            made[:] = [r for r in made if (t := r()) is not None and not t.disposed]
            self._prune_at = max(_PRUNE_FIRST, 2 * len(made))

    def _open_parent(self) -> Scope | None:
        parent = self._parent
        while parent is not None and parent.closed:  # e.g. an asyncio task outlived the scope it started in
            parent = parent._parent
        return parent

    def _close(self) -> None:
        self.closed = True
        made, self._made = self._made, []
        parent = self._open_parent()
        for ref in made:
            tensor = ref()
            if tensor is None or tensor.disposed:
                continue
            if tensor in self._kept:
                if parent is not None:
                    parent._remember(ref)
                continue
            tensor.dispose()
            self.disposed += 1
        self._kept = weakref.WeakSet()


#: The scopes open in this context, innermost last (``Tensor._wrap`` reads it to skip :func:`track` when empty).
OPEN_SCOPES: ContextVar[tuple[Scope, ...]] = ContextVar("webdlpack_scopes", default=())


def track(tensor: Any) -> None:
    """Remember a new tensor in the innermost open scope (no-op without one)."""
    scopes = OPEN_SCOPES.get()
    if scopes:
        scopes[-1]._remember(weakref.ref(tensor))


@contextmanager
def scope() -> Iterator[Scope]:
    """Open a scope: tensors made inside are disposed when it closes, unless kept.

    Yields
    ------
    Scope
        The open scope (``s.keep(x)`` keeps ``x`` from this scope only: ``x``
        then belongs to the enclosing scope).

    Examples
    --------
    >>> with webdlpack.scope() as s:                       # doctest: +SKIP
    ...     tmp = webdlpack.zeros((4,), "float32")
    ...     out = webdlpack.keep(webdlpack.zeros((4,), "float32"))
    >>> tmp.disposed, out.disposed                         # doctest: +SKIP
    (True, False)
    """
    stack = OPEN_SCOPES.get()
    opened = Scope(stack[-1] if stack else None)
    token = OPEN_SCOPES.set(stack + (opened,))
    try:
        yield opened
    finally:
        OPEN_SCOPES.reset(token)
        opened._close()


def keep(x: T) -> T:
    """Keep ``x`` alive past every open scope (none of them will dispose it); returns ``x``.

    Parameters
    ----------
    x : Tensor
        A tensor made inside the open scopes (anything else is returned unchanged).

    Returns
    -------
    object
        ``x``.

    See Also
    --------
    Scope.keep : keep from one scope only (the tensor moves to the enclosing scope).
    """
    for opened in OPEN_SCOPES.get():
        opened.keep(x)
    return x
