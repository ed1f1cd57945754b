// The exchange the demo walks through, one timed step each:
//   Python makes a tensor → JS view → WebGPU upload → WebGPU shader → ORT-web
//   (the tensor's GPUBuffer is the model input, the output stays on the GPU) →
//   TF.js (adopts the ORT output zero-copy, one op) → read back into a Python
//   heap tensor → Python sees it (from_js) and checks every value.
// Each step says where the bytes are (device, pointer), how many, whether they
// were copied (from identity checks, not assumed) and how long it took.

const SHADER = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&x)) { x[id.x] = 2.0 * x[id.x] + 1.0; }
}`;

/** Absolute tolerance of the final check (GPU float32 math vs NumPy float32). */
export const TOLERANCE = 1e-4;

const hex = (n) => `0x${(n >>> 0).toString(16)}`;
const fmt = (values) => `[${Array.from(values.slice(0, 6), (v) => Number(v).toFixed(4)).join(", ")}, …]`;

/** Run `x ← 2·x + 1` over the f32 buffer, submitted to the device queue. */
function runShader(gpu, buffer, count) {
  const pipeline = gpu.createComputePipeline({
    layout: "auto",
    compute: { module: gpu.createShaderModule({ code: SHADER }), entryPoint: "main" },
  });
  const group = gpu.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer, size: count * 4 } }],
  });
  const enc = gpu.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(Math.ceil(count / 64));
  pass.end();
  gpu.queue.submit([enc.finish()]);
}

/** Python's live webdlpack exports (0 when every DLPack hand-off was released). */
function pythonLiveExports(pyodide) {
  return Number(pyodide.runPython("from webdlpack.api import debug; debug.export_stats()['live']"));
}

/**
 * Run the exchange once in `env` (from loadEverything). `onStep(steps)` is
 * called after each step. Returns `{steps, ok, verdict, checks}`.
 */
export async function runExchange(env, onStep = () => {}) {
  const { webdlpack, adapters, ctx, gpu, pyodide, bridge, tf, ortBinding, session, tfBackend, reference } = env;
  const [rows, cols] = reference.shape;
  const count = rows * cols;
  const nbytes = count * 4;
  const steps = [];
  const step = async (name, fn) => {
    const t0 = performance.now();
    const s = await fn();
    steps.push({
      index: steps.length + 1,
      name,
      ms: performance.now() - t0,
      ...s,
      liveEntries: ctx.ledger.entries().length,
    });
    onStep(steps);
  };
  const tfTensorsBefore = tf.memory().numTensors;
  const livePointersBefore = ctx.stats().livePointers;
  let jx, ptr, ty, out, jy;
  const checks = {};

  await step("Python makes a float32 tensor (wasm heap)", () => {
    pyodide.globals.set("reference_input", reference.input);
    pyodide.runPython(`
