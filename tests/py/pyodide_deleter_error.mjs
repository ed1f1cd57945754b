// A deleter that throws in JS, in a fresh Pyodide with the real bridge (js/dist/webdlpack.bundle.js, after
// `make build`), called twice: by the FIRST release of this Python (through owner.py's fallback caller, which
// finds the bridge and sets JS's try/catch caller in the native module) and by a second one (through that JS
// caller directly). Each time Python must get the JS error typed, and Pyodide must live on (a JS exception
// unwinding through CPython's frames is a fatal error). Prints one JSON line.
//   node tests/py/pyodide_deleter_error.mjs <repo root>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);
const webdlpack = await import(pathToFileURL(join(root, "js/dist/webdlpack.bundle.js")).href);
const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
const { host } = await webdlpack.loadWebDLPack(pyodide);
const throwing = host.addFunction(() => {
  calls++;
  throw new Error("deleter boom");
});
let calls = 0;
const messages = [];
let released = 0;
for (let round = 0; round < 2; round++) {
  const t = webdlpack.Tensor.fromTypedArray(new Int32Array([4, 5, 6]));
  const address = t.toManaged(host);
  const live = webdlpack.liveExportCount();
  const view = new DataView(host.buffer);
  const realDeleter = view.getUint32(address + 12, true); // DLManagedTensorVersioned.deleter
  view.setUint32(address + 12, throwing, true);
  pyodide.globals.set("addr", address);
  messages.push(
    String(
      pyodide.runPython(`
from webdlpack.api import managed as _exchange
from webdlpack.core.native import NATIVE
from webdlpack.exchange import owner as _owner
x = _exchange.import_managed(addr)
try:
    x._owner.release()
    msg = "no error"
except Exception as e:
    msg = f"{type(e).__name__}: {e}"
x.dispose()
f"{_owner._via_js is NATIVE.call_deleter} {msg}"`),
    ),
  );
  host.callVoidPointer(realDeleter, address); // the struct's own deleter, once
  released += live - webdlpack.liveExportCount();
  t.dispose();
}
host.removeFunction(throwing);
const again = Number(
  pyodide.runPython(`
import webdlpack
j = webdlpack.to_js(webdlpack.zeros((5,), "float32"))
y = webdlpack.from_js(j)
n = y.nbytes; y.dispose(); j.dispose(); n`),
);
console.log(JSON.stringify({ messages, calls, released, again }));
