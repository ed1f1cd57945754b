"""Explicit moves between the CPU (wasm heap) and WebGPU, at the view level: the copies behind
``from_dlpack(x, device=...)``, ``x.__dlpack__(dl_device=...)``, ``x.to_device(...)``, ``x.copy()``
and ``asarray`` / ``to_cpu_async`` (:mod:`webdlpack.api.convert`), and the checks of their
``copy`` / ``stream`` / ``device`` arguments.

Nothing moves implicitly: a tensor changes device only when a device is
asked for, and then always as a copy (``IS_COPIED`` set). Per the array API
standard, ``copy=False`` refuses such a move (``BufferError``) and
``copy=None`` allows it ("reuse the existing memory buffer if possible and
copy otherwise"). CPU → WebGPU is synchronous; WebGPU → CPU is asynchronous
in WebGPU, so its synchronous form blocks through JSPI (see
:mod:`webdlpack.bridge.js`) and :func:`to_cpu_async` is the form that always works.
"""

from __future__ import annotations

from typing import Any

from ..bridge.gpu import gpu_copy, readback, upload
from ..core.abi import FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED, DLDeviceType
from ..core.device import Device
from ..core.device import device as parse_device
from ..core.errors import ErrorCode, WebDLPackDeviceError, WebDLPackTypeError, WebDLPackValueError
from ..core.memory import alloc, copy_view
from ..core.view import TensorView

__all__ = [
    "move_view",
    "copy_view_on_device",
    "refuse_copy",
    "crosses_webgpu",
    "check_stream",
    "check_copy",
    "CopyArgumentError",
    "target_device",
    "serves",
]

#: The ``stream`` values a consumer may pass (docs/stream-semantics.md): None, or -1 (no synchronization).
NO_SYNC_STREAM = -1


def check_stream(stream: Any, device: Device) -> None:
    """Check the ``stream`` a consumer passed to ``__dlpack__`` / ``to_device`` for data used on ``device``.

    WebGPU has one queue per device and every framework submits to it, so
    submission order is exchange order and a producer has nothing to make
    wait: ``None`` (the producer's default, the device queue) and ``-1`` (the
    array API's "no synchronization") are both accepted and do the same —
    nothing. The CPU has no streams: ``None``, and the harmless ``-1``.
    Anything else (another integer, a bool, an object) names no stream
    webdlpack has.

    Parameters
    ----------
    stream : object
        The consumer's ``stream`` argument.
    device : Device
        The device the consumer will use the data on (``dl_device``, or the tensor's own).

    Raises
    ------
    WebDLPackValueError
        ``INVALID_ARGUMENT`` naming the field ``stream``, the value and what is accepted.
    """
    if stream is None or (type(stream) is int and stream == NO_SYNC_STREAM):
        return
    if device.type == DLDeviceType.kDLWebGPU:
        why = f"{device} has one queue, used by every framework (submission order is exchange order)"
        expected = "None (the device queue) or -1 (no synchronization)"
    else:
        why = f"{device} has no streams"
        expected = "None or -1 (no synchronization)"
    raise WebDLPackValueError(
        ErrorCode.INVALID_ARGUMENT,
        f"stream {stream!r} names no stream webdlpack has: {why}",
        field="stream",
        value=stream,
        expected=expected,
    )


class CopyArgumentError(WebDLPackTypeError, ValueError):
    """A ``copy`` argument that is not None, True or False (code ``INVALID_ARGUMENT``, field ``copy``).

    A :class:`~webdlpack.WebDLPackTypeError` (the argument's type is wrong) that is also a ``ValueError``,
    which NumPy raises for such a ``copy`` (``x.__dlpack__(copy=numpy.array([1, 2, 3]))``, ``copy="yes"``;
    NumPy's own ``test_dunder_dlpack_copy`` expects it), so either ``except`` catches it.
    """


def check_copy(copy: Any, field: str = "copy") -> bool | None:
    """Check a ``copy`` argument (array API: ``None``, ``True`` or ``False``) before any producer is called.

    Parameters
    ----------
    copy : object
        The caller's ``copy`` argument.
    field : str, default "copy"
        The argument name to report.

    Returns
    -------
    bool or None
        ``copy`` unchanged.

    Raises
    ------
    CopyArgumentError
        ``INVALID_ARGUMENT`` for anything else (``"yes"``, ``2``, ``numpy.True_``, an array ...): a
        ``WebDLPackTypeError`` and a ``ValueError``.
    """
    if copy is None or copy is True or copy is False:
        return copy
    raise CopyArgumentError(
        ErrorCode.INVALID_ARGUMENT,
        "copy must be None, True or False",
        field=field,
        value=copy,
        expected="None (copy only if needed), True (always) or False (never)",
    )


