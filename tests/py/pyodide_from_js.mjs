// from_js with the real bridge (js/dist/webdlpack.bundle.js, after `make build`) in a fresh Pyodide: from_js is the
// native module's (py/native/functions.c), and its take reaches JS's export from C through the bridge's export caller
// (a wasm-table entry given the PyObject* of a JsProxy) instead of a Python -> JS call. Checks what it takes (a JS
// Tensor, TypedArrays in and outside the heap), what it refuses with a typed error while Pyodide lives on (a JsProxy
// of a plain object, a disposed Tensor: JS throws inside the entry; a Python value that is no JsProxy: Pyodide's own
// call), and structs freed and made again at the same address with another shape and dtype. Prints one JSON line.
//   node tests/py/pyodide_from_js.mjs <repo root>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);
const webdlpack = await import(pathToFileURL(join(root, "js/dist/webdlpack.bundle.js")).href);
const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
const { host } = await webdlpack.loadWebDLPack(pyodide);

const heapBytes = (n) => {
  const at = host.malloc(n * 4) >>> 0;
  return { at, tensor: webdlpack.Tensor.wasmView(host, { data: at, dtype: "float32", shape: [n] }) };
};
const a = heapBytes(4);
a.tensor.view.set([1, 2, 3, 4]);
const b = webdlpack.Tensor.wasmView(host, { data: a.at, dtype: "int16", shape: [6] }); // another shape, dtype
const disposed = webdlpack.Tensor.fromTypedArray(new Int32Array([1]));
disposed.dispose();
const liveBefore = webdlpack.liveExportCount();
pyodide.globals.set("a", a.tensor);
pyodide.globals.set("b", b);
pyodide.globals.set("disposed", disposed);
pyodide.globals.set("outside", new Float64Array([1.25, 2.5]));
pyodide.globals.set("in_heap", new Float32Array(host.buffer, a.at, 2));
pyodide.globals.set("plain", { not: "a tensor" });
const report = JSON.parse(
  String(
    pyodide.runPython(`
import json, webdlpack
import webdlpack_js
from webdlpack.api import debug as _debug

def outcome(value):
    try:
        t = webdlpack.from_js(value)
    except webdlpack.WebDLPackError as err:
        return f"{type(err).__name__} {err.code.name} {err.field}"
    got = [t.tolist(), str(t.dtype), t.flags.is_copied]
    t.dispose()
    return got

out = {"caller": int(webdlpack_js.exportCallerIndex()) != 0, "from_js": type(webdlpack.from_js).__name__}
out["a"] = outcome(a)
out["outside"] = outcome(outside)
out["in_heap"] = outcome(in_heap)
out["plain"] = outcome(plain)          # a JsProxy: JS throws inside the export caller
out["disposed"] = outcome(disposed)    # the same, for a disposed Tensor
out["python_int"] = outcome(42)        # no JsProxy: Pyodide's call converts it and JS refuses
shapes_at = {}
for i in range(40):                    # each struct freed before the next: the same block again and again
    t = webdlpack.from_js(a if i % 2 == 0 else b)
    shapes_at.setdefault(t._owner.address, set()).add((t.shape, str(t.dtype)))
    assert t.tolist() == ([1.0, 2.0, 3.0, 4.0] if i % 2 == 0 else [0, 16256, 0, 16384, 0, 16448]), (i, t.tolist())
    t.dispose()
out["reused_with_both_shapes"] = any(len(s) == 2 for s in shapes_at.values())
out["live_imports"] = _debug.import_stats()["live"]
out["again"] = outcome(a)              # Pyodide lives on after the refusals
def call_error(call):
    try:
        call()
    except TypeError as err:
        return str(err)
    return "no error"

out["no_argument"] = call_error(lambda: webdlpack.from_js())            # the C builtin's own TypeErrors
out["unknown_keyword"] = call_error(lambda: webdlpack.from_js(a, device="cpu"))
json.dumps(out)
`),
  ),
);
report.jsLiveExports = webdlpack.liveExportCount() - liveBefore;
a.tensor.dispose();
b.dispose();
host.free(a.at);
console.log(JSON.stringify(report));
