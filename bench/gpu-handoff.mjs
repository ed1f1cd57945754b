// Benchmark (not a test): handing a WebGPU tensor to the next framework through
// webdlpack (the same GPUBuffer, no GPU work) vs reading it back to the CPU and
// uploading it again into a new GPUBuffer (what pages do without a shared device),
// at 1 KiB and 16 MiB, for two hand-offs:
//   ORT → TF.js     an ORT-web output (gpu-buffer) becomes a TF.js tensor:
//                   tensorFromOrt + tensorToTfjs  vs  Y.getData() + createBuffer/writeBuffer + tf.tensor({buffer})
//   Python → JS     a Python WebGPU tensor becomes a JS tensor with its GPUBuffer:
//                   webdlpack.to_js(g).gpuBuffer  vs  await to_cpu_async(g) + to_js + createBuffer/writeBuffer;
//                   also JS pulling it (bridge.fromPython(g).gpuBuffer) against the same baseline
// For ORT → TF.js the frameworks' own part — reading the ORT output and TF.js's zero-copy constructor
// tf.tensor({buffer, zeroCopy: true}) — is timed alone in the same run (ortConstructors), so webdlpack's
// share of the hand-off is the difference.
// Hand-offs are cheap, so each sample times a batch of them (fresh ORT outputs each);
// the first sample of each case is a warm-up and dropped. Writes bench/out/gpu-handoff.json.
// Usage: node bench/gpu-handoff.mjs   (after `make js`)
import { summarize, withBenchPage, writeOut } from "./lib.mjs";

export const SIZES = [1024, 16 * 2 ** 20];

/**
 * Runs in the page (tests/browser/adapters.html?pyodide=1): per-hand-off milliseconds of each sample.
 * `python: false` skips the Python cases (a page without Pyodide); `warm` > 2 also times a warm loop per run:
 * `warm` fresh ORT outputs (at most 12 from 1 MiB up) handed off back to back, timing all but the first two (ortWarm).
 */
