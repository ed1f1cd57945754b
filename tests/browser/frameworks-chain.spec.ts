/**
 * End to end across every framework on one shared WebGPU device, in real
 * Chromium (SwiftShader), offline (tests/browser/frameworks.html):
 *
 *   LiteRT.js → ONNX Runtime Web → TF.js → Python (Pyodide)
 *   Transformers.js → TF.js → Python (Pyodide)
 *
 * Every hand-off is the very same GPUBuffer (asserted by identity), GPU → CPU
 * bytes are counted by wrapping GPUBuffer.prototype.mapAsync (0 until Python's
 * final read back), values are checked against the NumPy references the model
 * scripts wrote, and at the end nothing is left alive (pointers, adapter
 * tensors, Python exports, ledger leaks, framework tensors).
 */
import { cachedTest as test, countGpuReads, expect, openFrameworksPage } from "./fixtures.js";

test.beforeEach(async ({ page }) => {
  await openFrameworksPage(page, "?pyodide=1");
  await countGpuReads(page);
});

/** Python's last step, run in Pyodide: read the GPU tensor back and compare with the reference there. */
const PYTHON_FINAL_STEP = `
import webdlpack
g = webdlpack.from_dlpack(handed)            # zero-copy: the same GPU pointer
cpu = await webdlpack.to_cpu_async(g)         # the one GPU -> CPU read back of the chain
values = memoryview(cpu).cast("B").cast("f").tolist()
max_err = max(abs(a - b) for a, b in zip(values, expected))
assert len(values) == len(expected) and max_err < 1e-5, max_err
info = (tuple(int(v) for v in g.__dlpack_device__()), tuple(g.shape), g.data_ptr, max_err, len(values))
cpu.dispose(); g.dispose(); handed.dispose()
del g, cpu, handed
info
`;

