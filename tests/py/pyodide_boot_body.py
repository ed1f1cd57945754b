# Run by tests/py/pyodide_boot.mjs in Pyodide under Node (no JSPI, no WebGPU), the real wheel installed and no
# webdlpack_js registered by any page. Returns what it saw, as JSON, for tests/py/test_boot.py to check.
import array
import json

import webdlpack


def error_of(fn):
    try:
        fn()
    except webdlpack.WebDLPackError as e:
        return {"type": type(e).__name__, "code": e.code.name, "message": str(e), "field": e.field}
    return None


report = {"after_import": webdlpack.js_half_status()}
x = webdlpack.from_buffer(array.array("f", [1.5, -2.0, 3.25]))
report["to_js_before_init"] = error_of(lambda: webdlpack.to_js(x))
report["gpu_before_init"] = error_of(lambda: webdlpack.zeros((4,), "float32", device="webgpu:0"))
try:
    await webdlpack.init()
    report["init"] = None
except webdlpack.WebDLPackError as e:
    report["init"] = {"type": type(e).__name__, "code": e.code.name, "message": str(e)}
report["after_init"] = webdlpack.js_half_status()
jt = webdlpack.to_js(x)  # the CPU hand-over works without a GPU
back = webdlpack.from_js(jt)
report["cpu_round_trip"] = {
    "values": list(jt.view.to_py()),
    "same_address": back.data_ptr == x.data_ptr and int(jt.data) == x.data_ptr,
}
jt.dispose()
report["gpu_after_init"] = error_of(lambda: webdlpack.zeros((4,), "float32", device="webgpu:0"))
report["ort_run"] = error_of(lambda: webdlpack.frameworks.ort.session_options(None))
json.dumps(report)