export async function measureInPage({ nbytes, runs, batch, python = true, warm = 0 }) {
  const { webdlpack, adapters, ort, tf, WebGPUBackend, pyodide } = window;
  const ctx = webdlpack.getContext();
  await ctx.setup();
  const device = ctx.getWebGPUDevice(0);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  if (window.benchOrt === undefined) {
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const binding = adapters.bindOrtToContext(ort, ctx);
    const model = new Uint8Array(await (await fetch("/tests/data/relu_dynamic.onnx")).arrayBuffer());
    window.benchOrt = { binding, session: await ort.InferenceSession.create(model, binding.sessionOptions()) };
  }
  const { binding, session } = window.benchOrt;
  const n = nbytes / 4;
  const X = new ort.Tensor(
    "float32",
    new Float32Array(n).map((_, i) => (i % 7) - 3),
    [n],
  );
  const expectedSum = Array.from({ length: n }, (_, i) => Math.max((i % 7) - 3, 0)).reduce((a, b) => a + b, 0);
  const samples = {
    ortHandoff: [],
    ortReadback: [],
    ortConstructors: [],
    ortWarm: [],
    pyHandoff: [],
    pyReadback: [],
    pyPullHandoff: [],
    pyPullReadback: [],
  };
  const checks = {};
  /** The baseline's re-upload: a new GPUBuffer with `bytes` written into it. */
  const reupload = (bytes) => {
    const buffer = device.createBuffer({ size: nbytes, usage });
    device.queue.writeBuffer(buffer, 0, bytes);
    return buffer;
  };
  /** Keep run `r`'s two timings of case `name` (run 0 is the warm-up). */
  const record = (r, name, handoff, readback) => {
    if (r === 0) return;
    samples[`${name}Handoff`].push(handoff);
    samples[`${name}Readback`].push(readback);
  };

  // ORT → TF.js
  for (let r = 0; r <= runs; r++) {
    const outputs = [];
    for (let b = 0; b < batch; b++) outputs.push((await session.run({ X })).Y);
    await device.queue.onSubmittedWorkDone();
    let t0 = performance.now();
    const made = [];
    for (const Y of outputs) {
      const t = binding.tensorFromOrt(Y);
      made.push(await adapters.tensorToTfjs(tf, t));
      t.dispose();
    }
    const handoff = (performance.now() - t0) / batch;
    if (r === 0) {
      const s = tf.sum(made[0]);
      checks.ortHandoffSumRight = (await s.data())[0] === expectedSum;
      checks.ortHandoffZeroCopy = adapters.handoffInfo(made[0])?.zeroCopy === true;
      s.dispose();
    }
    for (const tt of made) tt.dispose(); // the last holder: ORT gets its output back

    // The frameworks' own part of the same hand-off, on fresh outputs: ORT's output getters and TF.js's
    // zero-copy constructor (its tensors disposed outside the timing, as above).
    const own = [];
    for (let b = 0; b < batch; b++) own.push((await session.run({ X })).Y);
    await device.queue.onSubmittedWorkDone();
    t0 = performance.now();
    const wrapped = [];
    for (const Y of own) wrapped.push(tf.tensor({ buffer: Y.gpuBuffer, zeroCopy: true }, Y.dims, Y.type));
    const constructors = (performance.now() - t0) / batch;
    for (const tt of wrapped) tt.dispose();
    for (const Y of own) Y.dispose();
    if (r > 0) samples.ortConstructors.push(constructors);

    const { Y } = await session.run({ X });
    await device.queue.onSubmittedWorkDone();
    t0 = performance.now();
    const data = await Y.getData(true); // read back (and release ORT's buffer)
    const copy = reupload(data);
    const tc = tf.tensor({ buffer: copy, zeroCopy: true }, [n], "float32");
    const readback = performance.now() - t0;
    tc.dispose();
    copy.destroy(); // zero-copy TF.js tensors leave their buffer to its maker
    record(r, "ort", handoff, readback);

    const warmN = nbytes >= 2 ** 20 ? Math.min(warm, 12) : warm; // 12 outputs of 16 MiB alive at once at most
    if (warmN > 2) {
      const many = [];
      for (let b = 0; b < warmN; b++) many.push((await session.run({ X })).Y);
      await device.queue.onSubmittedWorkDone();
      const tt = [];
      for (let b = 0; b < warmN; b++) {
        if (b === 2) t0 = performance.now(); // the first two after the wait run cold code: left out
        const t = binding.tensorFromOrt(many[b]);
        tt.push(await adapters.tensorToTfjs(tf, t));
        t.dispose();
      }
      if (r > 0) samples.ortWarm.push((performance.now() - t0) / (warmN - 2));
      for (const x of tt) x.dispose();
    }
  }
  X.dispose();
  if (!python) return { samples, checks, batch: { ort: batch, python: 0 } };

  // Python → JS
  pyodide.runPython(`
import webdlpack
_g = webdlpack.asarray(webdlpack.from_buffer(bytearray(${nbytes})), device="webgpu:0")
async def _readback_to_js(g):
    return webdlpack.to_js(await webdlpack.to_cpu_async(g))
`);
  const g = pyodide.globals.get("_g");
  const bridge = await webdlpack.loadWebDLPack(pyodide); // the page's bridge (loaded once per Pyodide)
  const toJs = pyodide.pyimport("webdlpack").to_js;
  const readbackToJs = pyodide.globals.get("_readback_to_js");
  const gBuffer = ctx.gpuPointerToBuffer(Number(g.data_ptr));
  const pyBatch = batch * 20;
  for (let r = 0; r <= runs; r++) {
    let same = 0;
    let t0 = performance.now();
    for (let b = 0; b < pyBatch; b++) {
      const jt = toJs(g);
      if (jt.gpuBuffer === gBuffer) same += 1;
      jt.dispose();
    }
    const handoff = (performance.now() - t0) / pyBatch;
    checks.pyHandoffSameBuffer = same === pyBatch;
    let pulled = 0;
    t0 = performance.now();
    for (let b = 0; b < pyBatch; b++) {
      const jt = bridge.fromPython(g);
      if (jt.gpuBuffer === gBuffer) pulled += 1;
      jt.dispose();
    }
    const pull = (performance.now() - t0) / pyBatch;
    checks.pyPullSameBuffer = pulled === pyBatch;
    await device.queue.onSubmittedWorkDone();
    t0 = performance.now();
    const jt = await readbackToJs(g);
    const buffer = reupload(jt.view);
    jt.dispose();
    const readback = performance.now() - t0;
    buffer.destroy();
    record(r, "py", handoff, readback);
    record(r, "pyPull", pull, readback);
  }
  toJs.destroy();
  readbackToJs.destroy();
  g.dispose();
  g.destroy();
  pyodide.runPython("del _g, _readback_to_js");
  return { samples, checks, batch: { ort: batch, python: pyBatch } };
}

