"""Element types: the :class:`DType` value type and its DLPack encoding.

A :class:`DType` is the Python face of ``DLDataType`` (code, bits, lanes) with
a readable name such as ``"float32"``. This module also knows which
``(code, bits)`` pairs are valid, the struct-module format of each type (for
``memoryview`` and ``tolist``), and how to read a PEP 3118 buffer format.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

from .abi import DLDataTypeCode as C
from .errors import ErrorCode, WebDLPackTypeError, WebDLPackValueError

__all__ = ["DType", "dtype", "dtype_from_format", "check_dtype", "ALL_DTYPES"]

# Named scalar types: name -> (code, bits).
_NAMED: dict[str, tuple[int, int]] = {
    "bool": (C.kDLBool, 8),
    "int8": (C.kDLInt, 8),
    "int16": (C.kDLInt, 16),
    "int32": (C.kDLInt, 32),
    "int64": (C.kDLInt, 64),
    "uint8": (C.kDLUInt, 8),
    "uint16": (C.kDLUInt, 16),
    "uint32": (C.kDLUInt, 32),
    "uint64": (C.kDLUInt, 64),
    "float16": (C.kDLFloat, 16),
    "float32": (C.kDLFloat, 32),
    "float64": (C.kDLFloat, 64),
    "bfloat16": (C.kDLBfloat, 16),
    "complex64": (C.kDLComplex, 64),
    "complex128": (C.kDLComplex, 128),
    "float8_e3m4": (C.kDLFloat8_e3m4, 8),
    "float8_e4m3": (C.kDLFloat8_e4m3, 8),
    "float8_e4m3b11fnuz": (C.kDLFloat8_e4m3b11fnuz, 8),
    "float8_e4m3fn": (C.kDLFloat8_e4m3fn, 8),
    "float8_e4m3fnuz": (C.kDLFloat8_e4m3fnuz, 8),
    "float8_e5m2": (C.kDLFloat8_e5m2, 8),
    "float8_e5m2fnuz": (C.kDLFloat8_e5m2fnuz, 8),
    "float8_e8m0fnu": (C.kDLFloat8_e8m0fnu, 8),
    "float6_e2m3fn": (C.kDLFloat6_e2m3fn, 6),
    "float6_e3m2fn": (C.kDLFloat6_e3m2fn, 6),
    "float4_e2m1fn": (C.kDLFloat4_e2m1fn, 4),
}
_BY_CODE_BITS: dict[tuple[int, int], str] = {v: k for k, v in _NAMED.items()}

# Valid bit widths for each code; the same table as the JS codec (js/src/dlpack/dtype.ts).
_VALID_BITS: dict[int, tuple[int, ...]] = {
    C.kDLInt: (1, 2, 4, 8, 16, 32, 64),
    C.kDLUInt: (1, 2, 4, 8, 16, 32, 64),
    C.kDLFloat: (16, 32, 64),
    C.kDLOpaqueHandle: (8, 16, 32, 64),
    C.kDLBfloat: (16,),
    C.kDLComplex: (32, 64, 128),
    C.kDLBool: (8,),
}
for _code in range(C.kDLFloat8_e3m4, C.kDLFloat8_e8m0fnu + 1):
    _VALID_BITS[_code] = (8,)
_VALID_BITS[C.kDLFloat6_e2m3fn] = (6,)
_VALID_BITS[C.kDLFloat6_e3m2fn] = (6,)
_VALID_BITS[C.kDLFloat4_e2m1fn] = (4,)

# Name prefixes of the variable-width codes (``int4``, ``complex32``, ``handle64``), as in JS.
_PREFIXES: dict[int, str] = {
    C.kDLInt: "int",
    C.kDLUInt: "uint",
    C.kDLFloat: "float",
    C.kDLOpaqueHandle: "handle",
    C.kDLComplex: "complex",
}

# struct-module format of one element (complex: format of each of the two parts).
_FORMATS: dict[str, str] = {
    "bool": "?",
    "int8": "b",
    "uint8": "B",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "uint64": "Q",
    "float16": "e",
    "float32": "f",
    "float64": "d",
    "complex64": "f",
    "complex128": "d",
}


def check_dtype(code: int, bits: int, lanes: int, field: str = "DLTensor.dtype") -> None:
    """Raise unless ``(code, bits, lanes)`` is a valid DLPack 1.1 element type.

    Parameters
    ----------
    code, bits, lanes : int
        The three ``DLDataType`` fields.
    field : str
        Prefix used in the error's ``field`` (e.g. ``"DLTensor.dtype"``).

    Raises
    ------
    WebDLPackValueError
        Code ``BAD_DTYPE`` naming ``<field>.code``, ``.bits`` or ``.lanes``.
    """
    if code not in _VALID_BITS:
        raise WebDLPackValueError(
            ErrorCode.BAD_DTYPE,
            "unknown dtype code",
            field=f"{field}.code",
            value=code,
            expected=f"a DLDataTypeCode in 0..{int(C.kDLFloat4_e2m1fn)}",
        )
    if bits not in _VALID_BITS[code]:
        raise WebDLPackValueError(
            ErrorCode.BAD_DTYPE,
            f"bad bit width for {C(code).name}",
            field=f"{field}.bits",
            value=bits,
            expected=" or ".join(str(b) for b in _VALID_BITS[code]),
        )
    if not 1 <= lanes <= 0xFFFF:
        raise WebDLPackValueError(
            ErrorCode.BAD_DTYPE,
            "lanes out of range",
            field=f"{field}.lanes",
            value=lanes,
            expected="1 <= lanes <= 65535",
        )


@dataclasses.dataclass(frozen=True)
class DType:
    """An element type: the DLPack ``(code, bits, lanes)`` triple with a name.

    Parameters
    ----------
    code : int
        A :class:`~webdlpack.core.abi.DLDataTypeCode` value.
    bits : int
        Bits per lane (4 or 6 for the sub-byte floats).
    lanes : int, default 1
        Lanes per element (vector types); 1 for scalars.

    Notes
    -----
    Make one from a name with :func:`webdlpack.dtype` (``dtype("float32")``).
    Two DTypes are equal when their code, bits and lanes are equal.
    """

    code: int
    bits: int
    lanes: int = 1

    def __post_init__(self) -> None:
        check_dtype(self.code, self.bits, self.lanes, field="dtype")

    @property
    def name(self) -> str:
        """Readable name: ``"float32"``, ``"bool"``, ``"int4"``, ``"handle64"``; ``"float32x4"`` for 4 lanes."""
        base = _BY_CODE_BITS.get((self.code, self.bits))
        if base is None:  # variable-width codes outside the table: int4, complex32, handle64, ...
            base = f"{_PREFIXES[self.code]}{self.bits}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    @property
    def itemsize(self) -> int:
        """Bytes per element: ``bits * lanes / 8`` rounded up (1 for a padded fp4/fp6/int4)."""
        return (self.bits * self.lanes + 7) // 8

    @property
    def is_subbyte(self) -> bool:
        """True when an element is not a whole number of bytes (fp4, fp6, int4, ...)."""
        return (self.bits * self.lanes) % 8 != 0

    def storage_bytes(self, count: int, padded: bool = False) -> int:
        """Bytes ``count`` contiguous elements take (``storageBytes`` in the JS codec).

        Parameters
        ----------
        count : int
            Number of elements.
        padded : bool, default False
            ``IS_SUBBYTE_TYPE_PADDED``: a sub-byte element takes a whole byte.

        Returns
        -------
        int
            ``ceil(count * bits * lanes / 8)`` for bit-packed sub-byte elements,
            else ``count * itemsize``.
        """
        if self.is_subbyte and not padded:
            return -(-count * self.bits * self.lanes // 8)
        return count * self.itemsize

    @property
    def format(self) -> str | None:
        """The struct-module format of one element, or None when Python has none.

        Complex types return the format of one part (``"f"`` or ``"d"``); an
        element is two of them, real then imaginary.
        """
        if self.lanes != 1:
            return None
        return _FORMATS.get(self.name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"webdlpack.dtype({self.name!r})"


def dtype(spec: Any) -> DType:
    """Make a :class:`DType` from a name, a DType, or an object whose ``str()`` is a name.

    Parameters
    ----------
    spec : str or DType or object
        ``"float32"``, ``"uint8"``, ``"bool"``, ``"bfloat16"``, ``"float8_e4m3fn"``,
        ``"complex64"``, ...; a NumPy dtype works too (``str(np.dtype("f4")) == "float32"``).

    Returns
    -------
    DType

    Raises
    ------
    WebDLPackValueError
        An unknown name (code ``BAD_DTYPE``).
    WebDLPackTypeError
        ``spec`` is None.
    """
    if isinstance(spec, DType):
        return spec
    if spec is None:
        raise WebDLPackTypeError(
            ErrorCode.BAD_DTYPE,
            "dtype is required",
            field="dtype",
            value=None,
            expected="a dtype name such as 'float32'",
        )
    name = spec if isinstance(spec, str) else str(spec)
    if name not in _NAMED:
        raise WebDLPackValueError(
            ErrorCode.BAD_DTYPE,
            "unknown dtype name",
            field="dtype",
            value=spec,
            expected="one of " + ", ".join(sorted(_NAMED)),
        )
    code, bits = _NAMED[name]
    return DType(code, bits, 1)


#: Every named scalar dtype webdlpack knows.
ALL_DTYPES: tuple[DType, ...] = tuple(dtype(n) for n in _NAMED)

_FORMAT_KINDS: dict[str, str] = {
    "?": "bool",
    "b": "int",
    "B": "uint",
    "h": "int",
    "H": "uint",
    "i": "int",
    "I": "uint",
    "l": "int",
    "L": "uint",
    "q": "int",
    "Q": "uint",
    "n": "int",
    "N": "uint",
    "e": "float",
    "f": "float",
    "d": "float",
    "c": "uint",
}


def dtype_from_format(fmt: str) -> DType:
    """The :class:`DType` of a PEP 3118 buffer format such as ``"<f"``, ``"B"`` or ``"Zd"``.

    Parameters
    ----------
    fmt : str
        A memoryview ``format`` string describing one scalar element.

    Returns
    -------
    DType

    Raises
    ------
    WebDLPackValueError
        Big-endian, struct or multi-item formats (code ``BAD_DTYPE``).
    """
    body = fmt
    prefix = ""
    if body[:1] in "@=<>!":
        prefix, body = body[0], body[1:]
    if prefix in (">", "!"):
        raise WebDLPackValueError(
            ErrorCode.BAD_DTYPE,
            "big-endian buffers are not supported",
            field="format",
            value=fmt,
            expected="a little-endian or native format",
        )
    if body in ("Zf", "Zd"):
        return dtype("complex64" if body == "Zf" else "complex128")
    kind = _FORMAT_KINDS.get(body)
    if kind is None:
        raise WebDLPackValueError(
            ErrorCode.BAD_DTYPE,
            "buffer format has no DLPack dtype",
            field="format",
            value=fmt,
            expected="one of ?bBhHiIlLqQnNefd or Zf/Zd",
        )
    if kind == "bool":
        return dtype("bool")
    bits = 8 * struct.calcsize((prefix or "@") + body)
    return dtype(f"{kind}{bits}")
