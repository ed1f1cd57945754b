// Loading the demo's parts from local files, each reported as a progress stage:
// the WebGPU device first (so a browser without WebGPU is told at once what
// to do), then the Pyodide runtime, the webdlpack Python package, and ONNX
// Runtime Web + TensorFlow.js bound to the shared device with the demo model.
// No DOM here: the page (demo.js) and the demo's Worker (worker.js) both load
// through this file and each shows the stages its own way.
import * as webdlpack from "../js/dist/index.js";
import * as adapters from "../js/dist/adapters/index.js";

/** What to do when the page gets no WebGPU device (shown with the error). */
export const WEBGPU_ADVICE =
  "This page needs WebGPU (navigator.gpu), which browsers only offer in a secure context. " +
  "Open it from http://127.0.0.1 (make serve, or ./run demo), not file://, in a browser with WebGPU enabled " +
  "(a recent Chrome or Edge). Without a GPU, start Chromium with " +
  "--enable-unsafe-webgpu --enable-features=Vulkan --use-angle=swiftshader --use-webgpu-adapter=swiftshader. " +
  'Check chrome://gpu for "WebGPU: Hardware accelerated" or a blocklist entry.';

/** Run one loading stage, timed, reporting it to `onStage(name, state, text)`; a failure is reported and rethrown. */
async function timedStage(name, busyText, fn, load, onStage) {
  onStage(name, "busy", busyText);
  const t0 = performance.now();
  try {
    const { value, text } = await fn();
    load[name] = performance.now() - t0;
    onStage(name, "done", `${text} (${load[name].toFixed(0)} ms)`);
    return value;
  } catch (err) {
    onStage(name, "failed", err?.code ?? "failed");
    throw err;
  }
}

/** The device facts the page and scripts/demo.mjs show. */
function describeDevice(info, device) {
  const adapter = info.adapterInfo ?? {};
  return {
    vendor: adapter.vendor || "?",
    architecture: adapter.architecture || "?",
    description: adapter.description ?? "",
    maxBufferSize: device.limits.maxBufferSize,
    features: [...device.features].sort(),
    requestedFeatures: info.requestedFeatures ?? [], // what setup() asked for: the adapter's ML features it has
  };
}

/**
 * ONNX Runtime Web (WebGPU build) and TF.js core + WebGPU backend, by the bare names of the page's import map.
 * A Worker has no import map: it passes its own `importFrameworks` (worker.js).
 */
export async function importByImportMap() {
  const [ort, tf, tfWebGPU] = await Promise.all([
    import("onnxruntime-web/webgpu"),
    import("@tensorflow/tfjs-core"),
    import("@tensorflow/tfjs-backend-webgpu"),
  ]);
  return { ort, tf, WebGPUBackend: tfWebGPU.WebGPUBackend };
}

/** The frameworks bound to the shared device, the demo model loaded and warmed up. */
async function loadFrameworks(ctx, importFrameworks) {
  const { ort, tf, WebGPUBackend } = await importFrameworks();
  ort.env.wasm.wasmPaths = new URL("../node_modules/onnxruntime-web/dist/", import.meta.url).href;
  ort.env.wasm.numThreads = 1; // no cross-origin isolation on a plain local server
  const ortBinding = adapters.bindOrtToContext(ort, ctx);
  const model = new Uint8Array(await (await fetch(new URL("./model/demo_mlp.onnx", import.meta.url))).arrayBuffer());
  const reference = await (await fetch(new URL("./model/demo_reference.json", import.meta.url))).json();
  const session = await ort.InferenceSession.create(model, ortBinding.sessionOptions());
  const tfBackend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
  await warmUp(ort, tf, session, reference.shape);
  return {
    ort,
    tf,
    ortBinding,
    session,
    tfBackend,
    reference,
    versions: { ort: ort.env.versions?.web ?? "?", tfjs: tf.version_core },
  };
}

/**
 * One run of the model and of the TF.js op on zeros, so their shader pipelines
 * are compiled while loading and the exchange steps time the exchange itself.
 */
async function warmUp(ort, tf, session, shape) {
  const outputs = await session.run({ X: new ort.Tensor("float32", new Float32Array(shape[0] * shape[1]), shape) });
  for (const t of Object.values(outputs)) t.dispose();
  const y = tf.tidy(() => tf.sigmoid(tf.zeros(shape)));
  await y.data();
  y.dispose();
}

/**
 * Load everything, reporting each stage to `onStage(name, state, text)` (state: busy, done or failed).
 * Returns the environment the exchange runs in; throws (with `advice` when WebGPU is missing) otherwise.
 */
export async function loadEverything({ onStage, importFrameworks = importByImportMap }) {
  const load = {};
  const ctx = webdlpack.getContext();
  const device = await timedStage(
    "device",
    "requesting…",
    async () => {
      let info;
      try {
        info = await ctx.setup();
      } catch (err) {
        throw Object.assign(err, { advice: WEBGPU_ADVICE });
      }
      const dev = ctx.getWebGPUDevice(0);
      const d = describeDevice(info, dev);
      return { value: d, text: `webgpu:0 ${d.vendor} ${d.architecture}` };
    },
    load,
    onStage,
  );
  const pyodide = await timedStage(
    "runtime",
    "loading…",
    async () => {
      const { loadPyodide } = await import("../node_modules/pyodide/pyodide.mjs");
      const py = await loadPyodide({ indexURL: new URL("../node_modules/pyodide/", import.meta.url).href });
      return { value: py, text: `Python ${py.runPython("import sys; sys.version.split()[0]")}` };
    },
    load,
    onStage,
  );
  const bridge = await timedStage(
    "package",
    "installing…",
    async () => {
      const b = await webdlpack.loadWebDLPack(pyodide);
      return { value: b, text: `webdlpack ${b.pythonVersion}` };
    },
    load,
    onStage,
  );
  const frameworks = await timedStage(
    "frameworks",
    "loading…",
    async () => {
      const f = await loadFrameworks(ctx, importFrameworks);
      return {
        value: f,
        text: `ONNX Runtime Web ${f.versions.ort}, TF.js ${f.versions.tfjs}, model demo_mlp.onnx, warmed up`,
      };
    },
    load,
    onStage,
  );
  return {
    webdlpack,
    adapters,
    ctx,
    gpu: ctx.getWebGPUDevice(0),
    pyodide,
    bridge,
    ...frameworks,
    deviceInfo: device,
    load,
  };
}
