/**
 * webdlpack — DLPack tensor exchange for the web.
 *
 * Layers, bottom up (a file imports only from its own layer or the ones
 * before it; tests/js/import-graph.test.ts checks this list, and no cycles):
 *   errors.ts     typed errors; describe-value.ts, how values read in them; dispose-symbol.ts, Symbol.dispose for the .d.ts
 *                 release.ts, the one release mechanism every holder goes through (docs/ownership.md)
 *   arguments.ts  typed checks of entry-point arguments and options bags (internal)
 *   assets.ts     the files shipped next to the JS (Python wheel, C side module)
 *   dlpack/       the DLPack data model and the codec over wasm linear memory
 *   context/      page-wide registries: the WebDLPackContext (WebGPU devices, GPU
 *                 pointer table, allocator, ledger, GPU transfers) and the Python hand-off list
 *   tensor/       the JS-side tensor: class, CPU view, GPU side, DLPack export
 *   bridge/       hand-offs to Python (Pyodide), to C libraries in wasm, and of CPU tensors to other threads
 *   adapters/     ONNX Runtime Web, Transformers.js, TensorFlow.js, LiteRT.js, TypedArray, GPUBuffer (`webdlpack/adapters`)
 *   from-python/  the JS half the Python package ships and loads itself when no page loaded it (its own entry)
 *   testing/      test support: an in-JS WasmHost (`webdlpack/testing`)
 *   conformance/  the Web DLPack v1 conformance kit (`webdlpack/conformance`, docs/spec.md)
 *   index.ts      this entry
 */
export * from "./errors.js";
export * from "./dlpack/index.js";
export * from "./context/index.js";
export * from "./tensor/index.js";
export * from "./bridge/index.js";
export * from "./assets.js";
