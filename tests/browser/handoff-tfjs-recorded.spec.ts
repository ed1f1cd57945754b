/**
 * TF.js records its dispatches in a compute pass it submits later (on a data read, or every few ops). Every
 * webdlpack transfer, readback and hand-off on its device first submits that work (queue-users.ts; TF.js is
 * registered there like tvmjs), never from inside one of TF.js's own ops. In real Chromium with the real
 * tfjs-backend-webgpu, with no TF.js data read and no explicit flush between the op and webdlpack:
 * - a TF.js op's result, taken by webdlpack or registered as a raw buffer, reads back and copies with the op's
 *   values;
 * - a write by webdlpack into a buffer a recorded TF.js op reads (an upload, a GPU copy, an ORT output written in
 *   it) comes after that read: the op sees the values it was given.
 */
import { frameworksTest as test, expect } from "./fixtures.js";

test("a TF.js op's result read back or copied right after the op has the op's values", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, tf, WebGPUBackend } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    tf.env().set("WEBGPU_CPU_FORWARD", false); // small ops on the GPU too
    tf.env().set("WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE", 1000); // TF.js keeps every op recorded until a read
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const a = tf.tensor1d([1, 2, 3, 4]);
    const b = tf.tensor1d([10, 20, 30, 40]);
    const floats = (bytes: ArrayBuffer) => Array.from(new Float32Array(bytes));
    // (1) Through the TF.js adapter, then read back.
    const sum = tf.add(a, b); // recorded
    const recorded1 = backend.commandEncoder != null;
    const fromTf = await adapters.tensorFromTfjs(tf, sum);
    const viaAdapter = floats(await ctx.readback(fromTf.data));
    // (2) TF.js's buffer registered as it is (no adapter): the readback submits TF.js's work first.
    const product = tf.mul(a, b); // recorded
    const recorded2 = backend.commandEncoder != null;
    const raw: GPUBuffer = backend.tensorMap.get(product.dataId).resource;
    const ptr = ctx.registerGPUBuffer(raw, { owned: false });
    const viaRaw = floats(await ctx.readback(ptr));
    ctx.freeWebGPU(ptr);
    // (3) TF.js's buffer as a Tensor (no adapter), copied on the GPU right after the op: the copy comes after it.
    const diff = tf.sub(b, a); // recorded
    const recorded3 = backend.commandEncoder != null;
    const asTensor = adapters.tensorFromGPUBuffer(backend.tensorMap.get(diff.dataId).resource, {
      dtype: "float32",
      shape: [4],
    });
    const copied = await adapters.copyGPUTensor(asTensor);
    const viaCopy = Array.from(await adapters.readTensor(copied));
    for (const t of [fromTf, asTensor, copied]) t.dispose();
    for (const t of [a, b, sum, product, diff]) t.dispose();
    return {
      recorded: [recorded1, recorded2, recorded3],
      viaAdapter,
      viaRaw,
      viaCopy,
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
    };
  });
  expect(r.recorded).toEqual([true, true, true]); // each op was still recorded, not submitted, when webdlpack came
  expect(r.viaAdapter).toEqual([11, 22, 33, 44]);
  expect(r.viaRaw).toEqual([10, 40, 90, 160]);
  expect(r.viaCopy).toEqual([9, 18, 27, 36]);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
});

test("webdlpack's writes into a buffer a recorded TF.js op reads come after that read", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    tf.env().set("WEBGPU_CPU_FORWARD", false);
    tf.env().set("WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE", 1000);
    const model = new Uint8Array(await (await fetch("/tests/data/mlp.onnx")).arrayBuffer());
    const binding = adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const x = await testkit.gpuTensor(ctx, [1, 2, 3, 4], [4]);
    const xt = await adapters.tensorToTfjs(tf, x);
    const shared = adapters.handoffInfo(xt).zeroCopy;
    // (1) An upload into x right after a TF.js op that reads it.
    const doubled = tf.mul(xt, 2); // recorded: reads x's buffer when submitted
    const recorded1 = backend.commandEncoder != null;
    ctx.upload(x.data, new Float32Array([100, 200, 300, 400]));
    const afterUpload = Array.from(await doubled.data());
    // (2) A GPU copy into x right after a TF.js op that reads it.
    const plusOne = tf.add(xt, 1); // recorded
    const recorded2 = backend.commandEncoder != null;
    const src = await testkit.gpuTensor(ctx, [-1, -2, -3, -4], [4]);
    ctx.copyBuffer(src.data, x.data, { byteLength: 16 });
    const afterCopy = Array.from(await plusOne.data());
    // (3) x handed to ORT as the output it writes (a pre-allocated fetch), right after a TF.js op reads it.
    const y = await testkit.gpuTensor(ctx, new Float32Array(32), [4, 8]);
    const yt = await adapters.tensorToTfjs(tf, y);
    const ySum = tf.sum(yt); // recorded: y is all zeros
    const recorded3 = backend.commandEncoder != null;
    const input = await testkit.gpuTensor(
      ctx,
      Array.from({ length: 32 }, (_, i) => i / 32),
      [4, 8],
    );
    const xo = await binding.tensorToOrt(input);
    const yo = await binding.tensorToOrt(y, { mayWrite: true, copy: "never" }); // y is writable: lent as it is
    await session.run({ X: xo }, { Y: yo });
    const ortWrote = Array.from(await adapters.readTensor(y)).some((v) => v !== 0);
    const sumAfterOrt = (await ySum.data())[0];
    for (const t of [doubled, plusOne, ySum, xt, yt]) t.dispose();
    for (const t of [xo, yo]) t.dispose();
    for (const t of [x, src, y, input]) t.dispose();
    await session.release();
    return {
      shared,
      recorded: [recorded1, recorded2, recorded3],
      afterUpload,
      afterCopy,
      ortWrote,
      sumAfterOrt,
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
    };
  });
  expect(r.shared).toBe(true);
  expect(r.recorded).toEqual([true, true, true]);
  expect(r.afterUpload).toEqual([2, 4, 6, 8]); // x as it was when the op came, not the upload's
  expect(r.afterCopy).toEqual([101, 201, 301, 401]); // x after the upload, before the copy
  expect(r.ortWrote).toBe(true);
  expect(r.sumAfterOrt).toBe(0); // y as it was when the sum came, not ORT's output
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
});

