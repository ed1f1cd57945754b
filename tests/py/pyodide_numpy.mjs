// NumPy inside Pyodide ↔ webdlpack ↔ JS, under Node with the real bridge (loadWebDLPack from js/dist).
// Loads Pyodide, installs webdlpack's wheel through loadWebDLPack, loads every wheel named on the command
// line (Pyodide's numpy), exposes `heapBuffer()` to Python, runs a Python body and prints one JSON line:
// {"ok": true, "report": ...} or {"ok": false, "error": "..."}; exit code 0 only when ok.
//   node tests/py/pyodide_numpy.mjs <repo root> <body.py> [wheel ...]
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [root, bodyPath, ...wheels] = process.argv.slice(2);
try {
  const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);
  const webdlpack = await import(pathToFileURL(join(root, "js/dist/index.js")).href);
  const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
  const wheel = readdirSync(join(root, "js/dist/python")).find((f) => f.endsWith(".whl"));
  await webdlpack.loadWebDLPack(pyodide, { wheelURL: join(root, "js/dist/python", wheel) });
  for (const file of wheels) await pyodide.loadPackage(file, { messageCallback: () => undefined });
  // Python checks that a JS view lies on the wasm memory itself.
  globalThis.webdlpackHeapBuffer = () => pyodide._module.HEAPU8.buffer;
  const report = await pyodide.runPythonAsync(readFileSync(bodyPath, "utf8"));
  console.log(JSON.stringify({ ok: true, report: JSON.parse(report) }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err?.stack ? err.stack : err) }));
  process.exit(1);
}
