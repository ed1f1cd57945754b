"""``webdlpack.Tensor``: a DLPack tensor in Python, exporter and importer of the protocol.

The class is put together from :class:`~webdlpack.tensor.host_access.HostAccess`
(CPU bytes) and :class:`~webdlpack.tensor.dlpack_export.DLPackExport`
(``__dlpack__``), both over :class:`~webdlpack.tensor.base.TensorBase`
(state and description); this module adds copying and device moves.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ..core.device import device as parse_device
from ..core.nocopy import raise_not_copyable
from .base import TensorFlags
from .dlpack_export import DLPackExport
from .host_access import HostAccess
from .moves import check_stream, copy_view_on_device, move_view, target_device

__all__ = ["Tensor", "TensorFlags"]


class Tensor(HostAccess, DLPackExport):
    """A tensor whose bytes live in host (wasm) memory or on a WebGPU device.

    Tensors are made by :func:`webdlpack.empty`, :func:`webdlpack.zeros`,
    :func:`webdlpack.from_buffer` and :func:`webdlpack.from_dlpack`, not by
    calling the class. A tensor implements the array API DLPack protocol
    (``__dlpack__`` / ``__dlpack_device__``), so ``numpy.from_dlpack(t)``
    shares its memory.

    Notes
    -----
    Strides are counted in elements and :attr:`strides` is ``None`` for a
    C-contiguous tensor (the DLPack convention). :meth:`dispose` (or leaving a
    ``with`` block) drops this tensor's hold on the memory; memory still used by
    an export or a memoryview stays valid until that user lets go.

    A tensor is a view of memory it shares: ``copy.copy(t)`` is ``t`` itself,
    ``copy.deepcopy(t)`` is :meth:`copy` (new memory, on the same device), and
    pickling raises :class:`~webdlpack.WebDLPackTypeError` (the memory is
    named by address; pickle ``t.tolist()`` or ``bytes(t.memoryview())``).

    On Python >= 3.12 (Pyodide) a CPU tensor has the buffer protocol:
    ``memoryview(t)`` is :meth:`memoryview`, with the same rules. On 3.11
    ``memoryview(t)`` raises TypeError (a Python class cannot export a buffer
    there); call ``t.memoryview()``.
    """

    __slots__ = ()

    # -- copying -------------------------------------------------------------------
    def __copy__(self) -> Tensor:
        """``copy.copy(t)``: ``t`` itself — a tensor is a view, and a shallow copy would share the same memory."""
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """``copy.deepcopy(t)``: :meth:`copy` — new memory on the same device with the same values.

        A WebGPU tensor is copied on the GPU (contiguous tensors only; a
        strided one raises ``UNSUPPORTED`` saying how to copy it). The copy is
        writable even when ``t`` is read-only.
        """
        copied = self.copy()
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        """Refuse pickling: the tensor names memory by address (see :meth:`__reduce__`)."""
        self.__reduce__()

    def __reduce__(self) -> NoReturn:
        """Refuse pickling with :class:`~webdlpack.WebDLPackTypeError` (``INVALID_ARGUMENT``, field ``tensor``).

        Raises
        ------
        WebDLPackTypeError
            Always; pickle ``t.tolist()`` or ``bytes(t.memoryview())`` instead.
        """
        raise_not_copyable(
            self, "pickled", field="tensor", expected="copy to bytes first, e.g. t.tolist() / bytes(t.memoryview())"
        )

    def copy(self) -> Tensor:
        """A new C-contiguous, writable tensor on the same device with the same values (``is_copied`` set).

        A WebGPU tensor is copied on the GPU (queued now; contiguous tensors only).
        """
        view, owner = copy_view_on_device(self._live())
        return Tensor._wrap(view, owner)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor:
        """This tensor on ``device`` (array API): ``self`` if already there, else a copy.

        Parameters
        ----------
        device : str or Device or tuple
            ``"cpu"`` or ``"webgpu:N"``; another device raises ValueError
            (``BAD_DEVICE``) unless it is this tensor's own.
        stream : None or -1
            As for :meth:`__dlpack__`: None (the device queue; nothing waits) or -1
            (no synchronization); anything else raises ValueError naming ``stream``.

        Returns
        -------
        Tensor
            WebGPU → CPU blocks through JSPI: call it from code entered with
            ``runPythonAsync``, or use ``await webdlpack.to_cpu_async(x)``.
        """
        view = self._live()
        target = parse_device(device)
        target_device(target, view.device)  # refuses devices webdlpack cannot move data to
        if stream is not None:
            check_stream(stream, target)
        if target == view.device:
            return self
        moved, owner = move_view(view, target)
        return Tensor._wrap(moved, owner)
