"""The state every :class:`~webdlpack.Tensor` has: its view, its owner, disposal and the read-only description.

:class:`TensorBase` holds the slots; :mod:`webdlpack.tensor.host_access` (CPU
bytes) and :mod:`webdlpack.tensor.dlpack_export` (``__dlpack__``) add to it,
and :mod:`webdlpack.tensor.tensor` puts the public class together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Self

from ..core.device import Device
from ..core.dtype import DType
from ..core.errors import ErrorCode, WebDLPackTypeError, WebDLPackValueError
from ..core.nocopy import NotCopyable
from ..core.view import TensorView
from .scope import OPEN_SCOPES
from .scope import track as track_in_scope

__all__ = ["TensorBase", "TensorFlags"]


class TensorFlags(NamedTuple):
    """The DLPack flags of a tensor.

    Attributes
    ----------
    read_only : bool
        Consumers must not write (``DLPACK_FLAG_BITMASK_READ_ONLY``).
    is_copied : bool
        The producer made a copy for this exchange (``DLPACK_FLAG_BITMASK_IS_COPIED``).
    """

    read_only: bool
    is_copied: bool


class TensorBase(NotCopyable):
    """A tensor's view of memory, the owner that keeps it alive, and what can be read off them.

    Not made directly: :meth:`_wrap` builds one around a view and its owner.
    """

    __slots__ = ("_view", "_owner", "_templates", "_exporter", "__weakref__")

    _view: TensorView | None
    _owner: Any
    _templates: list[Any] | None
    #: ``() -> address``: a new versioned export of this tensor, bound to its template and owner once the
    #: template exists (see ``DLPackExport._template``); None before that and after :meth:`dispose`. The
    #: address-level hot paths (``export_managed``, ``to_js``) call it without a Python frame of their own.
    _exporter: Callable[[], int] | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise WebDLPackTypeError(
            ErrorCode.INVALID_ARGUMENT,
            "Tensor cannot be constructed directly",
            field=type(self).__name__,
            value=args,
            expected="webdlpack.empty, zeros, from_buffer or from_dlpack",
        )

    @classmethod
    def _wrap(cls, view: TensorView, owner: Any) -> Self:
        self = object.__new__(cls)
        self._view = view
        self._owner = owner
        self._templates = None
        self._exporter = None
        if OPEN_SCOPES.get():
            track_in_scope(self)
        return self

    # -- state -------------------------------------------------------------
    def _live(self) -> TensorView:
        view = self._view
        if view is None:
            raise WebDLPackValueError(
                ErrorCode.DISPOSED,
                "tensor was disposed",
                field="tensor",
                value="disposed",
                expected="a tensor that was not disposed",
            )
        return view

    @property
    def disposed(self) -> bool:
        """True after :meth:`dispose`."""
        return self._view is None

    def dispose(self) -> None:
        """Drop this tensor's hold on its memory; safe to call twice.

        An imported tensor's producer deleter runs now, unless an export or a
        memoryview of this tensor still uses the memory (then it runs when the
        last of them is released).
        """
        self._view = None
        self._owner = None
        self._templates = None
        self._exporter = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.dispose()

    # -- description ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """Extents, one per dimension."""
        return self._live().shape

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._live().ndim

    @property
    def size(self) -> int:
        """Number of elements."""
        return self._live().size

    @property
    def dtype(self) -> DType:
        """Element type."""
        return self._live().dtype

    @property
    def device(self) -> Device:
        """Where the data lives (``str(t.device)`` is ``"cpu"`` or ``"webgpu:0"``)."""
        return self._live().device

    @property
    def strides(self) -> tuple[int, ...] | None:
        """Strides in elements, or None when the tensor is C-contiguous."""
        return self._live().strides

    @property
    def byte_offset(self) -> int:
        """Bytes from :attr:`data_ptr` to the first element."""
        return self._live().byte_offset

    @property
    def data_ptr(self) -> int:
        """Base address (CPU: a host/wasm address; WebGPU: a GPU pointer). Unsigned."""
        return self._live().data

    @property
    def nbytes(self) -> int:
        """Bytes the elements take (``size * itemsize``)."""
        view = self._view  # _live() inline: a frame less on the exchange paths
        return (view if view is not None else self._live()).nbytes

    @property
    def flags(self) -> TensorFlags:
        """The tensor's DLPack flags (read_only, is_copied)."""
        view = self._live()
        return TensorFlags(view.read_only, view.is_copied)

    def __repr__(self) -> str:
        if self._view is None:
            return "webdlpack.Tensor(<disposed>)"
        v = self._view
        extra = "" if v.strides is None else f", strides={v.strides}"
        ro = ", read_only=True" if v.read_only else ""
        return f"webdlpack.Tensor(shape={v.shape}, dtype={v.dtype.name}, device={v.device}{extra}{ro})"
