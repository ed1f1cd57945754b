# Runs inside Pyodide (tests/py/pyodide_smoke.mjs <root> <this file>). The exchange fast paths
# hide nothing: an adopted block seen before is reused only while every byte of it is the same, and
# deleters called through JS (webdlpack_js.callDeleter) run exactly once. Raises on any failure; the
# last expression is a JSON report.
import array
import ctypes
import json
import sys

sys.path.insert(0, "/home/pyodide")
import webdlpack as w
from pyodide.ffi import to_js as _ffi_to_js
from webdlpack.api import debug as _debug
from webdlpack.api import js_tensors as _js_tensors
from webdlpack.api import managed as _managed
from webdlpack.core.abi import DLManagedTensorVersioned
from webdlpack.exchange import adopt as _adopt
from webdlpack.exchange import owner as _owner

from js import Object

# A hand-written struct in one fixed block (no deleter): adopted again and again at the same address.
data = array.array("f", [1.0, 2.0, 3.0, 4.0])
block = (ctypes.c_uint64 * 12)()  # 64-byte struct + shape[1] + strides[1] + room
address = ctypes.addressof(block)
m = DLManagedTensorVersioned.from_address(address)
m.version.major, m.version.minor = 1, 1
t = m.dl_tensor
t.data = data.buffer_info()[0]
t.device.device_type, t.device.device_id = 1, 0
t.ndim = 1
t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 32, 1
shape = ctypes.c_int64.from_address(address + 64)
shape.value = 4
t.shape = ctypes.cast(address + 64, ctypes.POINTER(ctypes.c_int64))
assert type(_managed.import_managed).__name__ == "builtin_function_or_method", "Pyodide binds the C import_managed"
first = _managed.import_managed(address)
assert first.tolist() == [1.0, 2.0, 3.0, 4.0]
first.dispose()
assert address in _adopt._SEEN, "the block was remembered"
again = _managed.import_managed(address)
assert again.shape == (4,) and again.tolist() == [1.0, 2.0, 3.0, 4.0]
again.dispose()
shape.value = 2  # a changed byte in the shape array (not in the struct): read again, not the cached view
assert _managed.import_managed(address).tolist() == [1.0, 2.0]
t.dtype.code = 0  # int32 now
assert _managed.import_managed(address).tolist() == [1065353216, 1073741824]
shape.value = -1  # invalid now: the full check's typed error
try:
    _managed.import_managed(address)
    raise AssertionError("a negative extent was accepted from the cache")
except w.WebDLPackValueError as err:
    assert err.code == w.ErrorCode.BAD_SHAPE and err.field == "DLTensor.shape[0]", err
shape.value = 4
t.dtype.code = 2
assert _managed.import_managed(address).tolist() == [1.0, 2.0, 3.0, 4.0]

# Deleters go through JS where the bridge has callDeleter, and run exactly once.
assert _owner.deleter_caller() is not None
src = w.from_buffer(array.array("i", [5, 6, 7]))
before = _debug.export_stats()
for _ in range(50):
    x = _managed.import_managed(
        _managed.export_managed(src)
    )  # Python's own export, adopted: the same address each time
    assert x.tolist() == [5, 6, 7]
    x.dispose()
after = _debug.export_stats()
assert after["live"] == before["live"] and after["unknown_deletes"] == 0, (before, after)
assert after["created"] - before["created"] == 50
imports = _debug.import_stats()
assert imports["live"] == 0, imports

# from_js's common case (the native take: JS's export, then the cached adopt in C) sees every change too.
# The stand-in bridge's exportVersioned hands back the struct at the JS object's `address`.


assert _js_tensors._take is not _js_tensors._take_in_python, "Pyodide binds the native take"
handle = _ffi_to_js({"address": address}, dict_converter=Object.fromEntries)
for extent, values in ((4, [1.0, 2.0, 3.0, 4.0]), (2, [1.0, 2.0]), (4, [1.0, 2.0, 3.0, 4.0])):
    shape.value = extent  # the same block, its shape changed between two hand-overs
    for _ in range(3):  # the first of each is the full check, the next ones the cache
        got = w.from_js(handle)
        assert got.tolist() == values, (extent, got.tolist())
        got.dispose()
with w.scope():
    scoped = w.from_js(handle)  # made by C: the open scope still gets it
    kept = w.keep(w.from_js(handle))
assert scoped.disposed and not kept.disposed
kept.dispose()
round_trips = _debug.export_stats()
for _ in range(50):
    x = w.from_js(w.to_js(src))  # Python's own export through the stand-in JS and back
    assert x.tolist() == [5, 6, 7]
    x.dispose()
assert _debug.export_stats()["live"] == round_trips["live"] and _debug.import_stats()["live"] == 0
assert _debug.export_stats()["unknown_deletes"] == 0

json.dumps({"seen": len(_adopt._SEEN), "exports": after, "imports": imports})
