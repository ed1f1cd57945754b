/**
 * TVM's web runtime (tvmjs) on webdlpack's shared WebGPU device, end to end in real Chromium
 * (SwiftShader), offline, with the models scripts/tvm/build.sh compiled (tests/browser/frameworks.html):
 *
 *   Python (Pyodide) → tvmjs → ONNX Runtime Web → TF.js → Python
 *   tvmjs → LiteRT.js
 *
 * Every hand-off is the very same GPUBuffer (asserted by identity, through tvmjs's buffer table on its
 * side), GPU → CPU bytes are counted by wrapping GPUBuffer.prototype.mapAsync (0 until Python's final
 * read back), values are checked against NumPy (tests/data/tvm_chain_reference.json), and at the end
 * nothing is left alive: pointers, adapter tensors, Python exports, lent table slots, ledger leaks.
 */
import type { Page } from "@playwright/test";
import { cachedTest as test, countGpuReads, expect, openFrameworksPage } from "./fixtures.js";

/** Open frameworks.html (with Pyodide when the chain has Python in it) and count GPU reads from then on. */
async function openChainPage(page: Page, python: boolean): Promise<void> {
  await openFrameworksPage(page, python ? "?pyodide=1" : "");
  await countGpuReads(page);
}

/** Python's first step: the input from a Python buffer, uploaded to webgpu:0 and handed to JS. */
const PYTHON_FIRST_STEP = `
import array, webdlpack
x = webdlpack.from_buffer(array.array("f", values), shape=(4, 8))
g = webdlpack.asarray(x, device="webgpu:0")   # the one CPU -> GPU upload
webdlpack.to_js(g)                            # JS gets the very GPUBuffer
`;

/** Python's last step: read the GPU tensor back and compare with the reference there. */
const PYTHON_FINAL_STEP = `
g2 = webdlpack.from_dlpack(handed)            # zero-copy: the same GPU pointer
cpu = await webdlpack.to_cpu_async(g2)        # the one GPU -> CPU read back of the chain
got = memoryview(cpu).cast("B").cast("f").tolist()
max_err = max(abs(a - b) for a, b in zip(got, expected))
assert len(got) == len(expected) and max_err < 1e-5, max_err
info = (g2.data_ptr, max_err, len(got))
for t in (cpu, g2, handed, g):
    t.dispose()
del g2, cpu, handed, g, x, expected, values
info
`;

