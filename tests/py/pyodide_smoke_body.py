# Runs inside Pyodide (see pyodide_smoke.mjs). Raises on any failure; the last
# expression is a JSON report for the pytest wrapper.
import array
import gc
import json
import sys

sys.path.insert(0, "/home/pyodide")
import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.api import managed as _exchange
from webdlpack.core import host as _host
from webdlpack.core import raw as _raw

from js import webdlpackSmokeHeapByte

assert _host.IS_PYODIDE and _host.POINTER_SIZE == 4, (_host.HOST_NAME, _host.POINTER_SIZE)
# the struct-module reader agrees with the wasm32 layout
assert _raw.MANAGED_VERSIONED.size == 64 and _raw.MANAGED_LEGACY.size == 48
lay = w.layout()
assert lay["DLTensor"]["size"] == 40 and lay["DLTensor"]["byte_offset"] == 32, lay["DLTensor"]
assert lay["DLManagedTensor"]["size"] == 48, lay["DLManagedTensor"]
assert lay["DLManagedTensorVersioned"]["size"] == 64, lay["DLManagedTensorVersioned"]
assert lay["DLManagedTensorVersioned"]["dl_tensor"] == 24, lay["DLManagedTensorVersioned"]

# export -> import through a capsule, zero-copy
src = w.from_buffer(array.array("i", [1, 2, 3, 250]))
cap = src.__dlpack__(max_version=(1, 1))
dst = w.from_capsule(cap)
assert dst.tolist() == [1, 2, 3, 250] and dst.data_ptr == src.data_ptr
assert webdlpackSmokeHeapByte(src.data_ptr + 12) == 250
assert _debug.live_exports() == 1
dst.dispose()
del cap
gc.collect()
assert _debug.live_exports() == 0, _debug.export_stats()

# the Tensor protocol end to end, strided copy, legacy capsule, unconsumed capsule
t = w.zeros((2, 3), "float64")
mv = t.memoryview()
mv[1, 2] = 7.5
u = w.from_dlpack(t, copy=True)
assert u.flags.is_copied and u.data_ptr != t.data_ptr and u.tolist() == [[0, 0, 0], [0, 0, 7.5]]
legacy = w.from_capsule(t.__dlpack__())
assert legacy.tolist() == t.tolist()
unused = t.__dlpack__(max_version=(1, 0))
del unused
half = w.from_buffer(bytearray(b"\x00\x3c\x00\xc0"), dtype="float16")
assert half.memoryview().tolist() == [1.0, -2.0] and half.tolist() == [1.0, -2.0]  # 'e' casts on 3.12+
ro = w.from_dlpack(w.from_buffer(b"\x01\x02"))
assert ro.flags.read_only and ro.memoryview().readonly

# PEP 688 (Python >= 3.12 here): memoryview(t) is t.memoryview() and holds the memory
import copy
import ctypes
import pickle
import struct

from webdlpack.core import memory as _memory

assert sys.version_info >= (3, 12), sys.version
bt = w.zeros((2, 3), "int16")
with memoryview(bt) as bmv:
    assert bmv.format == "h" and bmv.shape == (2, 3) and not bmv.readonly
    bmv[1, 2] = 5
assert bt.tolist() == [[0, 0, 0], [0, 0, 5]]
held = memoryview(bt)
bt.dispose()
held[0, 0] = 1  # still valid after dispose: the view holds the memory
assert held.tolist() == [[1, 0, 0], [0, 0, 5]]
held.release()
assert bytes(memoryview(ro)) == b"\x01\x02" and memoryview(ro).readonly
try:  # what a C consumer asking for a writable buffer does (PyBUF_WRITABLE)
    _memory._GetBuffer(ro, ctypes.byref(_memory._PyBuffer()), 1)
    raise AssertionError("a writable buffer of a read-only tensor was given")
except w.WebDLPackBufferError as err:
    assert err.code == w.ErrorCode.BAD_FLAGS and err.field == "flags", err
try:  # consumers with their own message (struct's "w*") keep it; the refusal is what matters
    struct.pack_into("B", ro, 0, 9)
    raise AssertionError("a read-only tensor was written")
except TypeError:
    pass
assert ro.tolist() == [1, 2]
assert memoryview(half).tolist() == [1.0, -2.0]
try:
    memoryview(w.zeros((2,), "bfloat16"))
    raise AssertionError("bfloat16 has no buffer format")
except w.WebDLPackBufferError as err:
    assert err.code == w.ErrorCode.UNSUPPORTED, err
# deepcopy owns new wasm memory; pickle is refused with a typed error
deep = copy.deepcopy(t)
assert deep.data_ptr != t.data_ptr and deep.tolist() == t.tolist()
deep.dispose()
try:
    pickle.dumps(t)
    raise AssertionError("a tensor was pickled")
except w.WebDLPackTypeError as err:
    assert err.field == "tensor", err

# the address seam the JS bridge uses
addr = _exchange.export_managed(t)
assert 0 < addr < 2**32
# the wheel's native exchange module (py/native/exchange.c, built for wasm32) made it and gave it its C deleter
import ctypes

from webdlpack.core.abi import DLManagedTensorVersioned
from webdlpack.core.native import NATIVE

assert NATIVE is not None and NATIVE.__file__.endswith("exchange.emscripten-wasm32.so"), NATIVE
assert ctypes.c_void_p.from_address(addr + DLManagedTensorVersioned.deleter.offset).value == NATIVE.deleter()
back = _exchange.import_managed(addr)
assert back.tolist() == t.tolist()
from webdlpack.api.js_tensors import from_js, to_js

js_tensor = to_js(t)
assert js_tensor.versioned and 0 < js_tensor.address < 2**32
again = from_js(js_tensor)
assert again.tolist() == t.tolist() and again.data_ptr == t.data_ptr
for x in (u, legacy, ro, back, half, again):
    x.dispose()
del mv
gc.collect()
stats = _debug.export_stats()
assert stats["live"] == 0 and stats["unknown_deletes"] == 0, stats
assert _debug.live_imports() == 0, _debug.import_stats()

json.dumps({"python": sys.version.split()[0], "layout": lay, "exports": stats, "native": NATIVE.__file__})
