// The whole stack inside one dedicated module Worker: webdlpack's context and device, Pyodide with the webdlpack
// package, ONNX Runtime Web (WebGPU build) and TF.js (WebGPU backend) on the worker's device. The page
// (tests/browser/worker.html) sends `{id, op, args}`; each op answers `{id, ok, value}` or `{id, ok: false, error}`.
// Every URL is relative to this file, so the worker also runs under the server's /__isolated/ route.
import * as webdlpack from "../../js/dist/index.js";
import * as adapters from "../../js/dist/adapters/index.js";
import { createTvmVm, loadTvmModels } from "./tvm-models.js";

const here = (path) => new URL(path, import.meta.url).href;
const state = { ctx: webdlpack.getContext(), released: 0, gpuReadBytes: 0 };

// Count GPU → CPU bytes: every READ mapping in this worker adds its size (hand-offs must add nothing).
const mapAsync = GPUBuffer.prototype.mapAsync;
GPUBuffer.prototype.mapAsync = function (mode, offset, size) {
  if ((mode & GPUMapMode.READ) !== 0) state.gpuReadBytes += size ?? this.size - (offset ?? 0);
  return mapAsync.call(this, mode, offset, size);
};

/** Run `fn` and return its value and how long it took (ms). */
async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

const ops = {
  /** This worker's context and device only (for tests that need no Python or frameworks). */
  async setup() {
    const setup = await timed(() => state.ctx.setup());
    return {
      inWorker:
        typeof WorkerGlobalScope === "function" && self instanceof WorkerGlobalScope && typeof document === "undefined",
      crossOriginIsolated: self.crossOriginIsolated,
      deviceInfo: setup.value,
      adapterFeatures: [...(await navigator.gpu.requestAdapter()).features].sort(),
      ms: { setup: setup.ms },
    };
  },

  /** Device, Pyodide + webdlpack, ORT-web + TF.js on the shared device, the test MLP. */
  async load() {
    const ctx = state.ctx;
    const device = await ops.setup();
    const pyodide = await timed(async () => {
      const { loadPyodide } = await import(here("../../node_modules/pyodide/pyodide.mjs"));
      return loadPyodide({ indexURL: here("../../node_modules/pyodide/") });
    });
    const bridge = await timed(() => webdlpack.loadWebDLPack(pyodide.value));
    const frameworks = await timed(async () => {
      const ort = await import(here("../../node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs"));
      ort.env.wasm.wasmPaths = here("../../node_modules/onnxruntime-web/dist/");
      ort.env.wasm.numThreads = 1;
      const { tf, WebGPUBackend } = await import(here("../../build/web/tfjs-webgpu.js"));
      const ref = await (await fetch(here("../data/mlp_reference.json"))).json();
      const model = new Uint8Array(await (await fetch(here("../data/mlp.onnx"))).arrayBuffer());
      const binding = adapters.bindOrtToContext(ort, ctx);
      const session = await ort.InferenceSession.create(model, binding.sessionOptions());
      const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
      return { ort, tf, binding, session, backend, ref };
    });
    Object.assign(state, { pyodide: pyodide.value, bridge: bridge.value, ...frameworks.value });
    return {
      ...device,
      python: pyodide.value.runPython("import sys; sys.version.split()[0]"),
      ms: { ...device.ms, pyodide: pyodide.ms, webdlpackPackage: bridge.ms, ortTfjsModel: frameworks.ms },
    };
  },

  /** Python ⇄ JS on the CPU, JS → WebGPU, ORT → TF.js on the GPU (same buffers), one readback, values checked. */
  async exchange() {
    const { ctx, pyodide, bridge, tf, binding, session, backend, ref } = state;
    const [rows, cols] = [ref.input.length, ref.input[0].length];
    const steps = {};
    const checks = {};
    const before = { pointers: ctx.stats().livePointers, tf: tf.memory().numTensors, read: state.gpuReadBytes };
    const step = async (name, fn) => {
      steps[name] = (await timed(fn)).ms;
    };
    let jx, ptr, ty, out, values;

    await step("pythonToJs", () => {
      pyodide.globals.set("flat", ref.input.flat());
      jx = pyodide.runPython(`import array, webdlpack
src = array.array("f", flat.to_py())
x = webdlpack.from_buffer(src, shape=(${rows}, ${cols}))
webdlpack.to_js(x)`);
      checks.pythonToJsSameHeap = jx.view.buffer === pyodide._module.HEAPU8.buffer;
      checks.pythonToJsValues = Array.from(jx.view).every((v, i) => Math.fround(ref.input.flat()[i]) === v);
    });
    await step("jsToPython", () => {
      const js = webdlpack.Tensor.fromTypedArray(Float32Array.from([1.5, -2, 3.25]), { shape: [3] });
      pyodide.globals.set("jt", js);
      checks.jsToPythonValues = pyodide
        .runPython("t = webdlpack.from_js(jt); v = t.tolist(); t.dispose(); del jt; v")
        .toJs();
      js.dispose();
    });
    await step("upload", async () => {
      ptr = await ctx.allocWebGPUChecked(jx.nbytes, { owner: "worker-test" });
      ctx.getWebGPUDevice(0).queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, jx.view);
      jx.dispose();
      pyodide.runPython("x.dispose(); del x, src, flat");
    });
    await step("ort", async () => {
      const gx = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [rows, cols] });
      const input = await binding.tensorToOrt(gx);
      checks.ortInputSameBuffer = input.gpuBuffer === ctx.gpuPointerToBuffer(ptr);
      const { Y } = await session.run({ X: input });
      input.dispose();
      gx.dispose();
      ctx.freeWebGPU(ptr);
      ty = binding.tensorFromOrt(Y);
      checks.ortOutputSameBuffer = ctx.gpuPointerToBuffer(ty.data) === Y.gpuBuffer;
    });
    await step("ortToTfjs", async () => {
      const tt = await adapters.tensorToTfjs(tf, ty);
      checks.tfjsInputSameBuffer = backend.tensorMap.get(tt.dataId).resource === ctx.gpuPointerToBuffer(ty.data);
      const s = tf.sigmoid(tt);
      out = await adapters.tensorFromTfjs(tf, s);
      ty.dispose();
      tt.dispose();
      s.dispose();
    });
    checks.gpuReadBytesBeforeReadback = state.gpuReadBytes - before.read;
    await step("readback", async () => {
      values = Array.from(new Float32Array(await ctx.readback(out.data, { byteLength: out.nbytes })));
      out.dispose();
    });
    checks.gpuReadBytes = state.gpuReadBytes - before.read;
    checks.maxError = Math.max(...values.map((v, i) => Math.abs(v - ref.tfjs_sigmoid.flat()[i])));
    checks.leftoverPointers = ctx.stats().livePointers - before.pointers;
    checks.leftoverTfjsTensors = tf.memory().numTensors - before.tf;
    checks.pythonLiveExports = Number(
      pyodide.runPython("from webdlpack.api import debug; debug.export_stats()['live']"),
    );
    checks.nbytes = values.length * 4;
    void bridge;
    return { steps, checks };
  },

  /** After "load": Python → tvmjs (mlp) → ORT → TF.js on this worker's device, same buffers, one readback. */
  async tvmChain() {
    const { ctx, pyodide, tf, binding, session, backend } = state;
    await import(here("../../node_modules/@mlc-ai/web-runtime/lib/index.js")); // UMD: defines self.tvmjs
    const tvm = await loadTvmModels(self.tvmjs, here("../../build/tvm/models/test_models.wasm"));
    const tvmBinding = adapters.bindTvmToContext(tvm, ctx);
    const gpu = tvm.lib.webGPUContext;
    const vm = createTvmVm(tvm);
    const ref = await (await fetch(here("../data/tvm_chain_reference.json"))).json();
    const before = { pointers: ctx.stats().livePointers, read: state.gpuReadBytes };
    const checks = { sharedDevice: webdlpack.unwrapDevice(gpu.device) === ctx.getWebGPUDevice(0) };
    pyodide.globals.set("flat", ref.input.flat());
    const x = pyodide.runPython(`import array, webdlpack
tx_src = webdlpack.from_buffer(array.array("f", flat.to_py()), shape=(4, 8))
tx_gpu = webdlpack.asarray(tx_src, device="webgpu:0")
webdlpack.to_js(tx_gpu)`);
    const tx = await tvmBinding.tensorToTvm(x);
    checks.tvmInputSameBuffer = gpu.gpuBufferFromPtr(tx.getDataPtr()) === ctx.gpuPointerToBuffer(x.data);
    tvm.beginScope();
    const ty = vm.getFunction("mlp")(tx);
    const y1 = tvmBinding.tensorFromTvm(ty);
    tvm.endScope();
    checks.tvmOutputSameBuffer = ctx.gpuPointerToBuffer(y1.data) === gpu.gpuBufferFromPtr(ty.getDataPtr());
    const oy1 = await binding.tensorToOrt(y1);
    checks.ortInputSameBuffer = oy1.gpuBuffer === ctx.gpuPointerToBuffer(y1.data);
    const { Y } = await session.run({ X: oy1 });
    const y2 = binding.tensorFromOrt(Y);
    const t2 = await adapters.tensorToTfjs(tf, y2);
    checks.tfjsInputSameBuffer = backend.tensorMap.get(t2.dataId).resource === Y.gpuBuffer;
    const s = tf.sigmoid(t2);
    const out = await adapters.tensorFromTfjs(tf, s);
    checks.gpuReadBytesBeforeReadback = state.gpuReadBytes - before.read;
    const values = Array.from(new Float32Array(await ctx.readback(out.data, { byteLength: out.nbytes })));
    checks.gpuReadBytes = state.gpuReadBytes - before.read;
    checks.maxError = Math.max(...values.map((v, i) => Math.abs(v - ref.chain_sigmoid.flat()[i])));
    for (const t of [tx, x, y1, oy1, y2, t2, s, out]) t.dispose();
    vm.dispose();
    pyodide.runPython("tx_gpu.dispose(); tx_src.dispose(); del tx_gpu, tx_src, flat");
    checks.lentBuffers = tvmBinding.lentBuffers();
    checks.leftoverPointers = ctx.stats().livePointers - before.pointers;
    checks.leaks = ctx.leaks().length;
    return checks;
  },

  /** A GPU pointer of this worker's context (what the page must not be able to use), freed again by "free". */
  async alloc({ nbytes }) {
    return state.ctx.allocWebGPU(nbytes, { owner: "worker-test" });
  },
  free({ ptr }) {
    state.ctx.freeWebGPU(ptr);
    return state.ctx.stats().livePointers;
  },

  /** What this worker's context says to a pointer the page sent: resolving it must fail with a typed error. */
  resolve({ ptr }) {
    try {
      const buffer = state.ctx.gpuPointerToBuffer(ptr);
      return { resolved: true, size: buffer.size };
    } catch (err) {
      return { resolved: false, code: err.code ?? String(err), message: err.message };
    }
  },

  /** Receive a tensor the page sent: read it, write `write` into element 0 if given, dispose it. */
  receive({ message, write }) {
    const t = webdlpack.tensorFromThread(message);
    const values = Array.from(t.view);
    if (write !== undefined) t.view[0] = write;
    const seen = {
      path: message.path,
      storage: t.storage,
      shape: [...t.shape],
      dtype: webdlpack.formatDType(t.dtype),
      values,
      isCopied: t.flags.isCopied,
      bufferKind: t.view.buffer.constructor.name,
    };
    t.dispose();
    return seen;
  },

  /** Send a tensor to the page: "js" (its own ArrayBuffer, with a release hook) or "python" (Pyodide's heap). */
  send({ kind }, reply) {
    let tensor;
    if (kind === "js") {
      tensor = webdlpack.Tensor.fromTypedArray(Float32Array.from([10, 20, 30, 40]), {
        shape: [2, 2],
        onRelease: () => {
          state.released += 1;
        },
      });
    } else {
      tensor = state.pyodide.runPython(`import array, webdlpack
_sent_src = array.array("f", [5.0, 6.0, 7.0])
webdlpack.to_js(webdlpack.from_buffer(_sent_src, shape=(3,)))`);
    }
    const packed = timedPack(tensor);
    let senderUse;
    try {
      void tensor.shape;
      senderUse = "usable";
    } catch (err) {
      senderUse = err.code;
    }
    reply(
      {
        message: packed.message,
        path: packed.path,
        bytesCopied: packed.bytesCopied,
        reason: packed.reason,
        packMs: packed.ms,
        senderUse,
      },
      packed.transfer,
    );
  },

  /** Sender-side counters: releases run here, tensors still held by a receiver, Python's live exports. */
  counters() {
    return {
      released: state.released,
      pending: webdlpack.pendingThreadReleases(),
      pythonLiveExports: Number(
        state.pyodide.runPython("from webdlpack.api import debug; debug.export_stats()['live']"),
      ),
    };
  },
};

/** packTensorForThread, timed. */
function timedPack(tensor) {
  const t0 = performance.now();
  const packed = webdlpack.packTensorForThread(tensor);
  return { ...packed, ms: performance.now() - t0 };
}

self.onmessage = async ({ data: { id, op, args } }) => {
  let replied = false;
  const reply = (value, transfer = []) => {
    replied = true;
    self.postMessage({ id, ok: true, value }, transfer);
  };
  try {
    const value = await ops[op](args ?? {}, reply);
    if (!replied) reply(value);
  } catch (err) {
    self.postMessage({
      id,
      ok: false,
      error: { code: err?.code ?? "", message: String(err?.message ?? err), stack: String(err?.stack ?? "") },
    });
  }
};
self.postMessage({ ready: true });
