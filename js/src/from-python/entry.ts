/**
 * The ES module the Python package ships (py/webdlpack/_js/, built by `make` with esbuild from this entry, one
 * self-contained file) and imports itself when no page loaded webdlpack's JS for its Pyodide:
 *
 *   attach.ts      join the realm's context, register `webdlpack_js`; set up device 0
 *   frameworks.ts  ORT-web and TF.js on the shared device, for `webdlpack.frameworks`
 */
export { attachPython, setupDevice, type AttachReport } from "./attach.js";
