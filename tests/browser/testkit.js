// In-page helpers for the browser specs, exposed as `window.testkit` by harness.html.
// Code inside page.evaluate runs in the page and cannot reach Node-side helpers;
// what several specs repeat there lives here. Types: `PageTestkit` in fixtures.ts.

/** `setup(cfg)` on the page's context (`window.webdlpack.getContext()`); returns it and its device 0. */
async function setup(cfg) {
  const ctx = window.webdlpack.getContext();
  await ctx.setup(cfg);
  return { ctx, device: ctx.getWebGPUDevice(0) };
}

/** The `code` of the error `fn` throws: `ok` ("no error") if it returns, `String(err)` for an untyped error. */
function codeOf(fn, ok = "no error") {
  try {
    fn();
    return ok;
  } catch (err) {
    return err?.code ?? String(err);
  }
}

/**
 * Run the garbage collector (`window.gc`: Chromium runs with --expose-gc) every
 * 10 ms, at most 30 times, until `ctx.leaks()` reports a leak.
 */
async function collectLeaks(ctx) {
  for (let i = 0; i < 30 && ctx.leaks().length === 0; i++) {
    window.gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `{code, message, field, value}` of the error `fn` throws or its promise rejects
 * with (`code` is `String(err)` for an untyped error, `field` "" when absent);
 * `{code: "no error", message: "", field: "", value: undefined}` when it succeeds.
 */
async function failure(fn) {
  try {
    await fn();
    return { code: "no error", message: "", field: "", value: undefined };
  } catch (err) {
    return {
      code: err?.code ?? String(err),
      message: String(err?.message),
      field: err?.field ?? "",
      value: err?.value,
    };
  }
}

/**
 * Bytes `[offset, offset + size)` of `buffer`, copied into a MAP_READ staging
 * buffer after all work submitted so far, mapped, copied out; the staging buffer is destroyed.
 */
async function readBuffer(device, buffer, offset, size) {
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, offset, staging, 0, size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(staging.getMappedRange()).slice();
  staging.unmap();
  staging.destroy();
  return out;
}

/**
 * Submit one compute pass: `pipeline` (or a pipeline made from WGSL source with
 * entry point `main`) with `resource` (a GPUBufferBinding) at group 0, binding 0,
 * over `workgroups` workgroups. Returns the pipeline, to dispatch it again.
 */
function dispatch(device, pipelineOrCode, resource, workgroups) {
  const pipeline =
    typeof pipelineOrCode === "string"
      ? device.createComputePipeline({
          layout: "auto",
          compute: { module: device.createShaderModule({ code: pipelineOrCode }), entryPoint: "main" },
        })
      : pipelineOrCode;
  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource }],
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(workgroups);
  pass.end();
  device.queue.submit([encoder.finish()]);
  return pipeline;
}

/**
 * A float32 WebGPU tensor of `values` on `ctx`'s device 0 (shape `shape`), over a pointer of its own that its
 * dispose frees; `readOnly` marks it READ_ONLY.
 */
async function gpuTensor(ctx, values, shape, { readOnly = false } = {}) {
  const ptr = await ctx.allocWebGPUChecked(values.length * 4);
  ctx.getWebGPUDevice(0).queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, Float32Array.from(values));
  return window.webdlpack.Tensor.webgpu({
    pointer: ptr,
    deviceId: 0,
    dtype: "float32",
    shape,
    readOnly,
    onRelease: () => ctx.freeWebGPU(ptr),
  });
}

/** Whether `buffer` is destroyed: a zero-length write to it on `device` reports a validation error. */
async function isDestroyed(device, buffer) {
  device.pushErrorScope("validation");
  device.queue.writeBuffer(buffer, 0, new Float32Array(1));
  return (await device.popErrorScope()) !== null;
}

/**
 * Dispose `tensor` (a holder of a framework's buffer `buffer`): what it threw ("nothing" when nothing), the bytes
 * `owner`'s row of `ctx.memory()` lost, and whether the buffer is destroyed after.
 */
async function disposeHolder(ctx, tensor, buffer, owner) {
  const bytes = () => ctx.memory().owners.find((o) => o.owner === owner)?.bytes ?? 0;
  const before = bytes();
  let thrown = "nothing";
  try {
    tensor.dispose();
  } catch (e) {
    thrown = String(e);
  }
  return { thrown, freed: before - bytes(), destroyed: await isDestroyed(ctx.getWebGPUDevice(0), buffer) };
}

/**
 * The adapter pages' common start (adapters.html, frameworks.html): ONNX Runtime Web with its wasm from local
 * files and one thread, TF.js core and its WebGPU backend, as `window.ort`, `window.tf`, `window.WebGPUBackend`;
 * with `?pyodide=1` also Pyodide (about 2 s) with webdlpack's Python package (`window.pyodide`, `window.py`).
 */
export async function startAdapterPage(webdlpack, { ort, tf, tfwebgpu }) {
  ort.env.wasm.wasmPaths = "/node_modules/onnxruntime-web/dist/";
  ort.env.wasm.numThreads = 1;
  Object.assign(window, { ort, tf, WebGPUBackend: tfwebgpu.WebGPUBackend });
  if (new URLSearchParams(location.search).get("pyodide") === "1") {
    const { loadPyodide } = await import("/node_modules/pyodide/pyodide.mjs");
    window.pyodide = await loadPyodide({ indexURL: "/node_modules/pyodide/" });
    window.py = await webdlpack.loadWebDLPack(window.pyodide);
  }
}

export const testkit = Object.freeze({
  setup,
  codeOf,
  collectLeaks,
  failure,
  readBuffer,
  dispatch,
  gpuTensor,
  isDestroyed,
  disposeHolder,
});
