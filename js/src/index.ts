/**
 * webdlpack — DLPack tensor exchange for the web.
 *
 * Layers, bottom up (each only imports the ones before it):
 *   errors      typed errors shared by every layer
 *   arguments   typed checks of entry-point arguments (internal, like array-input: tensor's input checks)
 *   dlpack/     the DLPack data model and the codec over wasm linear memory
 *   context/    the page-wide WebDLPackContext: WebGPU devices and the GPU pointer table
 *   tensor      the JS-side tensor (CPU view in wasm memory or a WebGPU buffer)
 *   bridge/     hand-offs to Python (Pyodide) and to C libraries in wasm
 *   adapters/   ONNX Runtime Web, TensorFlow.js, TypedArray, GPUBuffer
 */
export * from "./errors.js";
export * from "./dlpack/index.js";
export * from "./context/index.js";
export * from "./tensor.js";
export { findPythonHandoff, registerPythonHandoff, unregisterPythonHandoff, PYTHON_HANDOFFS_KEY, type PythonHandoff } from "./python-handoff.js";
export * from "./bridge/index.js";
export * from "./assets.js";
