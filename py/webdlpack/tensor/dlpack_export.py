"""A tensor as a DLPack producer: ``__dlpack__``, ``__dlpack_device__`` and the managed-struct export.

The structs and capsules are written by :mod:`webdlpack.exchange.export`;
cross-device exports copy through :mod:`webdlpack.tensor.moves`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..core.abi import DLPACK_MAJOR_VERSION, DLDeviceType
from ..core.device import Device
from ..core.device import device as parse_device
from ..core.errors import ErrorCode, WebDLPackBufferError, WebDLPackValueError
from ..core.view import TensorView
from ..exchange.export import ExportTemplate, make_capsule
from .base import TensorBase
from .moves import check_copy, check_stream, copy_view_on_device, move_view, refuse_copy

__all__ = ["DLPackExport"]


def _want_versioned(max_version: Any) -> bool:
    if max_version is None:
        return False
    if (
        not isinstance(max_version, tuple)
        or len(max_version) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in max_version)
    ):
        raise WebDLPackValueError(
            ErrorCode.INVALID_ARGUMENT,
            "max_version must be a (major, minor) tuple",
            field="max_version",
            value=max_version,
            expected="None or (int, int), e.g. (1, 1)",
        )
    # Same major (or newer consumer): our 1.1 struct. An older major: the legacy struct.
    return bool(max_version[0] >= DLPACK_MAJOR_VERSION)


def _parse_dl_device(dl_device: Any) -> Device:
    if not isinstance(dl_device, tuple) or len(dl_device) != 2:
        raise WebDLPackValueError(
            ErrorCode.BAD_DEVICE,
            "dl_device must be a (device_type, device_id) tuple",
            field="dl_device",
            value=dl_device,
            expected="a tuple like __dlpack_device__() returns",
        )
    try:
        return parse_device(dl_device)
    except WebDLPackValueError as err:
        raise WebDLPackBufferError(
            ErrorCode.BAD_DEVICE,
            "cannot export to this device",
            field="dl_device",
            value=dl_device,
            expected="this tensor's own device or (1, 0) for CPU",
        ) from err


class DLPackExport(TensorBase):
    """The producer half of :class:`~webdlpack.Tensor` (array API DLPack protocol, DLPack 1.1 and legacy)."""

    __slots__ = ()

    # -- DLPack protocol ---------------------------------------------------------
    def _template(self, view: TensorView, versioned: bool) -> ExportTemplate:
        """The cached export template of this tensor's own ``view`` (built on first use)."""
        cache = self._templates
        if cache is None or cache[0] is not view:
            cache = self._templates = [view, None, None]
        template: ExportTemplate | None = cache[1 + versioned]
        if template is None:
            template = cache[1 + versioned] = ExportTemplate(view, versioned)
            if versioned:
                self._exporter = partial(template.export, self._owner)
        return template

    def _export(self, versioned: bool = True) -> int:
        """Export this tensor (as it is) as a new managed struct; returns its address.

        The receiver must call the deleter once; until then the memory stays alive.
        """
        view = self._view
        cache = self._templates
        if view is not None and cache is not None and cache[0] is view:
            template = cache[1 + versioned]
            if template is not None:  # the common case: one lookup, then the template's own export
                address: int = template.export(self._owner)
                return address
        view = self._live()
        return self._template(view, versioned).export(self._owner)

    def __dlpack_device__(self) -> tuple[DLDeviceType, int]:
        """``(device_type, device_id)`` of the data, e.g. ``(DLDeviceType.kDLCPU, 0)``."""
        return self._live().device.to_dlpack()

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[Any, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """Export the tensor as a new DLPack capsule (array API standard, v2023.12).

        Parameters
        ----------
        stream : None or -1
            The consumer's stream on ``dl_device`` (see docs/stream-semantics.md).
            None: the producer's default — for WebGPU the device's one queue,
            where this tensor's writes were already submitted (submission order
            is exchange order), so nothing waits. -1: no synchronization, the
            same here. The CPU has no streams. Other values raise ValueError
            (``INVALID_ARGUMENT``, field ``stream``).
        max_version : (int, int) or None
            Highest DLPack version the consumer understands. None or a major
            below 1 gives a legacy ``"dltensor"`` capsule; otherwise a
            ``"dltensor_versioned"`` capsule holding DLPack 1.1.
        dl_device : (int, int) or None
            Device the consumer wants; None means this tensor's device.
            ``(1, 0)`` for a WebGPU tensor reads it back into the wasm heap
            (blocking through JSPI: only from code entered with
            ``runPythonAsync``; else use ``await webdlpack.to_cpu_async(x)``);
            ``(15, N)`` for a CPU tensor uploads it.
        copy : bool or None
            True: always copy (the struct has ``IS_COPIED``). False: never copy
            (another ``dl_device`` is then a ``BufferError``). None: copy only if
            needed, e.g. to change device (as the array API standard allows).

        Returns
        -------
        PyCapsule
            Consume it once; an unconsumed capsule frees its struct when collected.

        Raises
        ------
        ValueError
            ``stream`` is neither None nor -1, or ``max_version`` / ``dl_device`` is malformed.
        TypeError
            ``copy`` is not None, True or False (``INVALID_ARGUMENT``, field ``copy``): also a
            ``ValueError``, as NumPy raises for such a ``copy`` (``CopyArgumentError``).
        BufferError
            A device this tensor cannot be exported to, a copy required while
            ``copy=False`` (code ``COPY_REQUIRED``), or a read-only tensor asked
            for as a legacy capsule (DLPack 0.x cannot mark read-only data).
        """
        view = self._live()
        if copy is not None and copy is not True and copy is not False:
            check_copy(copy)
        versioned = _want_versioned(max_version)
        target = view.device if dl_device is None else _parse_dl_device(dl_device)
        if stream is not None:
            check_stream(stream, target)
        owner: Any = self._owner
        if target != view.device:
            if copy is False:
                raise refuse_copy(view.device, target, "dl_device")
            # copy=None or True: the array API lets (None) or makes (True) the producer copy across devices.
            view, owner = move_view(view, target)
        elif copy:
            view, owner = copy_view_on_device(view)
        elif not versioned and view.read_only:
            raise WebDLPackBufferError(
                ErrorCode.UNSUPPORTED,
                "a read-only tensor cannot be exported as a legacy capsule (DLPack 0.x cannot mark data read-only)",
                field="max_version",
                value=max_version,
                expected="(1, 0) or newer, or copy=True",
            )
        else:
            return make_capsule(view, owner, versioned=versioned, template=self._template(view, versioned))
        return make_capsule(view, owner, versioned=versioned)
