// Benchmark (not a test): GPU hand-offs out of Transformers.js and LiteRT.js through webdlpack (the
// consumer gets the same GPUBuffer, no GPU work) vs reading the output back to the CPU and uploading it
// again into a new GPUBuffer (what pages do without a shared device), at 1 KiB and 16 MiB:
//   Transformers.js → TF.js  a feature-extraction output (gpu-buffer) becomes a TF.js tensor:
//                            tensorFromTransformers + tensorToTfjs  vs
//                            out.ort_tensor.getData() + createBuffer/writeBuffer + tf.tensor({buffer})
//   LiteRT.js → ORT-web      a LiteRT model output becomes an ORT input tensor:
//                            tensorFromLiteRt + tensorToOrt  vs
//                            await out.data() + createBuffer/writeBuffer + ort.Tensor.fromGpuBuffer
// Sizes: gpu-handoff.mjs's SIZES. Models: tests/data/transformers/tiny-bert (hidden 8: 32 tokens = 1 KiB), build/models/tiny-bert-4096
// (1024 tokens = 16 MiB; scripts/make_transformers_model.py --bench-out build/models writes it),
// tests/data/litert_fc16_{16,262144}.tflite. Each sample times a batch of hand-offs of fresh outputs; the
// first sample of each case is a warm-up and dropped. Writes bench/out/framework-handoff.json.
// Usage: node bench/framework-handoff.mjs   (after `make js`)
import { execFileSync } from "node:child_process";
import { measureSizes, printHandoffs } from "./gpu-handoff.mjs";
import { withBenchPage, writeOut } from "./lib.mjs";

const BENCH_MODELS = "build/models";