test("LiteRT.js → ORT-web → TF.js → Python: the same GPUBuffer at every hand-off, no read back until Python, values match NumPy", async ({
  page,
}) => {
  const r = await page.evaluate(async (pythonFinalStep) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, litert, loadLiteRtLocal, pyodide, py } = window as any;
    const w = window as unknown as { gpuReadBytes: number };
    const ref = await (await fetch("/tests/data/litert_chain_reference.json")).json();
    const mlp = new Uint8Array(await (await fetch("/tests/data/mlp.onnx")).arrayBuffer());
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const tfBackend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const ortBinding = adapters.bindOrtToContext(ort, ctx);
    await loadLiteRtLocal();
    const lrBinding = await adapters.bindLiteRtToContext(litert, ctx);
    // setup() reads back while it measures transfers (once per adapter and page): count from here on.
    const baseline = {
      pointers: ctx.stats().livePointers,
      produced: adapters.liveProducedTensors(),
      read: w.gpuReadBytes,
    };
    const session = await ort.InferenceSession.create(mlp, ortBinding.sessionOptions());
    const model = await litert.loadAndCompile("/tests/data/litert_fc.tflite", { accelerator: "webgpu" });

    // The input: a webdlpack WebGPU tensor (one upload).
    const xPtr = await ctx.allocWebGPUChecked(128);
    const xBuffer = ctx.gpuPointerToBuffer(xPtr);
    device.queue.writeBuffer(xBuffer, 0, Float32Array.from(ref.input.flat()));
    const x = webdlpack.Tensor.webgpu({
      pointer: xPtr,
      deviceId: 0,
      dtype: "float32",
      shape: [4, 8],
      onRelease: () => ctx.freeWebGPU(xPtr),
    });

    // 1. webdlpack → LiteRT (input, no copy) → run → LiteRT output → webdlpack
    const lx = await lrBinding.tensorToLiteRt(x);
    const lxInfo = adapters.handoffInfo(lx);
    // LiteRT's own view of the input's buffer (its wasm WebGPU object table): our buffer, not a copy.
    // (lx.toGpuBuffer() refuses here: the bucket allocator's buffer is larger than the tensor.)
    const lxSameAsX =
      litert.getGlobalLiteRt().liteRtWasm.WebGPU.getJsObject(lx.liteRtTensorBuffer.getWebGpuBuffer()) === xBuffer;
    const [ly] = await model.run([lx]);
    const lyBuffer: GPUBuffer = ly.toGpuBuffer();
    const y1 = lrBinding.tensorFromLiteRt(ly);
    const y1Same = ctx.gpuPointerToBuffer(y1.data) === lyBuffer;
    const y1Desc = { shape: [...y1.shape], dtype: String(y1.dtype.code) + "/" + y1.dtype.bits };
    // 2. webdlpack → ORT (input, no copy) → run → ORT output → webdlpack
    const oy1 = await ortBinding.tensorToOrt(y1);
    const ortInSame = oy1.gpuBuffer === lyBuffer;
    const { Y } = await session.run({ X: oy1 });
    const y2 = ortBinding.tensorFromOrt(Y);
    const y2Same = ctx.gpuPointerToBuffer(y2.data) === Y.gpuBuffer;
    // 3. webdlpack → TF.js (no copy) → sigmoid → webdlpack
    const t2 = await adapters.tensorToTfjs(tf, y2);
    const tfInSame = tfBackend.tensorMap.get(t2.dataId).resource === Y.gpuBuffer;
    const s = tf.sigmoid(t2);
    const y3 = await adapters.tensorFromTfjs(tf, s);
    const y3Same = ctx.gpuPointerToBuffer(y3.data) === tfBackend.tensorMap.get(s.dataId).resource;
    // 4. webdlpack → Python (DLPack capsule, no copy) → read back in Python
    const bytesBeforePython = w.gpuReadBytes - baseline.read;
    const y3Pointer = y3.data;
    pyodide.globals.set("handed", py.toPython(y3));
    pyodide.globals.set("expected", pyodide.toPy(ref.tfjs_sigmoid.flat()));
    const info = (await pyodide.runPythonAsync(pythonFinalStep)).toJs();
    const bytesAfterPython = w.gpuReadBytes - baseline.read;
    pyodide.runPython("del expected");

    // Release in producer order; each framework tensor goes back once its last holder let go.
    lx.delete();
    const xAliveAfterLiteRtInput = !x.disposed;
    x.dispose();
    y1.dispose();
    const litertOutputAliveWhileOrtReads = !ly.deleted;
    oy1.dispose();
    const litertOutputDeletedAfterOrt = ly.deleted;
    y2.dispose();
    const ortAliveWhileTfjsReads = Y.location === "gpu-buffer";
    t2.dispose();
    const ortDisposedAfterTfjs = Y.location === "none";
    y3.dispose();
    s.dispose();
    model.delete();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return {
      lxInfo,
      y1Same,
      y1Desc,
      ortInSame,
      y2Same,
      tfInSame,
      y3Same,
      lxSameAsX,
      bytesBeforePython,
      bytesAfterPython,
      python: { device: [...info[0]], shape: [...info[1]], dataPtr: Number(info[2]), maxErr: info[3], count: info[4] },
      y3Pointer,
      xAliveAfterLiteRtInput,
      litertOutputAliveWhileOrtReads,
      litertOutputDeletedAfterOrt,
      ortAliveWhileTfjsReads,
      ortDisposedAfterTfjs,
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
      pythonLive: pyodide
        .runPython("from webdlpack.api import debug as _d; (_d.live_imports(), _d.live_exports())")
        .toJs(),
      jsExports: webdlpack.liveExportCount(),
      leaks: ctx.leaks().length,
      guardOwners: ctx.stats().devices[0].guardOwners,
    };
  }, PYTHON_FINAL_STEP);
  expect(r.lxInfo).toEqual({ zeroCopy: true, isCopied: false, reason: null });
  expect(r.lxSameAsX).toBe(true);
  expect(r.y1Same).toBe(true);
  expect(r.y1Desc.shape).toEqual([4, 8]);
  expect(r.ortInSame).toBe(true);
  expect(r.y2Same).toBe(true);
  expect(r.tfInSame).toBe(true);
  expect(r.y3Same).toBe(true);
  expect(r.bytesBeforePython).toBe(0);
  expect(r.bytesAfterPython).toBe(128);
  expect(r.python.device).toEqual([15, 0]);
  expect(r.python.shape).toEqual([4, 8]);
  expect(r.python.dataPtr).toBe(r.y3Pointer);
  expect(r.python.count).toBe(32);
  expect(r.python.maxErr).toBeLessThan(1e-5);
  expect(r.xAliveAfterLiteRtInput).toBe(true);
  expect(r.litertOutputAliveWhileOrtReads).toBe(true);
  expect(r.litertOutputDeletedAfterOrt).toBe(true);
  expect(r.ortAliveWhileTfjsReads).toBe(true);
  expect(r.ortDisposedAfterTfjs).toBe(true);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
  expect(r.pythonLive).toEqual([0, 0]);
  expect(r.jsExports).toBe(0);
  expect(r.leaks).toBe(0);
  expect(r.guardOwners).toEqual(expect.arrayContaining(["litert", "onnxruntime-web", "tfjs"]));
});