def serves(device: Device) -> bool:
    """True for the devices webdlpack holds data on: the CPU (host / wasm memory) and WebGPU."""
    return device.is_cpu or device.type == DLDeviceType.kDLWebGPU


def target_device(device: Any, source: Device | None = None) -> Device | None:
    """Parse the ``device`` a caller asked for and check webdlpack can put data there.

    Parameters
    ----------
    device : object
        ``None``, ``"cpu"``, ``"webgpu:N"``, a DLPack ``(type, id)`` tuple or a Device.
    source : Device, optional
        Where the data is now; asking for that device is always fine.

    Returns
    -------
    Device or None
        None when ``device`` is None.

    Raises
    ------
    WebDLPackValueError
        ``BAD_DEVICE``: not a device at all (from :func:`webdlpack.device`).
    WebDLPackDeviceError
        ``BAD_DEVICE``: a device other than the CPU, WebGPU or ``source``
        (e.g. ``"cuda"``), which webdlpack cannot move data to.
    """
    if device is None:
        return None
    target = parse_device(device)
    if serves(target) or target == source:
        return target
    where = "" if source is None else f" (the data is on {source})"
    own = source is not None and not serves(source)
    raise WebDLPackDeviceError(
        ErrorCode.BAD_DEVICE,
        f"webdlpack cannot move data to {target}{where}",
        field="device",
        value=str(target),
        expected="'cpu' or 'webgpu:N'" + (f", or {source}" if own else ""),
    )


def crosses_webgpu(source: Device | None, target: Device | None) -> bool:
    """True when ``target`` is given, differs from ``source`` and one side is WebGPU.

    Parameters
    ----------
    source : Device or None
        Where the data is (None: the producer did not say).
    target : Device or None
        Where it is asked to be (None: where it is).
    """
    if target is None or source == target:
        return False
    return target.type == DLDeviceType.kDLWebGPU or (source is not None and source.type == DLDeviceType.kDLWebGPU)


def refuse_copy(source: Any, target: Device, field: str) -> WebDLPackDeviceError:
    """The ``COPY_REQUIRED`` error for a cross-device move asked with ``copy=False``.

    Parameters
    ----------
    source : Device or str
        Where the data is.
    target : Device
        Where it was asked to go.
    field : str
        The argument that asked for ``target`` (``"device"``, ``"dl_device"``).

    Returns
    -------
    WebDLPackDeviceError
        To raise.
    """
    return WebDLPackDeviceError(
        ErrorCode.COPY_REQUIRED,
        f"moving data from {source} to {target} is a copy, but copy=False",
        field=field,
        value=str(target),
        expected=f"copy=True or None, or the data's own device ({source})",
    )


def copy_view_on_device(view: TensorView) -> tuple[TensorView, Any]:
    """A C-contiguous copy of ``view`` on its own device (``IS_COPIED`` set) and its owner."""
    if view.device.type == DLDeviceType.kDLWebGPU:
        return gpu_copy(view)
    if not view.device.is_cpu:
        raise WebDLPackDeviceError(
            ErrorCode.UNSUPPORTED,
            f"webdlpack cannot copy {view.device} data",
            field="device",
            value=str(view.device),
            expected="cpu or webgpu:N",
        )
    block = alloc(view.nbytes)
    copy_view(view, block.address)
    flags = FLAG_IS_COPIED | (view.flags & FLAG_IS_SUBBYTE_TYPE_PADDED)
    return TensorView(block.address, 0, view.shape, None, view.dtype, view.device, flags), block


def move_view(view: TensorView, target: Device) -> tuple[TensorView, Any]:
    """Copy ``view`` to ``target`` (another device) synchronously; returns the new view and its owner.

    CPU → WebGPU uploads; WebGPU → CPU reads back through JSPI (raises a clear
    error naming ``runPythonAsync`` / ``to_cpu_async`` where that cannot block).

    Parameters
    ----------
    view : TensorView
        What to copy.
    target : Device
        Where to (a device other than ``view.device``).

    Returns
    -------
    (TensorView, object)
        The C-contiguous copy (``IS_COPIED`` set) and the owner of its memory.

    Raises
    ------
    WebDLPackDeviceError
        A pair of devices other than cpu ↔ webgpu:N (``UNSUPPORTED``), no
        WebGPU on this host (``NO_WEBGPU``), or a GPU failure.
    """
    src = view.device
    if src.is_cpu and target.type == DLDeviceType.kDLWebGPU:
        return upload(view, target)
    if src.type == DLDeviceType.kDLWebGPU and target.is_cpu:
        return readback(view)
    raise WebDLPackDeviceError(
        ErrorCode.UNSUPPORTED,
        f"webdlpack cannot move data from {src} to {target}",
        field="device",
        value=str(target),
        expected="cpu → webgpu:N or webgpu:N → cpu (WebGPU to WebGPU: read back first)",
    )
