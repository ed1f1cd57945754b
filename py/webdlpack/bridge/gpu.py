"""WebGPU memory from Python: GPU allocations owned by Python, uploads, readbacks, GPU copies.

Every buffer is a GPU pointer of the page's shared context (a u32 that the
JS context's pointer table turns into a GPUBuffer), so the same pointer is
valid in JS, in C and here. All operations go through ``webdlpack_js``
(:mod:`webdlpack.bridge.js`); uploads and GPU copies are synchronous (they are
queued on the device's one queue), readbacks are Promises.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..core.abi import FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED, DLDeviceType
from ..core.device import CPU, Device
from ..core.dtype import DType
from ..core.errors import ErrorCode, WebDLPackDeviceError
from ..core.layout import numel
from ..core.memory import HostBlock, alloc, copy_view
from ..core.nocopy import NotCopyable
from ..core.view import TensorView
from .js import call, js_module, require_wait, wait, wait_async

__all__ = [
    "GPUAllocation",
    "gpu_stats",
    "gpu_empty",
    "upload",
    "readback",
    "readback_async",
    "gpu_copy",
    "check_webgpu",
]

_STATS = {"allocated": 0, "freed": 0, "free_errors": 0}


def gpu_stats() -> dict[str, int]:
    """``{"allocated", "freed", "live", "free_errors"}`` for GPU pointers Python allocated."""
    return {**_STATS, "live": _STATS["allocated"] - _STATS["freed"]}


def _free(pointer: int, device: Device) -> None:
    _STATS["freed"] += 1
    try:
        call(device, lambda js: js.gpuFree, pointer)
    except Exception:  # nowhere to report from a finalizer; counted for tests
        _STATS["free_errors"] += 1


def check_webgpu(device: Device) -> None:
    """Raise ``BAD_DEVICE`` unless ``device`` is a WebGPU device."""
    if device.type != DLDeviceType.kDLWebGPU:
        raise WebDLPackDeviceError(
            ErrorCode.BAD_DEVICE,
            f"webdlpack moves data between cpu and webgpu, not {device}",
            field="device",
            value=str(device),
            expected="'cpu' or 'webgpu:N'",
        )


class GPUAllocation(NotCopyable):
    """A GPU pointer Python allocated; ``freeWebGPU`` runs exactly once.

    It runs on :meth:`release` or when this object is collected — whichever
    comes first. Tensors and their exports keep the allocation alive by
    holding a reference to it (as their *owner*).

    Parameters
    ----------
    nbytes : int
        Bytes to allocate (the context rounds up to 16).
    device : Device
        A WebGPU device (``webgpu:N``); device 0 exists after the page's
        ``getContext().setup()``.

    Attributes
    ----------
    pointer : int
        The GPU pointer (unsigned, never 0).
    device : Device
    nbytes : int

    Notes
    -----
    Not copyable or picklable: a copy would free the pointer a second time or
    name it after it was freed. Copy the tensor instead (a GPU copy).
    """

    __slots__ = ("pointer", "device", "nbytes", "_finalizer", "__weakref__")

    def __init__(self, nbytes: int, device: Device) -> None:
        check_webgpu(device)
        pointer = (
            int(call(device, lambda js: js.gpuAlloc, nbytes, device.id, f"webdlpack python {nbytes} B")) & 0xFFFFFFFF
        )
        _STATS["allocated"] += 1
        self.pointer = pointer
        self.device = device
        self.nbytes = nbytes
        self._finalizer = weakref.finalize(self, _free, pointer, device)

    @property
    def alive(self) -> bool:
        """False once the pointer was freed."""
        return self._finalizer.alive

    def release(self) -> None:
        """Free the pointer now (no-op if already freed)."""
        self._finalizer()

    def __repr__(self) -> str:
        state = "live" if self.alive else "freed"
        return f"<GPUAllocation {self.pointer:#x} on {self.device}, {self.nbytes} bytes, {state}>"


def _flags(view: TensorView) -> int:
    return FLAG_IS_COPIED | (view.flags & FLAG_IS_SUBBYTE_TYPE_PADDED)


def gpu_empty(shape: tuple[int, ...], dtype: DType, device: Device, *, zero: bool) -> tuple[TensorView, GPUAllocation]:
    """A new C-contiguous GPU view and its allocation (zeroed on the GPU when ``zero``)."""
    nbytes = dtype.storage_bytes(numel(shape))
    owner = GPUAllocation(nbytes, device)
    if zero:
        try:
            call(device, lambda js: js.gpuClear, owner.pointer)
        except BaseException:
            owner.release()
            raise
    return TensorView(owner.pointer, 0, shape, None, dtype, device, 0), owner


def upload(view: TensorView, device: Device) -> tuple[TensorView, GPUAllocation]:
    """Copy a CPU view to a new allocation on ``device`` (C-contiguous, ``IS_COPIED``).

    ``view.byte_offset`` and any strides are honoured (strided data is packed
    on the host first). The bytes are taken before this returns.
    """
    check_webgpu(device)
    js_module(device)
    if not view.device.is_cpu:
        raise WebDLPackDeviceError(
            ErrorCode.BAD_DEVICE,
            "only CPU data can be uploaded",
            field="device",
            value=str(view.device),
            expected="cpu",
        )
    nbytes = view.nbytes
    staging: HostBlock | None = None
    source = view.address
    if not view.contiguous:
        staging = alloc(nbytes)
        copy_view(view, staging.address)
        source = staging.address
    owner = GPUAllocation(nbytes, device)
    try:
        call(device, lambda js: js.gpuUpload, owner.pointer, 0, source, nbytes)
    except BaseException:
        owner.release()
        raise
    del staging
    return TensorView(owner.pointer, 0, view.shape, None, view.dtype, device, _flags(view)), owner


def _start_readback(view: TensorView) -> tuple[Any, HostBlock, int]:
    """Start copying the GPU bytes of ``view`` into a new host block; returns (promise, block, lo)."""
    lo, hi = view.byte_span()
    if view.byte_offset + lo < 0:
        raise WebDLPackDeviceError(
            ErrorCode.OUT_OF_BOUNDS,
            "the elements start before the GPU buffer",
            field="byte_offset",
            value=view.byte_offset,
            expected=f">= {-lo} for these strides",
        )
    block = alloc(hi - lo)
    promise = call(view.device, lambda js: js.gpuReadback, view.data, view.byte_offset + lo, hi - lo, block.address)
    return promise, block, lo


def _finish_readback(view: TensorView, block: HostBlock, lo: int) -> tuple[TensorView, Any]:
    cpu = TensorView(block.address, -lo, view.shape, view.strides, view.dtype, CPU, _flags(view))
    if cpu.contiguous:
        return cpu, block
    packed = alloc(cpu.nbytes)
    copy_view(cpu, packed.address)
    return TensorView(packed.address, 0, view.shape, None, view.dtype, CPU, _flags(view)), packed


def readback(view: TensorView) -> tuple[TensorView, HostBlock]:
    """Copy a GPU view into new host memory, blocking through JSPI (``IS_COPIED`` set).

    Sees all GPU work submitted before the call. Raises a clear
    ``UNSUPPORTED`` error when this Python code cannot block (see
    :func:`webdlpack.bridge.js.require_wait`), before any GPU work starts.
    """
    check_webgpu(view.device)
    require_wait("reading WebGPU data back synchronously", view.device)
    promise, block, lo = _start_readback(view)
    wait(promise)
    return _finish_readback(view, block, lo)


async def readback_async(view: TensorView) -> tuple[TensorView, HostBlock]:
    """Copy a GPU view into new host memory (``await`` it; works from any Python code)."""
    check_webgpu(view.device)
    promise, block, lo = _start_readback(view)
    await wait_async(promise)
    return _finish_readback(view, block, lo)


def gpu_copy(view: TensorView) -> tuple[TensorView, GPUAllocation]:
    """A new allocation on the same device holding a copy of a contiguous GPU view.

    The copy keeps ``byte_offset % 4`` (WebGPU copies whole 4-byte words) and
    is queued before this returns, so later GPU work and readbacks see it.
    """
    check_webgpu(view.device)
    if not view.contiguous:
        raise WebDLPackDeviceError(
            ErrorCode.UNSUPPORTED,
            "copying strided WebGPU data needs a shader; read it back "
            "(webdlpack.from_dlpack(x, device='cpu') or await webdlpack.to_cpu_async(x)) "
            "and upload that, or make it contiguous in JS (copyGPUTensor of webdlpack/adapters)",
            field="strides",
            value=view.strides,
            expected="None (C-contiguous)",
        )
    lead = view.byte_offset % 4
    owner = GPUAllocation(lead + view.nbytes, view.device)
    try:
        call(view.device, lambda js: js.gpuCopy, view.data, view.byte_offset, owner.pointer, lead, view.nbytes)
    except BaseException:
        owner.release()
        raise
    return TensorView(owner.pointer, lead, view.shape, None, view.dtype, view.device, _flags(view)), owner
