"""Malformed DLPack structs for Python's importer: the spec/validation-rules.json cases and a fuzzer.

Runs on CPython and inside Pyodide (it imports only the standard library and
webdlpack). Each struct is written into a scratch buffer with ctypes, wrapped
in a capsule (``dltensor_versioned`` or ``dltensor``; deleter NULL, so a
refused struct calls nothing) and handed to ``webdlpack.from_capsule``: it must
import, or raise a ``WebDLPackError`` whose code and field the table names.

Inside Pyodide, addresses written ``END-n`` / ``END+n`` are relative to the end
of the wasm memory, so those cases check that nothing past it is read (such a
read traps and Pyodide "can no longer be used"). CPython has no such bound: a
wild pointer there is the caller's bug, so cases that need one (placement past
the end, ``END`` anywhere) run only in Pyodide (:func:`needs_memory_bound`).

Used by tests/py/test_validation_rules.py (CPython), tests/py/pyodide_corpus.mjs
(Pyodide under Node: the table, then the fuzzer; ``make fuzz`` runs it for
minutes) and tests/browser/python-malformed.spec.ts (Pyodide in Chromium).
"""

from __future__ import annotations

import ctypes
import random
import struct
import time
from typing import Any

import webdlpack

_TENSOR = "PiiiBBHPPQ"  # data, device_type, device_id, ndim, code, bits, lanes, shape, strides, byte_offset
VERSIONED = struct.Struct("@IIPPQ" + _TENSOR)  # major, minor, manager_ctx, deleter, flags, tensor
LEGACY = struct.Struct("@" + _TENSOR + "PP")  # tensor, manager_ctx, deleter
SCRATCH_BYTES = 1 << 16

_names = {n: ctypes.create_string_buffer(n) for n in (b"dltensor_versioned", b"dltensor")}
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)


def memory_end() -> int | None:
    """Bytes of wasm memory in Pyodide (it only grows); None on CPython (no bound)."""
    if not webdlpack.IS_PYODIDE:
        return None
    size = ctypes.CDLL(None).emscripten_get_heap_size
    size.restype = ctypes.c_size_t
    return int(size())


def _is_end(value: Any) -> bool:
    return isinstance(value, str) and value.replace(" ", "").startswith("END")


def needs_memory_bound(case: dict[str, Any]) -> bool:
    """True when a case is about the end of memory (or where a struct lies): Pyodide only."""
    t = case["tensor"]
    values = [t["data"], t.get("byte_offset", 0), *(t.get("shape") or []), *(t.get("strides") or [])]
    return "at" in case or any(_is_end(v) for v in values)