import array, webdlpack
src = array.array("f", [((7 * i) % 17 - 8) / 8 for i in range(${count})])
x = webdlpack.from_buffer(src, shape=(${rows}, ${cols}))
input_matches = list(src) == list(reference_input.to_py())
del reference_input
`);
    checks.inputMatchesReference = pyodide.globals.get("input_matches") === true;
    const addr = Number(pyodide.runPython("x.data_ptr + x.byte_offset"));
    return {
      device: "cpu",
      pointer: hex(addr),
      bytes: nbytes,
      copy: false,
      values: String(pyodide.runPython("str([round(v, 4) for v in src[:6]])")),
      detail: "array.array in the Pyodide heap, wrapped by webdlpack.from_buffer (no copy)",
    };
  });

  await step("Python → JS: webdlpack.to_js(x)", () => {
    jx = pyodide.runPython("webdlpack.to_js(x)");
    const view = jx.view;
    const same = view.buffer === pyodide._module.HEAPU8.buffer;
    return {
      device: "cpu",
      pointer: hex(view.byteOffset),
      bytes: view.byteLength,
      copy: !same,
      values: fmt(view),
      detail: `Float32Array on the wasm memory itself (same buffer: ${same}), through a DLManagedTensorVersioned`,
    };
  });

  await step("JS → WebGPU: allocWebGPU + ctx.upload", async () => {
    ptr = ctx.allocWebGPU(nbytes, { owner: "demo" });
    ctx.upload(ptr, jx.view); // the context's one upload path (writeBuffer or mapped staging, by size)
    jx.dispose(); // JS is done with Python's bytes: the export's deleter runs once
    return {
      device: "webgpu:0",
      pointer: hex(ptr),
      bytes: nbytes,
      copy: true,
      values: "(on the GPU)",
      detail: "the one CPU → GPU copy; the GPU pointer is a plain u32 naming the GPUBuffer in the page's table",
    };
  });

  await step("WebGPU compute: x ← 2·x + 1, in place", () => {
    const buffer = ctx.gpuPointerToBuffer(ptr);
    runShader(gpu, buffer, count);
    return {
      device: "webgpu:0",
      pointer: hex(ptr),
      bytes: nbytes,
      copy: false,
      values: "(on the GPU)",
      detail: "a compute shader on the buffer the pointer names (submitted to the shared queue)",
    };
  });

  await step("ONNX Runtime Web: Relu(x·W + b) on the shared device", async () => {
    const gx = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [rows, cols] });
    const input = await ortBinding.tensorToOrt(gx);
    const inputShared = input.gpuBuffer === ctx.gpuPointerToBuffer(ptr);
    const inputCopied = adapters.handoffInfo(input)?.isCopied !== false;
    const { Y } = await session.run({ X: input });
    input.dispose();
    gx.dispose();
    ctx.freeWebGPU(ptr); // ORT's work reading it is submitted: the buffer may go back to the cache
    ty = ortBinding.tensorFromOrt(Y);
    const outputShared = ctx.gpuPointerToBuffer(ty.data) === Y.gpuBuffer;
    checks.ortInputShared = inputShared;
    checks.ortOutputShared = outputShared;
    return {
      device: `webgpu:${ty.device.deviceId}`,
      pointer: hex(ty.data),
      bytes: ty.nbytes,
      copy: inputCopied || !outputShared,
      values: "(on the GPU)",
      detail:
        `input: ort.Tensor.fromGpuBuffer over the shader's GPUBuffer (same buffer: ${inputShared}); ` +
        `output Y kept on the GPU (gpu-buffer) and adopted as a GPU pointer (same buffer: ${outputShared})`,
    };
  });

  await step("TensorFlow.js: sigmoid of the ORT output", async () => {
    const tt = await adapters.tensorToTfjs(tf, ty);
    const tfShared = tfBackend.tensorMap.get(tt.dataId).resource === ctx.gpuPointerToBuffer(ty.data);
    const s = tf.sigmoid(tt);
    out = await adapters.tensorFromTfjs(tf, s);
    const outShared = ctx.gpuPointerToBuffer(out.data) === tfBackend.tensorMap.get(s.dataId).resource;
    ty.dispose();
    tt.dispose(); // the last holder of ORT's output: ORT gets its buffer back
    s.dispose(); // `out` keeps TF.js's result alive until it is disposed
    checks.tfjsInputShared = tfShared;
    checks.tfjsOutputShared = outShared;
    return {
      device: `webgpu:${out.device.deviceId}`,
      pointer: hex(out.data),
      bytes: out.nbytes,
      copy: adapters.handoffInfo(tt)?.isCopied !== false || out.flags.isCopied,
      values: "(on the GPU)",
      detail:
        `tf.tensor({buffer, zeroCopy}) over ORT's output buffer (same buffer: ${tfShared}); ` +
        `tf.sigmoid's result shared back as a read-only webdlpack tensor (same buffer: ${outShared})`,
    };
  });

  await step("WebGPU → Python heap: readbackInto a tensor Python allocated", async () => {
    jy = bridge.fromPython(pyodide.runPython(`y = webdlpack.empty((${rows}, ${cols}), "float32"); y`));
    const heap = {
      get buffer() {
        return pyodide._module.HEAPU8.buffer;
      },
    };
    await ctx.readbackInto(
      out.data,
      { memory: heap, address: jy.data + jy.byteOffset, byteLength: nbytes },
      { byteOffset: out.byteOffset, byteLength: nbytes },
    );
    out.dispose();
    return {
      device: "cpu",
      pointer: hex(jy.data + jy.byteOffset),
      bytes: nbytes,
      copy: true,
      values: fmt(jy.view),
      detail:
        "the one GPU → CPU copy: ctx.readbackInto wasm memory (ordered after ORT's and TF.js's work); TF.js's buffer released",
    };
  });

  await step("JS → Python: webdlpack.from_js(jy), values checked", () => {
    pyodide.globals.set("jy", jy);
    pyodide.globals.set("expected", reference.tfjs_sigmoid);
    const res = pyodide
      .runPython(`
r = webdlpack.from_js(jy)
got = [v for row in r.tolist() for v in row]
worst = max(abs(a - b) for a, b in zip(got, expected.to_py()))
result = (len(got) == len(expected) and worst <= ${TOLERANCE}, r.data_ptr + r.byte_offset, str([round(v, 4) for v in got[:6]]), r.flags.is_copied, worst)
r.dispose(); del r, jy, expected
result
`)
      .toJs();
    const [valuesOk, address, shown, isCopied, worst] = res;
    checks.valuesOk = valuesOk === true;
    checks.maxAbsError = worst;
    const sameAddress = address === jy.data + jy.byteOffset;
    jy.dispose();
    pyodide.runPython("x.dispose(); y.dispose(); del x, y, src, input_matches, result");
    return {
      device: "cpu",
      pointer: hex(address),
      bytes: nbytes,
      copy: isCopied || !sameAddress,
      values: shown,
      detail:
        `Python reads JS's bytes at the same address (${sameAddress}); ` +
        `max |error| vs NumPy ${worst.toExponential(1)} (≤ ${TOLERANCE}: ${valuesOk})`,
    };
  });

  checks.pythonLiveExports = pythonLiveExports(pyodide);
  checks.leftoverPointers = ctx.stats().livePointers - livePointersBefore;
  checks.leftoverTfjsTensors = tf.memory().numTensors - tfTensorsBefore;
  const copies = steps.filter((s) => s.copy).length;
  const zeroCopyHandoffs = ["ortInputShared", "ortOutputShared", "tfjsInputShared", "tfjsOutputShared"].every(
    (k) => checks[k],
  );
  const ok =
    checks.valuesOk &&
    checks.inputMatchesReference &&
    zeroCopyHandoffs &&
    checks.pythonLiveExports === 0 &&
    checks.leftoverPointers === 0 &&
    checks.leftoverTfjsTensors === 0;
  const verdict = ok
    ? `OK: values right after Python → JS → WebGPU → ORT-web → TF.js → Python (max error ${checks.maxAbsError.toExponential(1)}); ` +
      `${copies} copies (the upload and the readback, which WebGPU requires); ORT and TF.js shared GPU buffers zero-copy; ` +
      "no Python export, GPU pointer or TF.js tensor left alive."
    : `FAILED: ${JSON.stringify(checks)}`;
  return { steps, ok, verdict, checks };
}
