"""``asarray`` and ``to_cpu_async``: a Tensor from anything, where it is asked to be.

Nothing moves implicitly (see :mod:`webdlpack.tensor.moves`, which makes the copies).
"""

from __future__ import annotations

from typing import Any

from ..bridge.gpu import readback_async
from ..bridge.js import bridge_loaded, is_js_proxy
from ..core.errors import ErrorCode, WebDLPackTypeError
from ..tensor.moves import check_copy, move_view, refuse_copy, target_device
from ..tensor.tensor import Tensor
from .create import from_buffer, strided_buffer_error
from .from_dlpack import from_dlpack
from .js_tensors import from_js

__all__ = ["asarray", "to_cpu_async"]


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
        ``BufferError``). None: copy only when needed, e.g. to change device,
        or for a strided buffer (``memoryview(a)[::2]``), copied into C order.

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
        ``copy=False`` but a copy is needed (a strided buffer: ``BAD_STRIDES``,
        field ``obj.strides``); no WebGPU on this host (``NO_WEBGPU``).
    """
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
        raise WebDLPackTypeError(
            ErrorCode.INVALID_ARGUMENT,
            "asarray needs a DLPack producer or a buffer",
            field="obj",
            value=type(obj).__name__,
            expected="an object with __dlpack__, or a buffer such as array.array / bytearray",
        ) from None
    strided = not memoryview(obj).c_contiguous
    if strided:
        if copy is False:
            raise strided_buffer_error(memoryview(obj), "asarray(copy=False) would have to copy it")
        obj = _c_order_copy(memoryview(obj))
    host = from_buffer(obj)
    if target is None or target == host.device:
        if not copy and not strided:
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


def _c_order_copy(mv: memoryview) -> memoryview:
    """The elements of the strided buffer ``mv`` in C order, in a new bytearray, with its format and shape."""
    data = memoryview(bytearray(mv.tobytes()))  # tobytes() reads in C order, whatever the strides
    if not mv.shape:
        return data
    # typeshed types cast() per format literal; the format here is the source's, known only at run time.
    fmt: Any = mv.format
    return data.cast("B").cast(fmt, mv.shape)


def _from_js_if_any(obj: Any, copy: bool | None) -> Any:
    """``from_js(obj)`` when ``obj`` is a JS tensor / TypedArray proxy in Pyodide, else None."""
    if not is_js_proxy(obj) or not bridge_loaded():
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