/** One case's statistics: hand-off and baseline medians/mins (ms per hand-off) and their ratio. */
export function handoffPair(handoff, readback, perSample) {
  const h = summarize(handoff);
  const b = summarize(readback);
  return {
    webdlpack: { medianMs: h.median, minMs: h.min, runs: h.runs, handoffsPerSample: perSample },
    readbackReupload: { medianMs: b.median, minMs: b.min, runs: b.runs },
    speedup: b.median / h.median,
  };
}

/**
 * Run `measure` in `page` at each of {@link SIZES} (batches of 20 hand-offs, 4 from 1 MiB up) and summarize:
 * `cases` are `[key, samplePrefix, batchOf]` — `samples[prefix + "Handoff"]` vs `samples[prefix + "Readback"]`;
 * `options` go to `measure` as they are (e.g. `{python: false, warm: 50}`).
 */
export async function measureSizes(page, measure, runs, cases, options = {}) {
  const sizes = {};
  for (const nbytes of SIZES) {
    const r = await page.evaluate(measure, { nbytes, runs, batch: nbytes >= 2 ** 20 ? 4 : 20, ...options });
    sizes[nbytes] = { checks: r.checks };
    const used = new Set();
    for (const [key, prefix, batchOf] of cases) {
      sizes[nbytes][key] = handoffPair(r.samples[`${prefix}Handoff`], r.samples[`${prefix}Readback`], batchOf(r.batch));
      used.add(`${prefix}Handoff`).add(`${prefix}Readback`);
    }
    // Other timings of the page (e.g. the frameworks' own part of a hand-off), summarized as they are (ms).
    for (const [name, values] of Object.entries(r.samples))
      if (!used.has(name) && values.length) sizes[nbytes][name] = summarize(values);
  }
  return sizes;
}

/** Print each size's `cases` (keys of a size's row) and its checks. */
export function printHandoffs(result, cases) {
  for (const [n, row] of Object.entries(result.sizes)) {
    for (const c of cases) {
      const x = row[c];
      console.log(
        `${c} ${n} B: webdlpack ${(x.webdlpack.medianMs * 1000).toFixed(1)} µs vs readback + re-upload ` +
          `${(x.readbackReupload.medianMs * 1000).toFixed(1)} µs → ${x.speedup.toFixed(0)}×`,
      );
    }
    console.log(`  checks ${JSON.stringify(row.checks)}`);
  }
}

/** Run the GPU hand-off benchmark; returns `{chromium, sizes: {nbytes: {ortToTfjs, pythonToJs}}}` (ms). */
export async function gpuHandoff({ runs = 9 } = {}) {
  return withBenchPage("/tests/browser/adapters.html?pyodide=1", "adaptersReady", async (page, chromium) => {
    const sizes = await measureSizes(page, measureInPage, runs, [
      ["ortToTfjs", "ort", (b) => b.ort],
      ["pythonToJs", "py", (b) => b.python],
      ["pythonPullToJs", "pyPull", (b) => b.python],
    ]);
    return { chromium, sizes };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await gpuHandoff();
  writeOut("gpu-handoff", result);
  printHandoffs(result, ["ortToTfjs", "pythonToJs", "pythonPullToJs"]);
}
