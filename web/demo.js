// The demo page: one tensor goes Python (Pyodide) → JS → WebGPU → JS → Python.
// Every step records where the bytes are (device, pointer), how many, whether
// they were copied, and how long it took. `?auto=1` runs it on load and leaves
// the result in `window.demoResult` (scripts/demo.mjs prints it).
import * as webdlpack from "../js/dist/webdlpack.bundle.js";

const ROWS = 16;
const COLS = 16;
const $ = (sel) => document.querySelector(sel);
const stageState = (stage, state, text) => {
  const el = document.querySelector(`[data-stage="${stage}"] .state`);
  el.className = `state ${state}`;
  el.textContent = text;
};
const fmt = (values) => `[${Array.from(values.slice(0, 6), (v) => Number(v).toFixed(2)).join(", ")}, …]`;

const SHADER = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&x)) { x[id.x] = 2.0 * x[id.x] + 1.0; }
}`;

async function loadEverything() {
  const load = {};
  let t = performance.now();
  stageState("runtime", "busy", "loading…");
  const { loadPyodide } = await import("../node_modules/pyodide/pyodide.mjs");
  const pyodide = await loadPyodide({ indexURL: new URL("../node_modules/pyodide/", import.meta.url).href });
  load.runtime = performance.now() - t;
  stageState("runtime", "done", `Python ${pyodide.runPython("import sys; sys.version.split()[0]")} (${load.runtime.toFixed(0)} ms)`);

  t = performance.now();
  stageState("package", "busy", "installing…");
  const bridge = await webdlpack.loadWebDLPack(pyodide);
  load.package = performance.now() - t;
  stageState("package", "done", `webdlpack ${bridge.pythonVersion} (${load.package.toFixed(0)} ms)`);

  t = performance.now();
  stageState("device", "busy", "requesting…");
  const ctx = webdlpack.getContext();
  let info;
  try {
    info = await ctx.setup();
  } catch (err) {
    stageState("device", "failed", err.code ?? "failed");
    throw Object.assign(err, {
      advice:
        "This page needs WebGPU (navigator.gpu) in a secure context. Use a recent Chromium; headless: " +
        "--enable-unsafe-webgpu --enable-features=Vulkan --use-angle=swiftshader --use-webgpu-adapter=swiftshader. " +
        "Serve the page from http://127.0.0.1, not file://.",
    });
  }
  load.device = performance.now() - t;
  const device = ctx.getWebGPUDevice(0);
  const adapter = info.adapterInfo ?? {};
  const deviceInfo = {
    vendor: adapter.vendor ?? "?",
    architecture: adapter.architecture ?? "?",
    description: adapter.description ?? "",
    maxBufferSize: device.limits.maxBufferSize,
  };
  stageState("device", "done", `webgpu:0 ${deviceInfo.vendor} ${deviceInfo.architecture} (${load.device.toFixed(0)} ms)`);
  $("#device-panel").hidden = false;
  $("#device-info").textContent = JSON.stringify({ ...deviceInfo, features: [...device.features].sort() }, null, 2);
  return { pyodide, bridge, ctx, device, load, deviceInfo };
}

async function runExchange({ pyodide, bridge, ctx, device }) {
  const steps = [];
  const step = async (name, fn) => {
    const t0 = performance.now();
    const s = await fn();
    steps.push({ index: steps.length + 1, name, ms: performance.now() - t0, ...s });
    renderSteps(steps);
  };
  const nbytes = ROWS * COLS * 4;
  let jx, ptr, jy;

  await step("Python makes a float32 tensor (wasm heap)", () => {
    pyodide.runPython(`
