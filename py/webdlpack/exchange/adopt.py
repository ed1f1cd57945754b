"""Import at the view level: take ownership of a managed DLPack struct and read it into a TensorView."""

from __future__ import annotations

from ..core.abi import DLPACK_MAJOR_VERSION, DLPACK_VERSION, FLAG_READ_ONLY
from ..core.bounds import check_readable
from ..core.errors import ErrorCode, WebDLPackBufferError, WebDLPackValueError
from ..core.host import IS_PYODIDE
from ..core.native import NATIVE
from ..core.raw import MANAGED_LEGACY, MANAGED_VERSIONED, MEMORY, unpack_at
from ..core.validate import read_dltensor_fields
from ..core.view import TensorView
from .owner import ManagedOwner, call_deleter

__all__ = ["SEEN", "SEEN_CACHE", "adopt_view"]

#: Blocks adopted before, by address: ``(versioned, nbytes, their bytes, deleter, view)``. A producer that hands
#: tensors over in a loop writes the same struct (and its shape/strides right after it) at the same address again
#: and again; the checked view depends only on those bytes and on the memory size, which never shrinks. Pyodide only:
#: there every address below the memory size stays readable; on CPython a block seen once may be unmapped since.
_FAST = IS_PYODIDE
_SEEN: dict[int, tuple[bool, int, bytes, int, TensorView]] = {}
#: The cache (the native module's adopt reads it too: py/native/adopt.c) and whether it is kept on this host.
SEEN, SEEN_CACHE = _SEEN, _FAST
_SEEN_MAX = 64
_BYTES = MEMORY.cast("B")
_INT64 = 8
#: How far after the struct its shape/strides arrays may start to be compared in one range (webdlpack's JS and
#: Python exports put them right after the struct, its C library after 16 bytes of its own).
_WINDOW = 256
#: The native module's memcmp (a memoryview slice compared with bytes costs about 0.4 µs in Pyodide).
_same_bytes = NATIVE.same_bytes if NATIVE is not None else None


def _remember(address: int, versioned: bool, fields: tuple[int, ...], deleter: int, view: TensorView) -> None:
    """Keep a checked block for :func:`adopt_view`'s fast path when its arrays follow the struct (one range)."""
    if not _FAST:
        return
    ndim, shape_ptr, strides_ptr = fields[3], fields[7] or 0, fields[8] or 0
    end = address + (MANAGED_VERSIONED if versioned else MANAGED_LEGACY).size
    if ndim:
        arrays = _INT64 * ndim
        for ptr in (shape_ptr, strides_ptr):
            if ptr and not end <= ptr <= address + _WINDOW:
                return  # an array before the struct or far after it: not one short range to compare
        end = max(end, shape_ptr + arrays, strides_ptr + arrays if strides_ptr else 0)
    nbytes = end - address
    if end > len(_BYTES):
        return
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    _SEEN[address] = (versioned, nbytes, bytes(_BYTES[address : address + nbytes]), deleter, view)


def adopt_view(address: int, versioned: bool = True) -> tuple[TensorView, ManagedOwner]:
    """Take ownership of the managed struct at ``address``; return its checked view and its owner.

    From here on the deleter runs exactly once: when the owner is released or
    collected, or right away if the struct is refused (wrong major version,
    invalid fields).

    Parameters
    ----------
    address : int
        Address of a ``DLManagedTensorVersioned`` (or a legacy ``DLManagedTensor``).
    versioned : bool, default True
        Which of the two structs is at ``address``.

    Returns
    -------
    (TensorView, ManagedOwner)
        A legacy struct's view is read-only (DLPack 0.x cannot say whether
        writing is allowed; NumPy imports it read-only too).

    Raises
    ------
    WebDLPackValueError
        NULL address (nothing taken), a struct that is misaligned or not wholly
        inside memory (``INVALID_POINTER`` / ``OUT_OF_BOUNDS``: nothing is read,
        nothing taken), or an invalid field (the field is named).
    WebDLPackBufferError
        A major version other than 1 (``VERSION_MISMATCH``; the deleter was called).
    """
    address = int(address)
    seen = _SEEN.get(address)
    if (
        seen is not None
        and seen[0] is versioned
        and (
            _same_bytes(address, seen[2]) if _same_bytes is not None else _BYTES[address : address + seen[1]] == seen[2]
        )
    ):
        # The same bytes as a block checked before (the range was inside memory then, and memory never shrinks).
        return seen[4], ManagedOwner(address, versioned, seen[3])
    if address == 0:
        raise WebDLPackValueError(
            ErrorCode.NULL_POINTER,
            "managed tensor address is NULL",
            field="address",
            value=0,
            expected="the address of a managed DLPack struct",
        )
    if versioned:
        check_readable(address, MANAGED_VERSIONED.size, 8, "DLManagedTensorVersioned")
        major, minor, _ctx, deleter, flags, *fields = unpack_at(MANAGED_VERSIONED, address)
        if major != DLPACK_MAJOR_VERSION:
            call_deleter(address, versioned)
            raise WebDLPackBufferError(
                ErrorCode.VERSION_MISMATCH,
                f"DLPack {major}.{minor} tensor is not readable "
                f"by webdlpack (DLPack {DLPACK_VERSION[0]}.{DLPACK_VERSION[1]}); it was released",
                field="DLManagedTensorVersioned.version.major",
                value=major,
                expected=f"{DLPACK_MAJOR_VERSION}",
            )
    else:
        check_readable(address, MANAGED_LEGACY.size, 8, "DLManagedTensor")
        *fields, _ctx, deleter = unpack_at(MANAGED_LEGACY, address)
        # A legacy struct cannot say whether its producer lets us write: read-only, as NumPy does
        # "for backwards compatibility" (and re-exported read-only).
        flags = FLAG_READ_ONLY
    owner = ManagedOwner(address, versioned, deleter)
    try:
        data, dev_type, dev_id, ndim, code, bits, lanes, shape_ptr, strides_ptr, byte_offset = fields
        view = read_dltensor_fields(
            data, dev_type, dev_id, ndim, code, bits, lanes, shape_ptr, strides_ptr, byte_offset, flags
        )
    except BaseException:
        owner.release()
        raise
    _remember(address, versioned, tuple(fields), int(deleter or 0), view)
    return view, owner