class Scratch:
    """A zeroed, 8-aligned buffer the structs of one case are written into."""

    def __init__(self) -> None:
        self._buf = (ctypes.c_uint64 * (SCRATCH_BYTES // 8))()
        self.base = ctypes.addressof(self._buf)

    def clear(self) -> None:
        ctypes.memset(self.base, 0, SCRATCH_BYTES)

    def holds(self, address: int, size: int) -> bool:
        return self.base <= address and address + size <= self.base + SCRATCH_BYTES

    def write(self, address: int, data: bytes) -> None:
        """Write ``data`` if it lies wholly in the scratch buffer (structs placed past memory are not written)."""
        if self.holds(address, len(data)):
            ctypes.memmove(address, data, len(data))


def _int(value: Any, end: int | None) -> int:
    """A table number: int, ``"0x.."``, decimal string, or ``END±n`` (needs ``end``)."""
    if isinstance(value, int):
        return value
    text = str(value).replace(" ", "")
    if text.startswith("END"):
        assert end is not None, "END needs a memory bound"
        return end + (int(text[3:], 0) if len(text) > 3 else 0)
    return int(text, 0)


def consume(address: int, versioned: bool) -> Any:
    """``webdlpack.from_capsule`` of a fresh capsule naming the struct at ``address``."""
    name = _names[b"dltensor_versioned" if versioned else b"dltensor"]
    return webdlpack.from_capsule(_capsule_new(address, ctypes.addressof(name), None))


def lay_out(case: dict[str, Any], table: dict[str, Any], scratch: Scratch, end: int | None) -> tuple[int, bool]:
    """Write one table case into ``scratch``; returns the managed struct's address and whether it is versioned.

    Placements below the table's ``memory_size`` are offsets into the scratch
    buffer; ``END±n`` ones are real addresses near the end of memory; larger
    ones are taken as they are. ``data`` is never read, so it keeps its value.
    """
    scratch.clear()
    limit = table["memory_size"]

    def place(key: str) -> int:
        value = case.get("at", {}).get(key, table["placement"][key])
        if _is_end(value):
            return _int(value, end)
        number = _int(value, end)
        return scratch.base + number if number < limit else number

    t = case["tensor"]
    managed = case.get("managed", {})
    versioned = not managed.get("legacy", False)
    shape = t.get("shape")
    ndim = t.get("ndim", len(shape) if shape is not None else 0)
    strides = t.get("strides")
    shape_at = place("shape") if shape is not None else 0
    strides_at = place("strides") if strides is not None else 0
    for at, values in ((shape_at, shape), (strides_at, strides)):
        if values is not None:
            padded = [_int(v, end) for v in values] + [1] * max(0, ndim - len(values))
            scratch.write(at, struct.pack(f"@{len(padded)}q", *padded))
    fields = (
        _int(t["data"], end),
        t["device"][0],
        t["device"][1],
        ndim,
        *t["dtype"],
        shape_at,
        strides_at,
        _int(t.get("byte_offset", 0), end) % (1 << 64),
    )
    address = place("managed")
    if versioned:
        major, minor = managed.get("version", [1, 1])
        scratch.write(address, VERSIONED.pack(major, minor, 0, 0, _int(managed.get("flags", 0), end), *fields))
    else:
        scratch.write(address, LEGACY.pack(*fields, 0, 0))
    return address, versioned


def check_case(case: dict[str, Any], table: dict[str, Any], scratch: Scratch, end: int | None) -> str | None:
    """None when the importer gives the case's expected outcome; else what it did instead."""
    address, versioned = lay_out(case, table, scratch, end)
    expect = case["expect"]
    try:
        tensor = consume(address, versioned)
    except webdlpack.WebDLPackError as err:
        if expect == "ok":
            return f"{case['name']}: refused: {err}"
        if err.code.name != expect["code"] or err.field != expect["field"]:
            return (
                f"{case['name']}: expected {expect['code']} {expect['field']}, got {err.code.name} {err.field}: {err}"
            )
        return None
    try:
        if expect != "ok":
            return f"{case['name']}: accepted, expected {expect['code']} {expect['field']}"
        if "nbytes" in case and tensor.nbytes != case["nbytes"]:
            return f"{case['name']}: nbytes {tensor.nbytes}, expected {case['nbytes']}"
        return None
    finally:
        tensor.dispose()


def run_table(table: dict[str, Any], *, bounded: bool) -> dict[str, Any]:
    """Every Python case of the table (``bounded``: also those needing a memory bound). Returns counts and failures."""
    end = memory_end() if bounded else None
    scratch = Scratch()
    ran, failures = 0, []
    for case in table["cases"]:
        if "py" not in case.get("only", ["py"]) or (needs_memory_bound(case) and not bounded):
            continue
        ran += 1
        problem = check_case(case, table, scratch, end)
        if problem is not None:
            failures.append(problem)
    return {"ran": ran, "failures": failures}


_EXTENTS = [0, 1, 1, 2, 3, 5, 64, 1000, 1 << 31, (1 << 53) - 1, 1 << 53, 1 << 62, -1]
_STRIDES = [0, 1, 1, 2, -1, -3, 1000, 1 << 40, (1 << 53) - 1, 1 << 53, -(1 << 63)]
_BITS = [0, 1, 2, 3, 4, 6, 8, 8, 12, 16, 16, 24, 32, 32, 64, 128, 255]
_LANES = [0, 1, 1, 1, 2, 3, 4, 16, 65535]
_OFFSETS = [0, 0, 0, 4, 12, 4096, 65536, (1 << 53) - 1, 1 << 53, (1 << 64) - 8]


def fuzz(seed: int, *, max_cases: int = 0, seconds: float = 0.0) -> dict[str, Any]:
    """Random structs (in the scratch buffer, or straddling / past the end of memory) through ``from_capsule``.

    Pyodide only (pointers past the end must be refused, not read). Each must
    import — and then, on the CPU, lie inside memory — or raise a WebDLPackError
    naming a field. Runs ``max_cases`` structs (0: no limit) or ``seconds``.
    """
    end = memory_end()
    assert end is not None, "the fuzzer needs Pyodide's memory bound"
    rng = random.Random(seed)
    scratch = Scratch()
    stats: dict[str, Any] = {"cases": 0, "accepted": 0, "refused": 0, "wrong": 0, "failures": []}
    deadline = time.monotonic() + seconds if seconds else float("inf")
    mask = (1 << 64) - 1

    def near_end() -> int:
        r = rng.randrange(4)
        return (end - rng.randrange(1, 80), end + rng.randrange(80), rng.randrange(end, 1 << 32), end - 8)[r]

    def pointer(default: int) -> int:
        r = rng.randrange(16)
        return near_end() if r == 0 else 0 if r == 1 else default

    while not max_cases or stats["cases"] < max_cases:
        if stats["cases"] % 256 == 0 and time.monotonic() >= deadline:
            break
        stats["cases"] += 1
        scratch.clear()
        versioned = rng.randrange(4) != 0
        ndim = (
            rng.randrange(5)
            if rng.randrange(16) < 12
            else rng.choice([31, 32, 33, -1, rng.randrange(-(1 << 31), 1 << 31)])
        )
        count = ndim if 0 <= ndim <= 40 else 0
        shape = [rng.choice(_EXTENTS) if rng.randrange(3) == 0 else rng.randrange(1, 5) for _ in range(count)]
        strides, step = [0] * count, 1
        row_major = rng.randrange(2) == 0
        for i in reversed(range(count)):
            strides[i] = step if row_major and rng.randrange(4) else rng.choice(_STRIDES)
            step *= shape[i] if 0 < shape[i] < 8 else 1
        shape_at = pointer(scratch.base + 1024)
        strides_at = 0 if rng.randrange(2) else pointer(scratch.base + 2048)
        for at, values in ((shape_at, shape), (strides_at, strides)):
            if values and at:
                scratch.write(
                    at, struct.pack(f"@{len(values)}q", *((v + (1 << 63)) % (1 << 64) - (1 << 63) for v in values))
                )
        r = rng.randrange(6)
        data = (
            0,
            end - rng.randrange(64),
            rng.randrange(1 << 32),
            rng.randrange(end),
            scratch.base,
            scratch.base + 4096,
        )[r]
        fields = (
            data,
            rng.choice([1, 1, 1, 15, 2, rng.randrange(20), rng.randrange(-(1 << 31), 1 << 31)]),
            rng.choice([0, 0, 0, 1, -1, rng.randrange(-(1 << 31), 1 << 31)]),
            ndim,
            rng.randrange(256) if rng.randrange(8) == 0 else rng.randrange(18),
            rng.randrange(256) if rng.randrange(4) == 0 else rng.choice(_BITS),
            rng.randrange(65536) if rng.randrange(4) == 0 else rng.choice(_LANES),
            shape_at,
            strides_at,
            (rng.randrange(1 << 64) if rng.randrange(4) == 0 else rng.choice(_OFFSETS)) & mask,
        )
        flags = rng.randrange(1 << 64) >> rng.randrange(64) if rng.randrange(8) == 0 else rng.randrange(8)
        address = near_end() if rng.randrange(16) == 0 else scratch.base + (260 if rng.randrange(32) == 0 else 256)
        if versioned:
            major = rng.randrange(3) if rng.randrange(8) == 0 else 1
            scratch.write(address, VERSIONED.pack(major, rng.randrange(4), 0, 0, flags, *fields))
        else:
            scratch.write(address, LEGACY.pack(*fields, 0, 0))
        try:
            tensor = consume(address, versioned)
        except webdlpack.WebDLPackError as err:
            stats["refused"] += 1
            if not err.field:
                _wrong(stats, f"case {stats['cases']}: error names no field: {err!r}")
            continue
        stats["accepted"] += 1
        try:
            padded = versioned and bool(flags & 4)
            if tensor.device.type == 1 and not _inside(tensor, padded, end):
                _wrong(stats, f"case {stats['cases']}: accepted a CPU tensor reaching past memory end {end}")
        finally:
            tensor.dispose()
    return stats


def _inside(tensor: Any, padded: bool, end: int) -> bool:
    """Every byte an accepted CPU tensor reaches is in [0, end): computed here, not by webdlpack."""
    shape = tensor.shape
    count = 1
    for n in shape:
        count *= n
    if count == 0:
        return True
    lo, hi = 0, count - 1
    if tensor.strides is not None:
        hi = 0
        for n, s in zip(shape, tensor.strides):
            reach = (n - 1) * s
            lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
    bits = tensor.dtype.bits * tensor.dtype.lanes
    if bits % 8 and not padded:
        lo_b, hi_b = (lo * bits) // 8, -((-(hi + 1) * bits) // 8)
    else:
        item = (bits + 7) // 8
        lo_b, hi_b = lo * item, (hi + 1) * item
    base = tensor.data_ptr + tensor.byte_offset
    return base + lo_b >= 0 and base + hi_b <= end


def _wrong(stats: dict[str, Any], why: str) -> None:
    stats["wrong"] += 1
    if len(stats["failures"]) < 10:
        stats["failures"].append(why)


def dropped_capsule_release() -> dict[str, Any]:
    """Whether a dropped unconsumed capsule freed its struct at once (C destructor loaded), and the counts."""
    from webdlpack.exchange import capsule, export

    t = webdlpack.zeros((4,), "float32")
    t.__dlpack__()  # the first export caches the tensor's struct template
    base = len(export._REGISTRY)
    c = t.__dlpack__()
    held = len(export._REGISTRY) - base
    del c
    after = len(export._REGISTRY) - base
    t.dispose()
    return {"destructor": capsule.CAPSULE_DESTRUCTOR is not None, "held": held, "after_del": after}