test("Transformers.js → TF.js → Python: a feature-extraction pipeline on webdlpack's device, its output's GPUBuffer shared to the end", async ({
  page,
}) => {
  const r = await page.evaluate(async (pythonFinalStep) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, transformers, pyodide, py } = window as any;
    const w = window as unknown as { gpuReadBytes: number };
    const ref = await (await fetch("/tests/data/transformers/tiny-bert/reference.json")).json();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const tfBackend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    // setup() reads back while it measures transfers (once per adapter and page): count from here on.
    const baseline = {
      pointers: ctx.stats().livePointers,
      produced: adapters.liveProducedTensors(),
      read: w.gpuReadBytes,
    };
    // Which ONNX Runtime each side got: the page's import is the top-level package, Transformers.js its own.
    const versions = {
      page: ort.env.versions.web,
      served: (await (await fetch("/node_modules/onnxruntime-web/package.json")).json()).version,
      transformers: transformers.env.backends.onnx.versions.web,
    };

    // GPU-resident outputs are the opt-in that keeps the hand-off on the GPU.
    const options = adapters.transformersOptions(ctx, { session_options: { preferredOutputLocation: "gpu-buffer" } });
    const extractor = await transformers.pipeline("feature-extraction", "tiny-bert", options);
    const sharedDevice = webdlpack.unwrapDevice(options.session_options.executionProviders[0].device) === device;
    const ids = Array.from(extractor.tokenizer(ref.text).input_ids.data, Number);
    const out = await extractor(ref.text, { pooling: "none" });
    const outDesc = {
      location: out.location,
      dims: [...out.dims],
      type: out.type,
      bufferSize: out.ort_tensor.gpuBuffer.size,
    };
    const outBuffer: GPUBuffer = out.ort_tensor.gpuBuffer;
    // The output buffer belongs to webdlpack's device: a copy on it validates.
    device.pushErrorScope("validation");
    device.queue.submit([
      (() => {
        const e = device.createCommandEncoder();
        e.clearBuffer(outBuffer, outBuffer.size - 4, 4);
        return e.finish();
      })(),
    ]);
    const foreignBufferError = await device.popErrorScope();

    const t = adapters.tensorFromTransformers(out);
    const tSame = ctx.gpuPointerToBuffer(t.data) === outBuffer;
    const tDesc = { shape: [...t.shape], nbytes: t.nbytes };
    const tt = await adapters.tensorToTfjs(tf, t);
    const tfInSame = tfBackend.tensorMap.get(tt.dataId).resource === outBuffer;
    const relu = tf.relu(tt);
    const y = await adapters.tensorFromTfjs(tf, relu);
    const ySame = ctx.gpuPointerToBuffer(y.data) === tfBackend.tensorMap.get(relu.dataId).resource;
    const bytesBeforePython = w.gpuReadBytes - baseline.read;
    const yPointer = y.data;
    pyodide.globals.set("handed", py.toPython(y));
    pyodide.globals.set("expected", pyodide.toPy(ref.tfjs_relu.flat(2)));
    const info = (await pyodide.runPythonAsync(pythonFinalStep)).toJs();
    const bytesAfterPython = w.gpuReadBytes - baseline.read;
    pyodide.runPython("del expected");

    t.dispose();
    const aliveWhileTfjsReads = out.location === "gpu-buffer";
    tt.dispose();
    const disposedAfterTfjs = out.location === "none";
    y.dispose();
    relu.dispose();
    await extractor.dispose();
    return {
      versions,
      sharedDevice,
      ids,
      outDesc,
      foreignBufferError: foreignBufferError?.message ?? null,
      tSame,
      tDesc,
      tfInSame,
      ySame,
      bytesBeforePython,
      bytesAfterPython,
      yPointer,
      python: { device: [...info[0]], shape: [...info[1]], dataPtr: Number(info[2]), maxErr: info[3], count: info[4] },
      aliveWhileTfjsReads,
      disposedAfterTfjs,
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
      pythonLive: pyodide
        .runPython("from webdlpack.api import debug as _d; (_d.live_imports(), _d.live_exports())")
        .toJs(),
      jsExports: webdlpack.liveExportCount(),
      leaks: ctx.leaks().length,
    };
  }, PYTHON_FINAL_STEP);
  expect(r.versions.page).toBe(r.versions.served); // the onnxruntime-web served (an older one under make test-matrix)
  expect(r.versions.transformers).toMatch(/^1\.31\.0-dev/);
  expect(r.sharedDevice).toBe(true);
  expect(r.ids).toEqual(expect.arrayContaining([1])); // "copy" is [UNK]
  expect(r.outDesc).toMatchObject({ location: "gpu-buffer", dims: [1, 10, 8], type: "float32" });
  expect(r.outDesc.bufferSize).toBeGreaterThanOrEqual(320); // ORT pads: 320 B of data
  expect(r.foreignBufferError).toBeNull();
  expect(r.tSame).toBe(true);
  expect(r.tDesc).toEqual({ shape: [1, 10, 8], nbytes: 320 });
  expect(r.tfInSame).toBe(true);
  expect(r.ySame).toBe(true);
  expect(r.bytesBeforePython).toBe(0);
  expect(r.bytesAfterPython).toBe(320);
  expect(r.python.device).toEqual([15, 0]);
  expect(r.python.shape).toEqual([1, 10, 8]);
  expect(r.python.dataPtr).toBe(r.yPointer);
  expect(r.python.count).toBe(80);
  expect(r.python.maxErr).toBeLessThan(1e-5);
  expect(r.aliveWhileTfjsReads).toBe(true);
  expect(r.disposedAfterTfjs).toBe(true);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
  expect(r.pythonLive).toEqual([0, 0]);
  expect(r.jsExports).toBe(0);
  expect(r.leaks).toBe(0);
});
