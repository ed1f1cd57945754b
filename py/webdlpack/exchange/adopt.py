"""Import at the view level: take ownership of a managed DLPack struct and read it into a TensorView."""

from __future__ import annotations

from ..core.abi import DLPACK_MAJOR_VERSION, DLPACK_VERSION
from ..core.bounds import check_readable
from ..core.errors import ErrorCode, WebDLPackBufferError, WebDLPackValueError
from ..core.raw import MANAGED_LEGACY, MANAGED_VERSIONED, unpack_at
from ..core.validate import read_dltensor_fields
from ..core.view import TensorView
from .owner import ManagedOwner, call_deleter

__all__ = ["adopt_view"]


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

    Raises
    ------
    WebDLPackValueError
        NULL address (nothing taken), a struct that is misaligned or not wholly
        inside memory (``INVALID_POINTER`` / ``OUT_OF_BOUNDS``: nothing is read,
        nothing taken), a major version other than 1
        (``VERSION_MISMATCH``), or an invalid field (the field is named).
    """
    address = int(address)
    if address == 0:
        raise WebDLPackValueError(ErrorCode.NULL_POINTER, "managed tensor address is NULL", field="address", value=0,
                                  expected="the address of a managed DLPack struct")
    if versioned:
        check_readable(address, MANAGED_VERSIONED.size, 8, "DLManagedTensorVersioned")
        major, minor, _ctx, deleter, flags, *fields = unpack_at(MANAGED_VERSIONED, address)
        if major != DLPACK_MAJOR_VERSION:
            call_deleter(address, versioned)
            raise WebDLPackBufferError(ErrorCode.VERSION_MISMATCH, f"DLPack {major}.{minor} tensor is not readable "
                                       f"by webdlpack (DLPack {DLPACK_VERSION[0]}.{DLPACK_VERSION[1]}); it was released",
                                       field="DLManagedTensorVersioned.version.major", value=major,
                                       expected=f"{DLPACK_MAJOR_VERSION}")
    else:
        check_readable(address, MANAGED_LEGACY.size, 8, "DLManagedTensor")
        *fields, _ctx, deleter = unpack_at(MANAGED_LEGACY, address)
        flags = 0
    owner = ManagedOwner(address, versioned, deleter)
    try:
        data, dev_type, dev_id, ndim, code, bits, lanes, shape_ptr, strides_ptr, byte_offset = fields
        view = read_dltensor_fields(data, dev_type, dev_id, ndim, code, bits, lanes, shape_ptr, strides_ptr,
                                    byte_offset, flags)
    except BaseException:
        owner.release()
        raise
    return view, owner
