// Load the webdlpack Python package into Pyodide under Node and run
// tests/py/pyodide_smoke_body.py there. Prints one JSON line: {"ok": true, ...}
// or {"ok": false, "error": "..."}; exit code 0 only when ok.
//   node tests/py/pyodide_smoke.mjs <repo root> [<body file, default tests/py/pyodide_smoke_body.py>]
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2] ?? process.cwd();
const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);

try {
  const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
  // Copy the package tree (its layer subpackages included) into Pyodide's FS, with what the wheel ships
  // besides the sources: the native libraries built for wasm32 (py/webdlpack/_native/*.emscripten-wasm32.so).
  const copyTree = (from, to) => {
    pyodide.FS.mkdirTree(to);
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name !== "__pycache__") {
        copyTree(join(from, entry.name), `${to}/${entry.name}`);
      } else if (
        entry.name.endsWith(".py") ||
        entry.name === "py.typed" ||
        entry.name.endsWith(".emscripten-wasm32.so")
      ) {
        pyodide.FS.writeFile(`${to}/${entry.name}`, readFileSync(join(from, entry.name)));
      }
    }
  };
  copyTree(join(root, "py/webdlpack"), "/home/pyodide/webdlpack");
  // Expose the wasm heap so the Python body can check that a tensor's
  // data_ptr is an offset into the memory JavaScript sees.
  globalThis.webdlpackSmokeHeapByte = (addr) => pyodide._module.HEAPU8[addr >>> 0];
  // A stand-in for the JS bridge's module: it only carries the address, so
  // to_js -> from_js hands the same managed struct back to Python.
  pyodide.registerJsModule("webdlpack_js", {
    importManaged: (address, versioned) => ({ address: address >>> 0, versioned }),
    importVersioned: (address) => ({ address: address >>> 0, versioned: true }),
    exportManaged: (jsTensor) => jsTensor.address,
    exportVersioned: (jsTensor) => jsTensor.address,
    // What the real bridge does for Python's ManagedOwner: call a deleter's function-table entry from JS.
    callDeleter: (index, address) => {
      const m = pyodide._module;
      (m.getWasmTableEntry ? m.getWasmTableEntry(index >>> 0) : m.wasmTable.get(index >>> 0))(address >>> 0);
    },
  });
  const body = readFileSync(process.argv[3] ?? join(root, "tests/py/pyodide_smoke_body.py"), "utf8");
  const result = await pyodide.runPythonAsync(body);
  const report = JSON.parse(result);
  console.log(JSON.stringify({ ok: true, ...report }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err?.stack ? err.stack : err) }));
  process.exit(1);
}
