// TF.js core + its WebGPU backend as one ES module, for module Workers: a worker has no import map, and the
// backend imports the bare name "@tensorflow/tfjs-core". `make build` bundles this file (esbuild) into
// build/web/tfjs-webgpu.js; the demo's worker and the worker test import that.
export * as tf from "@tensorflow/tfjs-core";
export { WebGPUBackend } from "@tensorflow/tfjs-backend-webgpu";
