// A deleter that throws in JS, called by the FIRST release in a fresh Pyodide with the real bridge
// (js/dist/webdlpack.bundle.js, after `make build`): Python must get the JS error typed, and Pyodide must
// live on (a JS exception unwinding through CPython's frames is a fatal error). Prints one JSON line.
//   node tests/py/pyodide_deleter_error.mjs <repo root>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);
const webdlpack = await import(pathToFileURL(join(root, "js/dist/webdlpack.bundle.js")).href);
const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
const { host } = await webdlpack.loadWebDLPack(pyodide);
const t = webdlpack.Tensor.fromTypedArray(new Int32Array([4, 5, 6]));
const address = t.toManaged(host);
const live = webdlpack.liveExportCount();
const view = new DataView(host.buffer);
const realDeleter = view.getUint32(address + 12, true); // DLManagedTensorVersioned.deleter
let calls = 0;
const throwing = host.addFunction(() => { calls++; throw new Error("deleter boom"); });
view.setUint32(address + 12, throwing, true);
pyodide.globals.set("addr", address);
const message = String(pyodide.runPython(`
from webdlpack.api import managed as _exchange
x = _exchange.import_managed(addr)
try:
    x._owner.release()   # the first deleter call of this Python: it goes through the fallback, then JS
    msg = "no error"
except Exception as e:
    msg = f"{type(e).__name__}: {e}"
x.dispose()
msg`));
host.callVoidPointer(realDeleter, address); // the struct's own deleter, once
host.removeFunction(throwing);
const again = Number(pyodide.runPython(`
import webdlpack
j = webdlpack.to_js(webdlpack.zeros((5,), "float32"))
y = webdlpack.from_js(j)
n = y.nbytes; y.dispose(); j.dispose(); n`));
t.dispose();
console.log(JSON.stringify({ message, calls, released: live - webdlpack.liveExportCount(), again }));
