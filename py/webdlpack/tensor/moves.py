"""Explicit moves between the CPU (wasm heap) and WebGPU: ``asarray``, ``to_cpu_async`` and the copies
behind ``from_dlpack(x, device=...)`` and ``x.__dlpack__(dl_device=...)``.

Nothing moves implicitly: a tensor changes device only when a device is
asked for, and then always as a copy (``IS_COPIED`` set). Per the array API
standard, ``copy=False`` refuses such a move (``BufferError``) and
``copy=None`` allows it ("reuse the existing memory buffer if possible and
copy otherwise"). CPU → WebGPU is synchronous; WebGPU → CPU is asynchronous
in WebGPU, so its synchronous form blocks through JSPI (see
:mod:`webdlpack._gpu_js`) and :func:`to_cpu_async` is the form that always works.
"""

from __future__ import annotations

from typing import Any

from ._abi import DLDeviceType
from ._device import Device, device as parse_device
from ._errors import ErrorCode, WebDLPackDeviceError, WebDLPackTypeError, WebDLPackValueError
from ._view import TensorView

__all__ = [
    "move_view",
    "copy_view_on_device",
    "refuse_copy",
    "asarray",
    "to_cpu_async",
    "crosses_webgpu",
    "check_stream",
    "check_copy",
    "target_device",
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
    raise WebDLPackValueError(ErrorCode.INVALID_ARGUMENT, f"stream {stream!r} names no stream webdlpack has: {why}",
                              field="stream", value=stream, expected=expected)


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
    WebDLPackTypeError
        ``INVALID_ARGUMENT`` for anything else (``"yes"``, ``2``, ``numpy.True_`` ...).
    """
    if copy is None or copy is True or copy is False:
        return None if copy is None else bool(copy)
    raise WebDLPackTypeError(ErrorCode.INVALID_ARGUMENT, "copy must be None, True or False", field=field,
                             value=copy, expected="None (copy only if needed), True (always) or False (never)")


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
    if target.is_cpu or target.type == DLDeviceType.kDLWebGPU or target == source:
        return target
    where = "" if source is None else f" (the data is on {source})"
    own = source is not None and not source.is_cpu and source.type != DLDeviceType.kDLWebGPU
    raise WebDLPackDeviceError(ErrorCode.BAD_DEVICE, f"webdlpack cannot move data to {target}{where}",
                               field="device", value=str(target),
                               expected="'cpu' or 'webgpu:N'" + (f", or {source}" if own else ""))


def crosses_webgpu(source: Device | None, target: Device | None) -> bool:
    """True when ``target`` is given, differs from ``source`` and one side is WebGPU."""
    if target is None or source == target:
        return False
    return target.type == DLDeviceType.kDLWebGPU or (source is not None and source.type == DLDeviceType.kDLWebGPU)


def refuse_copy(source: Any, target: Device, field: str) -> WebDLPackDeviceError:
    """The ``COPY_REQUIRED`` error for a cross-device move asked with ``copy=False``."""
    return WebDLPackDeviceError(ErrorCode.COPY_REQUIRED, f"moving data from {source} to {target} is a copy, "
                                "but copy=False", field=field, value=str(target),
                                expected=f"copy=True or None, or the data's own device ({source})")


def copy_view_on_device(view: TensorView) -> tuple[TensorView, Any]:
    """A C-contiguous copy of ``view`` on its own device (``IS_COPIED`` set) and its owner."""
    if view.device.type == DLDeviceType.kDLWebGPU:
        from ._gpu import gpu_copy

        return gpu_copy(view)
    from ._memory import alloc, copy_view
    from ._abi import FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED

    if not view.device.is_cpu:
        raise WebDLPackDeviceError(ErrorCode.UNSUPPORTED, f"webdlpack cannot copy {view.device} data",
                                   field="device", value=str(view.device), expected="cpu or webgpu:N")
    block = alloc(view.nbytes)
    copy_view(view, block.address)
    flags = FLAG_IS_COPIED | (view.flags & FLAG_IS_SUBBYTE_TYPE_PADDED)
    return TensorView(block.address, 0, view.shape, None, view.dtype, view.device, flags), block


def move_view(view: TensorView, target: Device) -> tuple[TensorView, Any]:
    """Copy ``view`` to ``target`` (another device) synchronously; returns the new view and its owner.

    CPU → WebGPU uploads; WebGPU → CPU reads back through JSPI (raises a clear
    error naming ``runPythonAsync`` / ``to_cpu_async`` where that cannot block).

    Raises
    ------
    WebDLPackDeviceError
        A pair of devices other than cpu ↔ webgpu:N (``UNSUPPORTED``), no
        WebGPU on this host (``NO_WEBGPU``), or a GPU failure.
    """
    from ._gpu import readback, upload

    src = view.device
    if src.is_cpu and target.type == DLDeviceType.kDLWebGPU:
        return upload(view, target)
    if src.type == DLDeviceType.kDLWebGPU and target.is_cpu:
        return readback(view)
    raise WebDLPackDeviceError(ErrorCode.UNSUPPORTED, f"webdlpack cannot move data from {src} to {target}",
                               field="device", value=str(target),
                               expected="cpu → webgpu:N or webgpu:N → cpu (WebGPU to WebGPU: read back first)")


def asarray(obj: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """A :class:`~webdlpack.Tensor` from a DLPack producer or a buffer, on ``device``.

    Parameters
    ----------
    obj : object
        A ``webdlpack.Tensor`` or any ``__dlpack__`` producer, a buffer-protocol
        object (``array.array``, ``bytearray``, ``memoryview``, a NumPy array...),
        or (in Pyodide) a JS webdlpack Tensor / TypedArray.
    device : str or Device or tuple, optional
        Where the result must be: ``"cpu"`` or ``"webgpu:N"``. None keeps the
        data where it is (a buffer's data is on the CPU).
    copy : bool, optional
        True: always copy. False: never copy (a move to another device raises
        ``BufferError``). None: copy only when needed, e.g. to change device.

    Returns
    -------
    Tensor
        On ``device``; a copy has ``flags.is_copied`` set. Uploading a CPU
        source to ``"webgpu:N"`` gives a tensor whose ``data_ptr`` is a GPU
        pointer of the page's shared context, freed when the last owner lets go.

    Raises
    ------
    TypeError
        ``obj`` is neither a DLPack producer nor a buffer, or ``copy`` is not
        None/True/False (``INVALID_ARGUMENT``, field ``copy``).
    ValueError
        ``device`` is not a device, or one webdlpack cannot move data to
        (``BAD_DEVICE``, e.g. ``"cuda"``).
    BufferError
        ``copy=False`` but a copy is needed; no WebGPU on this host (``NO_WEBGPU``).
    """
    from ._create import from_buffer
    from ._import import from_dlpack
    from ._tensor import Tensor

    copy = check_copy(copy)
    if hasattr(obj, "__dlpack__"):
        return from_dlpack(obj, device=device, copy=copy)  # checks device against the producer's own
    target = target_device(device)
    js_tensor = _from_js_if_any(obj, False if copy is False else None)
    if js_tensor is not None:
        if target is not None and js_tensor.device != target:
            try:
                return from_dlpack(js_tensor, device=target, copy=copy)
            finally:
                js_tensor.dispose()
        if copy and not js_tensor.flags.is_copied:
            copied = js_tensor.copy()
            js_tensor.dispose()
            return copied
        return js_tensor
    try:
        memoryview(obj)
    except TypeError:
        raise WebDLPackTypeError(ErrorCode.INVALID_ARGUMENT, "asarray needs a DLPack producer or a buffer",
                                 field="obj", value=type(obj).__name__,
                                 expected="an object with __dlpack__, or a buffer such as array.array / bytearray") from None
    host = from_buffer(obj)
    if target is None or target == host.device:
        if not copy:
            return host
        copied = host.copy()
        host.dispose()
        return copied
    if copy is False:
        host.dispose()
        raise refuse_copy("cpu", target, "device")
    try:
        view, owner = move_view(host._live(), target)
    finally:
        host.dispose()
    return Tensor._wrap(view, owner)


def _from_js_if_any(obj: Any, copy: bool | None) -> Any:
    """``from_js(obj)`` when ``obj`` is a JS tensor / TypedArray proxy in Pyodide, else None."""
    from ._host import IS_PYODIDE

    if not IS_PYODIDE:
        return None
    from pyodide.ffi import JsProxy

    if not isinstance(obj, JsProxy):
        return None
    try:
        from ._js_bridge import from_js
    except ImportError:
        return None
    return from_js(obj, copy=copy)


async def to_cpu_async(x: Any) -> Any:
    """Read a tensor back to the CPU (the wasm heap); ``await`` it. Works from any Python code.

    Parameters
    ----------
    x : Tensor or DLPack producer
        On ``webgpu:N`` (read back, sees all GPU work submitted before the
        call) or already on the CPU (a Tensor is returned as is, another
        producer imported zero-copy).

    Returns
    -------
    Tensor
        A C-contiguous CPU tensor with ``flags.is_copied`` set (for GPU input).

    Raises
    ------
    BufferError
        No WebGPU on this host, a stale/freed GPU pointer, or a GPU failure
        (typed, with the JS error's code).
    """
    from ._gpu import readback_async
    from ._import import from_dlpack
    from ._tensor import Tensor

    tensor = x if isinstance(x, Tensor) else from_dlpack(x)
    view = tensor._live()
    if view.device.is_cpu:
        return tensor
    try:
        cpu, owner = await readback_async(view)
    finally:
        if tensor is not x:
            tensor.dispose()
    return Tensor._wrap(cpu, owner)
