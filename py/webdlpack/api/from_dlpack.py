"""Import: ``from_dlpack``, ``from_capsule`` and ``adopt`` take a managed DLPack struct into a :class:`Tensor`.

The struct itself is read by :mod:`webdlpack.exchange.adopt`; device moves come from
:mod:`webdlpack.tensor.moves`.
"""

from __future__ import annotations

from typing import Any

from ..core.abi import DLPACK_VERSION
from ..core.device import Device
from ..core.device import device as parse_device
from ..core.errors import ErrorCode, WebDLPackAttributeError, WebDLPackBufferError, WebDLPackDeviceError
from ..core.native import NATIVE
from ..exchange.adopt import SEEN, SEEN_CACHE, adopt_view
from ..exchange.capsule import take_pointer
from ..exchange.owner import ManagedOwner
from ..tensor.moves import check_copy, crosses_webgpu, move_view, refuse_copy, serves, target_device
from ..tensor.scope import OPEN_SCOPES, track
from ..tensor.tensor import Tensor

__all__ = ["adopt", "adopt_seen", "from_capsule", "from_dlpack"]

#: ``(address, versioned) -> Tensor | None``: the native module's adopt of a block adopt_view checked before and
#: still unchanged (py/native/adopt.c: one C call for the cache hit, the owner and the Tensor, as
#: ``Tensor._wrap(*adopt_view(...))`` would make them); None where there is no such cache (CPython) or no
#: native module. A None result took nothing: the caller adopts with :func:`adopt`.
adopt_seen: Any = None
if NATIVE is not None and SEEN_CACHE:
    NATIVE.bind_adopt(SEEN, Tensor, ManagedOwner, OPEN_SCOPES, track)
    adopt_seen = NATIVE.adopt


def adopt(address: int, versioned: bool = True) -> Tensor:
    """Take ownership of the managed struct at ``address`` and wrap it in a Tensor.

    The struct is read and checked by :func:`~webdlpack.exchange.adopt.adopt_view`
    (same parameters and errors); the tensor's disposal or collection then runs
    the deleter exactly once.

    Parameters
    ----------
    address : int
        Address of a managed struct; ownership passes to the tensor.
    versioned : bool, default True
        ``DLManagedTensorVersioned`` or a legacy ``DLManagedTensor``.

    Returns
    -------
    Tensor
    """
    if adopt_seen is not None:
        tensor = adopt_seen(address, versioned)
        if tensor is not None:
            return tensor  # type: ignore[no-any-return]
    view, owner = adopt_view(address, versioned)
    return Tensor._wrap(view, owner)