test("Python → tvmjs → ORT-web → TF.js → Python: the same GPUBuffer at every hand-off, no read back until Python, values match NumPy", async ({
  page,
}) => {
  await openChainPage(page, true);
  const r = await page.evaluate(
    async ({ first, last }) => {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const { webdlpack, adapters, ort, tf, WebGPUBackend, loadTvmModels, createTvmVm, pyodide, py } = window as any;
      const w = window as unknown as { gpuReadBytes: number };
      const ref = await (await fetch("/tests/data/tvm_chain_reference.json")).json();
      const mlp = new Uint8Array(await (await fetch("/tests/data/mlp.onnx")).arrayBuffer());
      const ctx = webdlpack.getContext();
      await ctx.setup();
      const device: GPUDevice = ctx.getWebGPUDevice(0);
      const tfBackend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
      const ortBinding = adapters.bindOrtToContext(ort, ctx);
      const tvm = await loadTvmModels();
      const tvmBinding = adapters.bindTvmToContext(tvm, ctx);
      const gpu = tvm.lib.webGPUContext;
      const sharedDevice = webdlpack.unwrapDevice(gpu.device) === device;
      const vm = createTvmVm(tvm);
      const session = await ort.InferenceSession.create(mlp, ortBinding.sessionOptions());
      // From here on: setup() reads back while it measures transfers, the chain must not.
      const baseline = {
        pointers: ctx.stats().livePointers,
        produced: adapters.liveProducedTensors(),
        read: w.gpuReadBytes,
      };

      // 1. Python → JS: a WebGPU tensor on the shared device (Python uploaded it).
      pyodide.globals.set("values", pyodide.toPy(ref.input.flat()));
      const x = await pyodide.runPythonAsync(first);
      const xBuffer: GPUBuffer = ctx.gpuPointerToBuffer(x.data);
      // 2. webdlpack → tvmjs (a buffer-table slot holding x's GPUBuffer) → mlp → tvmjs output → webdlpack
      const tx = await tvmBinding.tensorToTvm(x);
      const txInfo = adapters.handoffInfo(tx);
      const txSame = gpu.gpuBufferFromPtr(tx.getDataPtr()) === xBuffer;
      tvm.beginScope();
      const ty = vm.getFunction("mlp")(tx);
      const tyBuffer: GPUBuffer = gpu.gpuBufferFromPtr(ty.getDataPtr());
      const y1 = tvmBinding.tensorFromTvm(ty); // flushes tvmjs's recorded dispatches
      tvm.endScope(); // the adopted output left the scope: still alive
      const y1Same = ctx.gpuPointerToBuffer(y1.data) === tyBuffer;
      const y1Desc = { shape: [...y1.shape], nbytes: y1.nbytes, bufferSize: tyBuffer.size };
      // 3. webdlpack → ORT (no copy) → run → ORT output → webdlpack
      const oy1 = await ortBinding.tensorToOrt(y1);
      const ortInSame = oy1.gpuBuffer === tyBuffer;
      const { Y } = await session.run({ X: oy1 });
      const y2 = ortBinding.tensorFromOrt(Y);
      // 4. webdlpack → TF.js (no copy) → sigmoid → webdlpack
      const t2 = await adapters.tensorToTfjs(tf, y2);
      const tfInSame = tfBackend.tensorMap.get(t2.dataId).resource === Y.gpuBuffer;
      const s = tf.sigmoid(t2);
      const y3 = await adapters.tensorFromTfjs(tf, s);
      // 5. webdlpack → Python (DLPack capsule, no copy) → the one read back
      const bytesBeforePython = w.gpuReadBytes - baseline.read;
      const y3Pointer = y3.data;
      pyodide.globals.set("handed", py.toPython(y3));
      pyodide.globals.set("expected", pyodide.toPy(ref.chain_sigmoid.flat()));
      const info = (await pyodide.runPythonAsync(last)).toJs();
      const bytesAfterPython = w.gpuReadBytes - baseline.read;

      // Release in producer order: each producer's buffer goes back once its last holder let go.
      const lentWhileTvmHolds = tvmBinding.lentBuffers();
      tx.dispose(); // tvmjs's reference to x's buffer (the VM may keep its own until it is disposed)
      x.dispose();
      y1.dispose();
      const tvmOutputAliveWhileOrtReads = ty.handle !== 0;
      oy1.dispose();
      const tvmOutputDisposedAfterOrt = ty.handle === 0;
      y2.dispose();
      t2.dispose();
      y3.dispose();
      s.dispose();
      vm.dispose();
      const lentAfterVm = tvmBinding.lentBuffers();
      // While ORT's session lives (ORT 1.23–1.29 destroy their guard after its release, asynchronously).
      const guardOwners = ctx.stats().devices[0].guardOwners;
      await session.release();
      await new Promise((resolve) => setTimeout(resolve, 0));
      return {
        sharedDevice,
        txInfo,
        txSame,
        y1Same,
        y1Desc,
        ortInSame,
        tfInSame,
        bytesBeforePython,
        bytesAfterPython,
        python: { dataPtr: Number(info[0]), maxErr: info[1], count: info[2] },
        y3Pointer,
        lentWhileTvmHolds,
        lentAfterVm,
        tvmOutputAliveWhileOrtReads,
        tvmOutputDisposedAfterOrt,
        leftoverPointers: ctx.stats().livePointers - baseline.pointers,
        leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
        pythonLive: pyodide
          .runPython("from webdlpack.api import debug as _d; (_d.live_imports(), _d.live_exports())")
          .toJs(),
        jsExports: webdlpack.liveExportCount(),
        leaks: ctx.leaks().length,
        guardOwners,
      };
    },
    { first: PYTHON_FIRST_STEP, last: PYTHON_FINAL_STEP },
  );
  expect(r.sharedDevice).toBe(true);
  expect(r.txInfo).toEqual({ zeroCopy: true, isCopied: false, reason: null });
  expect(r.txSame).toBe(true);
  expect(r.y1Same).toBe(true);
  expect(r.y1Desc.shape).toEqual([4, 8]);
  expect(r.y1Desc.nbytes).toBe(128);
  expect(r.ortInSame).toBe(true);
  expect(r.tfInSame).toBe(true);
  expect(r.bytesBeforePython).toBe(0);
  expect(r.bytesAfterPython).toBe(128);
  expect(r.python.dataPtr).toBe(r.y3Pointer);
  expect(r.python.count).toBe(32);
  expect(r.python.maxErr).toBeLessThan(1e-5);
  expect(r.lentWhileTvmHolds).toBe(1);
  expect(r.lentAfterVm).toBe(0);
  expect(r.tvmOutputAliveWhileOrtReads).toBe(true);
  expect(r.tvmOutputDisposedAfterOrt).toBe(true);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
  expect(r.pythonLive).toEqual([0, 0]);
  expect(r.jsExports).toBe(0);
  expect(r.leaks).toBe(0);
  expect(r.guardOwners).toEqual(expect.arrayContaining(["onnxruntime-web", "tfjs", "tvmjs"]));
});

