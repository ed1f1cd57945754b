// Load Pyodide and webdlpack from local files (no CDN), then run python_in_pyodide.py (or `file`).
// Needs an import map naming "pyodide" and "webdlpack" (tests/browser/examples.html has one).
import { loadPyodide } from "pyodide";
import { getContext, loadWebDLPack } from "webdlpack";

/** Run the Python example in a new Pyodide; resolves to what its last line gives, as JS. */
export async function run({ indexURL = "/node_modules/pyodide/", file = "./python_in_pyodide.py" } = {}) {
  await getContext().setup(); // the page's one WebGPU device (for webgpu:0)
  const pyodide = await loadPyodide({ indexURL });
  await loadWebDLPack(pyodide); // installs the wheel shipped in js/dist/python/
  const code = await (await fetch(new URL(file, import.meta.url))).text();
  const result = await pyodide.runPythonAsync(code); // a failed assert rejects with its PythonError
  const values = result.toJs();
  result.destroy();
  return values;
}