/** Runs in the page (tests/browser/frameworks.html): per-hand-off milliseconds of each sample. */
async function measureInPage({ nbytes, runs, batch }) {
  const { webdlpack, adapters, ort, tf, WebGPUBackend, transformers, litert, loadLiteRtLocal } = window;
  const ctx = webdlpack.getContext();
  await ctx.setup();
  const device = ctx.getWebGPUDevice(0);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  if (window.benchSetup === undefined) {
    // GPU → CPU bytes (mapAsync for reading), to report what each way reads back.
    window.benchReadBytes = 0;
    const mapAsync = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (mode, offset, size) {
      if ((mode & GPUMapMode.READ) !== 0) window.benchReadBytes += size ?? this.size - (offset ?? 0);
      return mapAsync.call(this, mode, offset, size);
    };
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    await loadLiteRtLocal();
    window.benchSetup = {
      ortBinding: adapters.bindOrtToContext(ort, ctx),
      lrBinding: await adapters.bindLiteRtToContext(litert, ctx),
    };
  }
  const { ortBinding, lrBinding } = window.benchSetup;
  const samples = { tjsHandoff: [], tjsReadback: [], lrHandoff: [], lrReadback: [] };
  const checks = {};
  /** The baseline's re-upload: a new GPUBuffer with `bytes` written into it. */
  const reupload = (bytes) => {
    const buffer = device.createBuffer({ size: nbytes, usage });
    device.queue.writeBuffer(buffer, 0, bytes);
    return buffer;
  };
  const record = (r, name, handoff, readback) => {
    if (r === 0) return; // warm-up
    samples[`${name}Handoff`].push(handoff);
    samples[`${name}Readback`].push(readback);
  };

  // Transformers.js → TF.js: hidden 8 × 32 tokens (1 KiB) or hidden 4096 × 1024 tokens (16 MiB).
  const big = nbytes > 2 ** 20;
  transformers.env.localModelPath = big ? "/build/models/" : "/tests/data/transformers/";
  const extractor = await transformers.pipeline(
    "feature-extraction",
    big ? "tiny-bert-4096" : "tiny-bert",
    adapters.transformersOptions(ctx, { session_options: { preferredOutputLocation: "gpu-buffer" } }),
  );
  const words = ["the", "cat", "sat", "on", "a", "shared", "gpu", "tensor"];
  const text = Array.from({ length: big ? 1024 : 32 }, (_, i) => words[i % words.length]).join(" ");
  for (let r = 0; r <= runs; r++) {
    const outputs = [];
    for (let b = 0; b < batch; b++) outputs.push(await extractor(text, { pooling: "none" }));
    await device.queue.onSubmittedWorkDone();
    let read0 = window.benchReadBytes;
    let t0 = performance.now();
    const made = [];
    for (const out of outputs) {
      const t = adapters.tensorFromTransformers(out);
      made.push(await adapters.tensorToTfjs(tf, t));
      t.dispose();
    }
    const handoff = (performance.now() - t0) / batch;
    if (r === 0) {
      checks.tjsHandoffBytesRead = window.benchReadBytes - read0;
      checks.tjsBytes = outputs[0].ort_tensor.dims.reduce((a, b) => a * b, 1) * 4;
      checks.tjsZeroCopy = adapters.handoffInfo(made[0])?.zeroCopy === true;
      checks.tjsSameBuffer = tf.backend().tensorMap.get(made[0].dataId).resource === outputs[0].ort_tensor.gpuBuffer;
    }
    for (const tt of made) tt.dispose(); // the last holder: ORT gets its output back

    const out = await extractor(text, { pooling: "none" });
    await device.queue.onSubmittedWorkDone();
    read0 = window.benchReadBytes;
    t0 = performance.now();
    const data = await out.ort_tensor.getData(true); // read back (and release ORT's buffer)
    const copy = reupload(data);
    const tc = tf.tensor({ buffer: copy, zeroCopy: true }, out.dims, "float32");
    const readback = performance.now() - t0;
    checks.tjsReadbackBytesRead = window.benchReadBytes - read0;
    tc.dispose();
    copy.destroy();
    record(r, "tjs", handoff, readback);
  }
  await extractor.dispose();

  // LiteRT.js → ORT: FULLY_CONNECTED over [16, 16] (1 KiB) or [262144, 16] (16 MiB).
  const rows = nbytes / 64;
  const model = await litert.loadAndCompile(`/tests/data/litert_fc16_${rows}.tflite`, { accelerator: "webgpu" });
  const xBuffer = device.createBuffer({ size: nbytes, usage });
  device.queue.writeBuffer(xBuffer, 0, new Float32Array(nbytes / 4).fill(0.5));
  const x = new litert.Tensor(xBuffer, [rows, 16], "float32");
  for (let r = 0; r <= runs; r++) {
    const outputs = [];
    for (let b = 0; b < batch; b++) outputs.push((await model.run([x]))[0]);
    await device.queue.onSubmittedWorkDone();
    let read0 = window.benchReadBytes;
    let t0 = performance.now();
    const made = [];
    for (const ly of outputs) {
      const t = lrBinding.tensorFromLiteRt(ly);
      made.push(await ortBinding.tensorToOrt(t));
      t.dispose();
    }
    const handoff = (performance.now() - t0) / batch;
    if (r === 0) {
      checks.lrHandoffBytesRead = window.benchReadBytes - read0;
      checks.lrZeroCopy = adapters.handoffInfo(made[0])?.zeroCopy === true;
      checks.lrSameBuffer = made[0].gpuBuffer === outputs[0].toGpuBuffer();
    }
    for (const o of made) o.dispose(); // the last holder: LiteRT deletes its output
    checks.lrOutputsDeleted = outputs.every((ly) => ly.deleted);

    const [ly] = await model.run([x]);
    await device.queue.onSubmittedWorkDone();
    read0 = window.benchReadBytes;
    t0 = performance.now();
    const data = await ly.data(); // LiteRT's read back (staging copy + mapAsync)
    const copy = reupload(data);
    const oc = ort.Tensor.fromGpuBuffer(copy, { dataType: "float32", dims: [rows, 16] });
    const readback = performance.now() - t0;
    checks.lrReadbackBytesRead = window.benchReadBytes - read0;
    oc.dispose();
    copy.destroy();
    ly.delete();
    record(r, "lr", handoff, readback);
  }
  x.delete();
  xBuffer.destroy();
  model.delete();
  return { samples, checks, batch };
}

/** Make the 16 MiB Transformers.js model (hidden 4096) under build/models (fast; not committed). */
function makeBenchModels() {
  execFileSync(
    ".venv/bin/python",
    ["scripts/make_transformers_model.py", "--bench-out", BENCH_MODELS, "--bench-only"],
    { stdio: "ignore" },
  );
}

/** Run the framework hand-off benchmark; returns `{chromium, sizes: {nbytes: {transformersToTfjs, litertToOrt, checks}}}` (ms). */
export async function frameworkHandoff({ runs = 9 } = {}) {
  makeBenchModels();
  return withBenchPage("/tests/browser/frameworks.html", "frameworksReady", async (page, chromium) => {
    const sizes = await measureSizes(page, measureInPage, runs, [
      ["transformersToTfjs", "tjs", (b) => b],
      ["litertToOrt", "lr", (b) => b],
    ]);
    return { chromium, sizes };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await frameworkHandoff();
  writeOut("framework-handoff", result);
  printHandoffs(result, ["transformersToTfjs", "litertToOrt"]);
}