test("tvmjs → LiteRT.js: the tvmjs output's GPUBuffer is LiteRT's input, values match NumPy, nothing left alive", async ({
  page,
}) => {
  await openChainPage(page, false);
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, litert, loadLiteRtLocal, loadTvmModels, createTvmVm } = window as any;
    const w = window as unknown as { gpuReadBytes: number };
    const ref = await (await fetch("/tests/data/tvm_chain_reference.json")).json();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    await loadLiteRtLocal();
    const lrBinding = await adapters.bindLiteRtToContext(litert, ctx);
    const tvm = await loadTvmModels();
    const tvmBinding = adapters.bindTvmToContext(tvm, ctx);
    const gpu = tvm.lib.webGPUContext;
    const vm = createTvmVm(tvm);
    const model = await litert.loadAndCompile("/tests/data/litert_fc.tflite", { accelerator: "webgpu" });
    const baseline = {
      pointers: ctx.stats().livePointers,
      produced: adapters.liveProducedTensors(),
      read: w.gpuReadBytes,
    };

    const xPtr = await ctx.allocWebGPUChecked(128);
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(xPtr), 0, Float32Array.from(ref.input.flat()));
    const x = webdlpack.Tensor.webgpu({
      pointer: xPtr,
      deviceId: 0,
      dtype: "float32",
      shape: [4, 8],
      onRelease: () => ctx.freeWebGPU(xPtr),
    });
    const tx = await tvmBinding.tensorToTvm(x);
    tvm.beginScope();
    const ty = vm.getFunction("mlp")(tx);
    const tyBuffer: GPUBuffer = gpu.gpuBufferFromPtr(ty.getDataPtr());
    const y1 = tvmBinding.tensorFromTvm(ty);
    tvm.endScope();
    const lx = await lrBinding.tensorToLiteRt(y1);
    const lxInfo = adapters.handoffInfo(lx);
    const lxSame =
      litert.getGlobalLiteRt().liteRtWasm.WebGPU.getJsObject(lx.liteRtTensorBuffer.getWebGpuBuffer()) === tyBuffer;
    const [ly] = await model.run([lx]);
    const y2 = lrBinding.tensorFromLiteRt(ly);
    const bytesBeforeReadback = w.gpuReadBytes - baseline.read;
    const values = Array.from(new Float32Array(await ctx.readback(y2.data, { byteLength: y2.nbytes })));
    const bytesAfterReadback = w.gpuReadBytes - baseline.read;
    const maxErr = Math.max(...values.map((v, i) => Math.abs(v - ref.chain_litert.flat()[i])));

    tx.dispose();
    x.dispose();
    y1.dispose();
    const tvmOutputAliveWhileLiteRtReads = ty.handle !== 0;
    lx.delete();
    const tvmOutputDisposedAfterLiteRt = ty.handle === 0;
    y2.dispose();
    model.delete();
    vm.dispose();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return {
      lxInfo,
      lxSame,
      bytesBeforeReadback,
      bytesAfterReadback,
      maxErr,
      count: values.length,
      tvmOutputAliveWhileLiteRtReads,
      tvmOutputDisposedAfterLiteRt,
      lent: tvmBinding.lentBuffers(),
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
      leaks: ctx.leaks().length,
    };
  });
  expect(r.lxInfo).toEqual({ zeroCopy: true, isCopied: false, reason: null });
  expect(r.lxSame).toBe(true);
  expect(r.bytesBeforeReadback).toBe(0);
  expect(r.bytesAfterReadback).toBe(128);
  expect(r.count).toBe(32);
  expect(r.maxErr).toBeLessThan(1e-5);
  expect(r.tvmOutputAliveWhileLiteRtReads).toBe(true);
  expect(r.tvmOutputDisposedAfterLiteRt).toBe(true);
  expect(r.lent).toBe(0);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
  expect(r.leaks).toBe(0);
});