def from_capsule(capsule: Any) -> Tensor:
    """Consume a DLPack capsule (``dltensor_versioned`` or ``dltensor``) into a Tensor.

    The capsule is renamed ``used_...`` first, so it can be consumed only once.

    Raises
    ------
    TypeError
        Not a PyCapsule.
    BufferError
        A capsule already consumed (``ALREADY_CONSUMED``) or of another kind;
        a struct of another DLPack major (``VERSION_MISMATCH``; its deleter was called).
    ValueError
        An invalid struct; its deleter was called.
    """
    address, versioned = take_pointer(capsule)
    return adopt(address, versioned)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """Make a Tensor from any object with ``__dlpack__`` (array API standard).

    Parameters
    ----------
    x : object
        A producer: a NumPy array, a webdlpack Tensor, ...
    device : str or Device or tuple, optional
        Where the result must be: ``"cpu"`` or ``"webgpu:N"``; None keeps
        ``x``'s device. Moving between the CPU and WebGPU is always a copy:
        CPU → WebGPU uploads (the result's ``data_ptr`` is a GPU pointer of the
        page's context); WebGPU → CPU reads back, blocking through JSPI, so only
        from code entered with ``runPythonAsync`` (else use
        ``await webdlpack.to_cpu_async(x)``).
    copy : bool, optional
        True: always copy (``flags.is_copied`` is then set).
        False: never copy; a move to another device raises ``BufferError``.
        None: copy only if needed, e.g. to change device (array API standard:
        "reuse the existing memory buffer if possible and copy otherwise").

    Returns
    -------
    Tensor
        Shares ``x``'s memory unless a copy was made, and keeps it alive.

    Raises
    ------
    AttributeError
        ``x`` has no ``__dlpack__`` method.
    TypeError
        ``copy`` is not None, True or False (``INVALID_ARGUMENT``, field ``copy``).
    BufferError
        The producer cannot export as asked, or gave data on another device;
        data on a device webdlpack cannot serve (``BAD_DEVICE`` naming it:
        ``cuda:0`` from torch, CuPy or JAX on a GPU, ...) unless ``device="cpu"``
        asks the producer for a CPU copy. Checked before ``__dlpack__`` runs.
    ValueError
        The producer's struct is invalid (the field is named), or ``device``
        is not a device or one webdlpack cannot move data to (``BAD_DEVICE``:
        anything but ``"cpu"``, ``"webgpu:N"`` or ``x``'s own device).

    Notes
    -----
    ``x.__dlpack__`` is called with ``max_version=(1, 1)`` (and ``dl_device`` /
    ``copy`` when given). A producer that predates these keywords raises
    TypeError; then it is called again without them and a legacy capsule is
    accepted, and a requested copy is made here.
    """
    if not hasattr(x, "__dlpack__"):
        raise WebDLPackAttributeError(
            ErrorCode.INVALID_ARGUMENT,
            "object does not support DLPack",
            field="x",
            value=type(x).__name__,
            expected="an object with __dlpack__ and __dlpack_device__",
        )
    copy = check_copy(copy)
    requested = None if device is None else parse_device(device)  # malformed: fails before the producer runs
    source: Device | None = None
    if hasattr(x, "__dlpack_device__"):
        source = parse_device(tuple(x.__dlpack_device__()))
    target = target_device(requested, source)
    if source is not None and not serves(source) and (target is None or not serves(target)):
        raise _foreign(source, "x.__dlpack_device__()")
    if crosses_webgpu(source, target):
        assert target is not None
        return _across_devices(x, source, target, copy)
    kwargs: dict[str, Any] = {"max_version": DLPACK_VERSION}
    if target is not None:
        kwargs["dl_device"] = target.to_dlpack()
    if copy is not None:
        kwargs["copy"] = copy
    legacy_call = False
    try:
        capsule = x.__dlpack__(**kwargs)
    except TypeError:
        legacy_call = True
        capsule = x.__dlpack__()
    tensor = from_capsule(capsule)
    del capsule
    try:
        expected = target if target is not None else source
        if expected is None and not serves(tensor.device):  # a producer that did not say where its data is
            raise _foreign(tensor.device, "DLTensor.device")
        if expected is not None and tensor.device != expected:
            raise WebDLPackBufferError(
                ErrorCode.BAD_DEVICE,
                "producer returned data on another device",
                field="DLTensor.device",
                value=str(tensor.device),
                expected=str(expected),
            )
        if copy is False and tensor.flags.is_copied:
            raise WebDLPackBufferError(
                ErrorCode.COPY_REQUIRED,
                "producer copied although copy=False",
                field="flags.is_copied",
                value=True,
                expected="False",
            )
    except BaseException:
        tensor.dispose()
        raise
    if legacy_call and copy:
        copied = tensor.copy()
        tensor.dispose()
        return copied
    return tensor


def _foreign(device: Device, field: str) -> WebDLPackDeviceError:
    """``BAD_DEVICE`` for data on a device webdlpack cannot serve (CUDA, ROCm, ...), naming it."""
    return WebDLPackDeviceError(
        ErrorCode.BAD_DEVICE,
        f"webdlpack cannot use {device} data (a CUDA/ROCm/... tensor, "
        "e.g. from torch, CuPy or JAX on a GPU); ask for a copy with device='cpu'",
        field=field,
        value=str(device),
        expected="cpu or webgpu:N data, or device='cpu'",
    )


def _across_devices(x: Any, source: Device | None, target: Device, copy: bool | None) -> Tensor:
    """``from_dlpack`` between the CPU and WebGPU: import zero-copy where ``x`` is, then copy to ``target``."""
    if copy is False:
        raise refuse_copy(source if source is not None else "its device", target, "device")
    local = from_dlpack(x)
    keep = False
    try:
        view = local._live()
        if view.device == target:  # the producer did not say where it was
            if not copy:
                keep = True
                return local
            return local.copy()
        moved, owner = move_view(view, target)
        return Tensor._wrap(moved, owner)
    finally:
        if not keep:
            local.dispose()