test("inside TF.js's own createBuffer (mid-op), a page's pressure handler that reads back never makes TF.js submit", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, tf, WebGPUBackend, testkit } = window as any;
    const kit = await import("/tests/browser/budget-kit.js" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const watch = kit.watchErrors(ctx.getWebGPUDevice(0));
    const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    tf.env().set("WEBGPU_CPU_FORWARD", false);
    tf.env().set("WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE", 1000);
    const x = await testkit.gpuTensor(ctx, [1, 2, 3, 4], [4]);
    // TF.js allocates through its buffer manager while it records an op: count its submits made meanwhile.
    let allocating = 0;
    let submitsMidOp = 0;
    let submits = 0;
    const acquire = backend.bufferManager.acquireBuffer.bind(backend.bufferManager);
    backend.bufferManager.acquireBuffer = (...args: unknown[]) => {
      allocating += 1;
      try {
        return acquire(...args);
      } finally {
        allocating -= 1;
      }
    };
    const submitQueue = backend.submitQueue.bind(backend);
    backend.submitQueue = () => {
      submits += 1;
      if (allocating > 0) submitsMidOp += 1;
      submitQueue();
    };
    // The page's handler reads a tensor back whenever memory is short: a transfer, which submits what the
    // libraries on the device recorded — except TF.js while the pressure comes from inside its createBuffer.
    const askedBy: string[] = [];
    // (Past the budget a readback's own staging may be refused: OUT_OF_MEMORY. It asked for the flush before.)
    const reads: Promise<string>[] = [];
    const off = ctx.onMemoryPressure((p: { requestedBy: string }) => {
      askedBy.push(p.requestedBy);
      reads.push(
        ctx.readback(x.data).then(
          (b: ArrayBuffer) => new Float32Array(b).join(),
          (err: { code?: string }) => String(err?.code),
        ),
      );
    });
    const N = 2 ** 20; // 4 MiB of float32 per tensor, on a 6 MiB headroom
    await kit.budgetAboveHeld(ctx, 6 * 2 ** 20);
    const kept = Array.from({ length: 4 }, (_, i) => tf.tidy(() => tf.add(tf.fill([N], i), 1)));
    const recorded = backend.commandEncoder != null;
    const submitsDuringOps = submits;
    const read = await Promise.all(reads);
    const readOk = read.every((v) => v === "1,2,3,4" || v === "OUT_OF_MEMORY");
    const keptOk = [];
    for (let i = 0; i < kept.length; i++) {
      const v = await kept[i].data();
      keptOk.push(v[0] === i + 1 && v[N - 1] === i + 1);
    }
    off();
    ctx.setMemoryBudget(null);
    for (const t of kept) t.dispose();
    x.dispose();
    return {
      fromTfjs: askedBy.filter((o) => o === "tfjs").length,
      reads: reads.length,
      recorded,
      submitsDuringOps,
      submitsMidOp,
      submits,
      readOk,
      keptOk,
      errors: watch.stop(),
    };
  });
  expect(r.fromTfjs, "pressure came from inside TF.js's createBuffer").toBeGreaterThan(0);
  expect(r.reads).toBeGreaterThan(0);
  expect(r.submitsMidOp, "TF.js never submitted from inside its own allocation").toBe(0);
  expect(r.recorded, "TF.js's ops were still recorded after the handler's readbacks").toBe(true);
  expect(r.submitsDuringOps).toBe(0);
  expect(r.submits).toBeGreaterThan(0); // its data() reads submitted afterwards
  expect(r.readOk).toBe(true);
  expect(r.keptOk).toEqual([true, true, true, true]);
  expect(r.errors).toEqual([]);
});
