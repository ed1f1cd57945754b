// Load the webdlpack Python package into Pyodide under Node and run
// tests/py/pyodide_smoke_body.py there. Prints one JSON line: {"ok": true, ...}
// or {"ok": false, "error": "..."}; exit code 0 only when ok.
//   node tests/py/pyodide_smoke.mjs <repo root>
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2] ?? process.cwd();
const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);

try {
  const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
  const pkgDir = join(root, "py/webdlpack");
  const dest = "/home/pyodide/webdlpack";
  pyodide.FS.mkdirTree(dest);
  for (const name of readdirSync(pkgDir)) {
    if (name.endsWith(".py") || name === "py.typed") {
      pyodide.FS.writeFile(`${dest}/${name}`, readFileSync(join(pkgDir, name)));
    }
  }
  // Expose the wasm heap so the Python body can check that a tensor's
  // data_ptr is an offset into the memory JavaScript sees.
  globalThis.webdlpackSmokeHeapByte = (addr) => pyodide._module.HEAPU8[addr >>> 0];
  // A stand-in for the JS bridge's module: it only carries the address, so
  // to_js -> from_js hands the same managed struct back to Python.
  pyodide.registerJsModule("webdlpack_js", {
    importManaged: (address, versioned) => ({ address: address >>> 0, versioned }),
    importVersioned: (address) => ({ address: address >>> 0, versioned: true }),
    exportManaged: (jsTensor) => jsTensor.address,
  });
  const body = readFileSync(join(root, "tests/py/pyodide_smoke_body.py"), "utf8");
  const result = await pyodide.runPythonAsync(body);
  const report = JSON.parse(result);
  console.log(JSON.stringify({ ok: true, ...report }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err && err.stack ? err.stack : err) }));
  process.exit(1);
}
