# NumPy inside Pyodide ↔ webdlpack ↔ JS, zero-copy. Run by tests/py/pyodide_numpy.mjs (real bridge, Pyodide's
# numpy loaded) from tests/py/test_pyodide_numpy.py. Every check is an assert; the last line is a JSON report.
import gc
import json

import numpy as np
import webdlpack
from webdlpack.api import debug as _debug

import js

report = {"numpy": np.__version__}

# np.from_dlpack(webdlpack tensor) and webdlpack.from_dlpack(ndarray) share memory.
t = webdlpack.zeros((3, 4), "float32")
a = np.from_dlpack(t)
a[1, 2] = 7.5
assert a.ctypes.data == t.data_ptr + t.byte_offset
assert t.tolist()[1][2] == 7.5
b = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]  # strided
u = webdlpack.from_dlpack(b)
assert u.data_ptr + u.byte_offset == b.ctypes.data
assert list(u.strides) == [4, 2] and u.tolist() == [[0, 2], [4, 6], [8, 10]]
del a, u, t, b

# to_js(ndarray): the JS view is the array's bytes in the wasm heap; JS writes, NumPy sees.
arr = np.linspace(0, 1, 8, dtype=np.float32)
jt = webdlpack.to_js(arr)
assert jt.view.buffer == js.webdlpackHeapBuffer()
assert jt.view.byteOffset == arr.ctypes.data and jt.view.length == 8
jt.view[3] = -1
assert float(arr[3]) == -1.0
jt.dispose()
del jt, arr

# from_js of a JS heap tensor → np.from_dlpack: same bytes, no copy.
jt = webdlpack.to_js(webdlpack.zeros((5,), "int32"))
jt.view.set(js.Array.of(1, 2, 3, 4, 5))
t = webdlpack.from_js(jt)
a = np.from_dlpack(t)
assert a.tolist() == [1, 2, 3, 4, 5]
assert int(a.ctypes.data) == jt.view.byteOffset and not t.flags.is_copied
del a
t.dispose()
jt.dispose()
del jt, t

# Read-only both ways; every deleter runs exactly once.
before, imports = _debug.export_stats(), _debug.live_imports()
ro = webdlpack.from_buffer(b"\x01\x02\x03\x04")
a = np.from_dlpack(ro)
frozen = np.arange(4, dtype=np.uint8)
frozen.flags.writeable = False
u = webdlpack.from_dlpack(frozen)
assert not a.flags.writeable and u.flags.read_only
del a
u.dispose()
gc.collect()
after = _debug.export_stats()
assert after["created"] - before["created"] == 1 and after["deleted"] - before["deleted"] == 1
assert after["unknown_deletes"] == before["unknown_deletes"] and _debug.live_imports() == imports
report["checks"] = 4
json.dumps(report)
