"""The address-level seam used by the Pyodide <-> JS bridge.

Capsules only exist inside Python. To hand a tensor to JavaScript (or to C in
the same wasm module) the bridge needs the managed struct's *address*; to take
a tensor JS wrote into the wasm heap it needs to adopt a struct by address.
These two functions are that seam; both follow the DLPack ownership contract.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import ErrorCode, WebDLPackBufferError
from ..core.native import NATIVE
from ..tensor.tensor import Tensor
from .from_dlpack import adopt, adopt_seen, from_dlpack

__all__ = ["export_managed", "import_managed"]


def export_managed(x: Any, versioned: bool = True) -> int:
    """Export ``x`` as a new managed DLPack struct and return its address.

    Parameters
    ----------
    x : Tensor or object with ``__dlpack__``
        What to export; other DLPack producers are imported first (zero-copy).
    versioned : bool, default True
        ``DLManagedTensorVersioned`` (DLPack 1.1) or a legacy ``DLManagedTensor``.

    Returns
    -------
    int
        Address (unsigned) of the struct. The receiver must call its deleter
        exactly once; until then the memory stays alive, even if ``x`` is disposed.

    Raises
    ------
    ValueError
        ``x`` is a disposed tensor.
    BufferError
        A read-only tensor with ``versioned=False`` (legacy structs cannot say read-only).
    """
    if versioned and type(x) is Tensor:  # the exchange's common case
        exporter = x._exporter  # bound once the tensor has exported (no Python frame); None when disposed
        return exporter() if exporter is not None else x._export(True)  # _export refuses a disposed tensor
    tensor = x if isinstance(x, Tensor) else from_dlpack(x)
    view = tensor._live()
    if not versioned and view.read_only:
        raise WebDLPackBufferError(
            ErrorCode.UNSUPPORTED,
            "a read-only tensor cannot be exported as a legacy struct",
            field="versioned",
            value=False,
            expected="True",
        )
    return tensor._export(versioned)


def import_managed(address: int, versioned: bool = True) -> Tensor:
    """Take ownership of the managed DLPack struct at ``address``.

    Parameters
    ----------
    address : int
        E.g. a struct JavaScript wrote into the wasm heap. The caller gives up
        ownership: webdlpack calls the deleter once (on dispose, on collection,
        or immediately if the struct is refused).
    versioned : bool, default True
        Which struct is at ``address``.

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError, BufferError
        An invalid struct or major version (the deleter has been called).
    """
    if adopt_seen is not None:  # adopt()'s first step inline (where the native import_managed below is not bound)
        tensor = adopt_seen(address, versioned)
        if tensor is not None:
            return tensor  # type: ignore[no-any-return]
    return adopt(address, versioned)


if adopt_seen is not None and NATIVE is not None:
    # The same function in C (py/native/adopt.c), with this docstring and signature: no Python frame between a
    # caller (a C producer's address through ctypes, JS pushing an address) and the cached adopt.
    import_managed = NATIVE.import_managed_function(adopt, import_managed.__doc__, __name__)

if NATIVE is not None:
    # The same function in C (py/native/functions.c), with this docstring and signature: a Tensor that has exported
    # before goes straight to its bound exporter (the native export), with no Python frame; anything else to the above.
    export_managed = NATIVE.export_managed_function(export_managed, Tensor, __name__)