import array, webdlpack
src = array.array("f", [0.25 * i for i in range(${ROWS * COLS})])
x = webdlpack.from_buffer(src, shape=(${ROWS}, ${COLS}))
`);
    const addr = Number(pyodide.runPython("x.data_ptr + x.byte_offset"));
    return { device: "cpu", pointer: `0x${addr.toString(16)}`, bytes: nbytes, copy: false,
             values: String(pyodide.runPython("str([round(v, 2) for v in src[:6]])")),
             detail: "array.array in the Pyodide heap, wrapped by webdlpack.from_buffer (no copy)" };
  });

  await step("Python → JS: webdlpack.to_js(x)", () => {
    jx = pyodide.runPython("webdlpack.to_js(x)");
    const view = jx.view;
    const same = view.buffer === pyodide._module.HEAPU8.buffer;
    return { device: "cpu", pointer: `0x${view.byteOffset.toString(16)}`, bytes: view.byteLength, copy: !same,
             values: fmt(view),
             detail: `JS Float32Array on the wasm memory itself (same buffer: ${same}), via a DLManagedTensorVersioned` };
  });

  await step("JS → WebGPU: allocWebGPU + writeBuffer (upload)", async () => {
    ptr = await ctx.allocWebGPU(nbytes, { owner: "demo" });
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, jx.view);
    jx.dispose(); // JS is done with Python's bytes: the deleter runs once
    return { device: "webgpu:0", pointer: `0x${ptr.toString(16)}`, bytes: nbytes, copy: true,
             values: "(on the GPU)",
             detail: "GPU pointer = a plain u32 that names the GPUBuffer in the page's pointer table" };
  });

  await step("WebGPU compute: x ← 2·x + 1, in place", async () => {
    const buffer = ctx.gpuPointerToBuffer(ptr);
    const pipeline = device.createComputePipeline({
      layout: "auto", compute: { module: device.createShaderModule({ code: SHADER }), entryPoint: "main" },
    });
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer, size: nbytes } }] });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(Math.ceil((ROWS * COLS) / 64));
    pass.end();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    const gpuTensor = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [ROWS, COLS] });
    const same = gpuTensor.gpuBuffer === buffer;
    gpuTensor.dispose();
    return { device: "webgpu:0", pointer: `0x${ptr.toString(16)}`, bytes: nbytes, copy: false, values: "(on the GPU)",
             detail: `shader ran on the buffer the pointer names; a DLPack webgpu tensor on it resolves to the same GPUBuffer: ${same}` };
  });

  await step("WebGPU → JS: read back into a heap tensor", async () => {
    jy = bridge.fromPython(pyodide.runPython(`y = webdlpack.empty((${ROWS}, ${COLS}), "float32"); y`));
    const staging = device.createBuffer({ size: nbytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(ctx.gpuPointerToBuffer(ptr), 0, staging, 0, nbytes);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    jy.view.set(new Float32Array(staging.getMappedRange()));
    staging.unmap();
    staging.destroy();
    ctx.freeWebGPU(ptr);
    return { device: "cpu", pointer: `0x${jy.view.byteOffset.toString(16)}`, bytes: nbytes, copy: true, values: fmt(jy.view),
             detail: "the one GPU→CPU copy: mapAsync into a tensor Python allocated in the heap; GPU pointer freed" };
  });

  let ok = false;
  await step("JS → Python: webdlpack.from_js(jy)", () => {
    pyodide.globals.set("jy", jy);
    const res = pyodide.runPython(`
r = webdlpack.from_js(jy)
expected = [2.0 * v + 1.0 for v in src]
got = [v for row in r.tolist() for v in row]
(got == expected, r.data_ptr + r.byte_offset, str(got[:6]), r.flags.is_copied)
`).toJs();
    ok = res[0] === true;
    const sameAddress = res[1] === jy.view.byteOffset;
    pyodide.runPython("r.dispose(); del r");
    jy.dispose();
    pyodide.runPython("x.dispose(); y.dispose()");
    return { device: "cpu", pointer: `0x${res[1].toString(16)}`, bytes: nbytes, copy: res[3],
             values: res[2], detail: `Python sees JS's bytes at the same address (${sameAddress}); values == 2·x + 1: ${ok}` };
  });

  const live = Number(pyodide.runPython("from webdlpack import _debug; _debug.export_stats()['live']"));
  const gpu = ctx.stats();
  const clean = live === 0 && gpu.livePointers === 0;
  const copies = steps.filter((s) => s.copy).length;
  const verdict = ok && clean
    ? `OK: values right after Python → JS → WebGPU → JS → Python; ${copies} copies (the upload and the readback, which WebGPU requires), ` +
      `no Python export and no GPU pointer left alive.`
    : `FAILED: values right: ${ok}; live Python exports ${live}; live GPU pointers ${gpu.livePointers}`;
  return { steps, ok: ok && clean, verdict };
}

function renderSteps(steps) {
  $("#steps tbody").innerHTML = steps
    .map((s) => `<tr><td>${s.index}</td><td>${s.name}<br><small>${s.detail}</small></td><td>${s.device}</td><td>${s.pointer}</td>` +
      `<td>${s.bytes}</td><td>${s.copy ? "copy" : "zero-copy"}</td><td>${s.ms.toFixed(2)} ms</td><td class="values">${s.values}</td></tr>`)
    .join("");
}

async function main() {
  let env;
  try {
    env = await loadEverything();
  } catch (err) {
    $("#error-panel").hidden = false;
    $("#error-text").textContent = `${err.message}${err.advice ? ` — ${err.advice}` : ""}`;
    window.demoResult = { error: `${err.message}${err.advice ? ` — ${err.advice}` : ""}` };
    return;
  }
  const run = async () => {
    $("#run").disabled = true;
    try {
      const result = await runExchange(env);
      $("#verdict").textContent = result.verdict;
      $("#verdict").className = result.ok ? "ok" : "bad";
      window.demoResult = { ...result, device: env.deviceInfo, load: env.load };
    } catch (err) {
      $("#verdict").textContent = `error: ${err.message}`;
      $("#verdict").className = "bad";
      window.demoResult = { error: err.message, device: env.deviceInfo, load: env.load };
    } finally {
      $("#run").disabled = false;
    }
  };
  $("#run").disabled = false;
  $("#run").addEventListener("click", run);
  if (new URLSearchParams(location.search).get("auto") === "1") await run();
}

main();
