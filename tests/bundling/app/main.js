// A tiny app that uses webdlpack the way an installed user would: `import ... from "webdlpack"` and
// `import { loadPyodide } from "pyodide"`, bundled by esbuild, Vite and webpack with the recipes of
// docs/bundlers.md (tests/bundling/build-apps.mjs). It calls loadWebDLPack(pyodide) and
// loadWebDLPackC(pyodide) with NO options: both must find the wheel and the side module on their own.
import { loadPyodide } from "pyodide";
import { getContext, loadAssetBytes, loadWebDLPack, loadWebDLPackC } from "webdlpack";

/** Run in the page: Pyodide (its files at indexURL), webdlpack's Python package and C library. */
export async function run(indexURL) {
  const info = await getContext().setup();
  const pyodide = await loadPyodide({ indexURL });
  const bridge = await loadWebDLPack(pyodide);
  const values = pyodide
    .runPython(`
import array, webdlpack
x = webdlpack.from_buffer(array.array("f", [1.0, 2.0, 3.0]))
t = webdlpack.to_js(x)
out = list(t.view)
t.dispose()
out
`)
    .toJs();
  const clib = await loadWebDLPackC(pyodide);
  const wheel = await loadAssetBytes("wheel");
  const sideModule = await loadAssetBytes("clib");
  return {
    adapter: info.adapterInfo?.architecture ?? "",
    pythonVersion: bridge.pythonVersion,
    values: Array.from(values),
    clibVersion: clib.version,
    wheelSource: wheel.source,
    clibSource: sideModule.source,
  };
}

globalThis.runBundledApp = run;
