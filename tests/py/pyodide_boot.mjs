// The Python package brings up its own JS half (py/webdlpack/bridge/boot.py) in a Pyodide under Node where no
// page called loadWebDLPack: the real wheel is unpacked into site-packages and nothing registers webdlpack_js.
// Node has no JSPI and no WebGPU, so `import webdlpack` cannot wait, `await webdlpack.init()` loads the JS half,
// and GPU work fails with the reason. With "joined", a copy of webdlpack's JS (js/dist) made the realm's context
// first, and the package's copy must join it. Prints one JSON line: {"ok": true, ...} or {"ok": false, "error"}.
//   node tests/py/pyodide_boot.mjs <repo root> <wheel> <python body file> [joined]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [root, wheel, bodyFile, mode] = process.argv.slice(2);
try {
  let pageContext = null;
  if (mode === "joined") {
    const { getContext } = await import(pathToFileURL(join(root, "js/dist/index.js")).href);
    pageContext = getContext();
  }
  const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);
  const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
  pyodide.globals.set("wheel_bytes", new Uint8Array(readFileSync(wheel)));
  pyodide.runPython(
    "import io, sysconfig, zipfile\nzipfile.ZipFile(io.BytesIO(wheel_bytes.to_py())).extractall(sysconfig.get_path('purelib'))",
  );
  const report = JSON.parse(await pyodide.runPythonAsync(readFileSync(bodyFile, "utf8")));
  if (pageContext !== null) {
    const record = globalThis[Symbol.for("webdlpack.context")];
    report.sameContextObject = record.context === pageContext;
  }
  console.log(JSON.stringify({ ok: true, ...report }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err?.stack ? err.stack : err) }));
  process.exit(1);
}
