// Benchmark (not a test): the pretrained models of docs/real-models.md (make real-models) on each framework's
// own GPUDevice vs on webdlpack's shared device, in one run, same page kind, same inputs:
//   own     TF.js's stock "webgpu" backend / an ORT session with no device: input from the CPU, output read back
//           (y.data() / getData()), as a page without webdlpack does it
//   shared  the framework on webdlpack's device: input a webdlpack GPU tensor handed over zero-copy
//           (tensorToTfjs / tensorToOrt), output handed back zero-copy (tensorFromTfjs / tensorFromOrt) and read
//           with readTensor
// Each sample is one inference end to end; the first of each way is a warm-up (shader compilation) and dropped.
// own ÷ shared near 1: the shared device costs nothing. ORT's own device and the shared one cannot live in one
// page (once ORT made its own device the shared one is refused), so each way gets a page of its own.
// Writes bench/out/real-models.json. Usage: node bench/real-models.mjs [model id …]   (after `make js real-models`)
import { summarize, withBenchPage, writeOut } from "./lib.mjs";

const PAGE = "/tests/browser/adapters.html?pyodide=0";
const MODELS = [
  { id: "movenet", label: "MoveNet Lightning (TF.js graph model)", runs: 3 },
  { id: "ppocr-det", label: "PP-OCRv4 text detection 96×320 (ONNX)", runs: 3 },
  { id: "silero-vad", label: "Silero VAD, float16 weights (ONNX)", runs: 10 },
];

/** Runs in the page: milliseconds of `runs` + 1 inferences of model `id`, the `way` given. */
async function inPage({ id, way, runs }) {
  const { webdlpack, adapters, ort, tf, WebGPUBackend } = window;
  const { realModels } = await import("/tests/browser/real-models.js");
  const tfconv = await import("@tensorflow/tfjs-converter");
  const ctx = webdlpack.getContext();
  const times = [];
  /** A webdlpack GPU tensor holding `data` (one upload; the tensor owns the pointer). */
  const onGpu = (data, shape, dtype) => {
    const ptr = ctx.allocWebGPU(data.byteLength, { owner: "bench" });
    ctx.upload(ptr, data);
    return webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype, shape, onRelease: () => ctx.freeWebGPU(ptr) });
  };
  const timed = async (fn) => {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  };
  if (way === "shared") await ctx.setup();
  if (id === "movenet") {
    if (way === "own") await tf.setBackend("webgpu");
    else await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx, "webgpu");
    const model = await tfconv.loadGraphModel("/build/real-models/movenet/model.json");
    const pixels = realModels.picture(192, 192);
    const gpuIn = way === "own" ? null : onGpu(pixels, [1, 192, 192, 3], "int32");
    for (let r = 0; r <= runs; r++)
      await timed(async () => {
        if (way === "own") {
          const x = tf.tensor(pixels, [1, 192, 192, 3], "int32");
          const y = model.predict(x);
          await y.data();
          x.dispose();
          y.dispose();
        } else {
          const x = await adapters.tensorToTfjs(tf, gpuIn);
          const y = model.predict(x);
          const k = await adapters.tensorFromTfjs(tf, y);
          await adapters.readTensor(k, ctx);
          k.dispose();
          y.dispose();
          x.dispose();
        }
      });
    gpuIn?.dispose();
    model.dispose();
  } else {
    const path = id === "ppocr-det" ? "ppocr-det/model.onnx" : "silero-vad/model_half.onnx";
    const feeds =
      id === "ppocr-det"
        ? { x: [realModels.ocrInput(96, 320), [1, 3, 96, 320]] }
        : { input: [realModels.audioChunk(512, 0), [1, 512]], state: [new Float32Array(256), [2, 1, 128]] };
    const bytes = await realModels.bytes(path);
    const binding = way === "own" ? null : adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(
      bytes,
      way === "own" ? { executionProviders: ["webgpu"] } : binding.sessionOptions(),
    );
    const gpuFeeds = {};
    if (way === "shared")
      for (const [k, [data, dims]] of Object.entries(feeds)) gpuFeeds[k] = onGpu(data, dims, "float32");
    for (let r = 0; r <= runs; r++)
      await timed(async () => {
        const inputs = {};
        for (const [k, [data, dims]] of Object.entries(feeds))
          inputs[k] = way === "own" ? new ort.Tensor("float32", data, dims) : await binding.tensorToOrt(gpuFeeds[k]);
        const out = await session.run(inputs);
        for (const t of Object.values(out)) {
          if (way === "own") await t.getData();
          else {
            const w = binding.tensorFromOrt(t);
            await adapters.readTensor(w, ctx);
            w.dispose();
          }
          t.dispose();
        }
        if (way === "shared") for (const t of Object.values(inputs)) t.dispose();
      });
    for (const t of Object.values(gpuFeeds)) t.dispose();
    await session.release();
  }
  return times.slice(1);
}

/** Every model both ways; returns rows with median (min) per way and own ÷ shared. */
export async function realModelsBench(only = []) {
  const rows = [];
  for (const m of MODELS.filter((m) => only.length === 0 || only.includes(m.id))) {
    const ms = {};
    for (const way of ["own", "shared"])
      ms[way] = await withBenchPage(PAGE, "adaptersReady", (page) =>
        page.evaluate(inPage, { id: m.id, way, runs: m.runs }),
      );
    const own = summarize(ms.own);
    const shared = summarize(ms.shared);
    rows.push({ model: m.id, label: m.label, own, shared, ratio: own.median / shared.median });
    console.log(
      `  ${m.label.padEnd(42)} own ${own.median.toFixed(1)} ms, shared ${shared.median.toFixed(1)} ms, own ÷ shared ${(own.median / shared.median).toFixed(2)}`,
    );
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`)
  writeOut("real-models", await realModelsBench(process.argv.slice(2)));
