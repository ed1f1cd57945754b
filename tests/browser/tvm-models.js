// The TVM test models (build/tvm/models/test_models.wasm, build/tvm/inplace/inplace_model.wasm, made by
// scripts/tvm/build.sh) in a new tvmjs instance, for pages and workers. `tvmjs` is the global
// @mlc-ai/web-runtime's lib/index.js defines.

/** Where build.sh leaves the models (a link to the cache folder of the apache-tvm version). */
export const TVM_MODELS_URL = "/build/tvm/models/test_models.wasm";
/** The in-place model (`add_one_inplace`, R.call_tir_inplace; scripts/tvm/make_inplace_model.py), built apart. */
export const TVM_INPLACE_URL = "/build/tvm/inplace/inplace_model.wasm";

/** A new tvmjs Instance of the test models (WebGPU not set up yet: bind it to a device first). */
export async function loadTvmModels(tvmjs, url = TVM_MODELS_URL) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} (run scripts/tvm/build.sh)`);
  return tvmjs.instantiate(await response.arrayBuffer(), tvmjs.createPolyfillWASI(), () => {});
}

/** The models' Relax VM on tvmjs's WebGPU device, outside any scope (dispose it when done). */
export function createTvmVm(tvm) {
  return tvm.withNewScope(() => tvm.detachFromCurrentScope(tvm.createVirtualMachine(tvm.webgpu())));
}

/**
 * What tvmjs itself holds on the device, read from its own WebGPU context (not from webdlpack): bytes of its
 * buffer table less `lent` (buffers webdlpack lent it), of its uniform pool and of its idle read staging, and
 * its own count of its table (`currAllocatedBytes`).
 */
export function tvmHoldings(tvm, lent = new Set()) {
  const gpu = tvm.lib.webGPUContext;
  const own = gpu.bufferTable.filter((b) => b !== undefined && !lent.has(b));
  const sum = (list) => list.reduce((n, b) => n + b.size, 0);
  const table = sum(own);
  const uniform = sum(gpu.uniformBufferPool);
  const staging = sum(gpu.readStagingBufferPool.map((e) => e.buffer));
  return { table, uniform, staging, held: table + uniform + staging, allocated: gpu.currAllocatedBytes };
}
