/**
 * ONNX Runtime Web ↔ webdlpack ↔ TensorFlow.js on one shared WebGPU device, in
 * real Chromium (SwiftShader). Each test gets a fresh page (tests/browser/adapters.html).
 *
 * GPU → CPU traffic is counted by wrapping GPUBuffer.prototype.mapAsync: every
 * READ mapping adds its byte count. Hand-offs must add nothing; only the final
 * read back does.
 */
import type { Page } from "@playwright/test";
import { cachedTest as test, countGpuReads, expect, openAdaptersPage } from "./fixtures.js";

/** Open the adapters page, then count bytes mapped for reading (GPU → CPU) from there on. */
async function openCountingPage(page: Page): Promise<void> {
  await openAdaptersPage(page);
  await countGpuReads(page);
}

test.beforeEach(async ({ page }) => {
  await openCountingPage(page);
});

test("ORT output → TF.js (same GPUBuffer) → TF.js op → webdlpack → read back matches NumPy", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, loadMlp } = window as any;
    const w = window as unknown as { gpuReadBytes: number };
    const { ref, model } = await loadMlp();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    // setup() reads back while it measures transfers (once per adapter and page): count from here on.
    const readAtSetup = w.gpuReadBytes;
    const device = ctx.getWebGPUDevice(0);
    const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const binding = adapters.bindOrtToContext(ort, ctx);
    const baseline = ctx.stats().livePointers;
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    const x = new ort.Tensor("float32", Float32Array.from(ref.input.flat()), [4, 8]);
    const { Y } = await session.run({ X: x });

    const t = binding.tensorFromOrt(Y);
    const sameAsOrt = ctx.gpuPointerToBuffer(t.data) === Y.gpuBuffer;
    const tt = await adapters.tensorToTfjs(tf, t);
    const sameInTfjs = backend.tensorMap.get(tt.dataId).resource === Y.gpuBuffer;
    const s = tf.sigmoid(tt);
    const out = await adapters.tensorFromTfjs(tf, s);
    const sharedOut = ctx.gpuPointerToBuffer(out.data) === backend.tensorMap.get(s.dataId).resource;
    const bytesBeforeReadback = w.gpuReadBytes - readAtSetup;
    const values = Array.from(await adapters.readTensor(out)) as number[];
    const bytesAfterReadback = w.gpuReadBytes - readAtSetup;

    const tShape = [...t.shape];
    // One ledger: both adapter tensors are "tensor" entries under their framework's name; an adopted ORT output is
    // that one entry (its pointer is registered untracked), an adopted TF.js buffer has its own "gpu-buffer" entry.
    const row = (ptr: number, kind: string) => {
      const e = ctx.ledger
        .entries()
        .find((x: { pointer: number; kind: string }) => x.pointer === ptr && x.kind === kind);
      return e === undefined ? null : { owner: e.owner, deviceId: e.deviceId, bytes: e.bytes, aged: e.ageMs >= 0 };
    };
    const ledgerLive = {
      ortTensor: row(t.data, "tensor"),
      ortBuffer: row(t.data, "gpu-buffer"),
      tfjsTensor: row(out.data, "tensor"),
      tfjsBuffer: row(out.data, "gpu-buffer"),
    };
    const [tPtr, outPtr] = [t.data, out.data];
    const outFlags = { readOnly: out.flags.readOnly, isCopied: out.flags.isCopied };
    // Lifetime: the ORT output outlives the webdlpack tensor while TF.js still reads it.
    t.dispose();
    const ortAliveWhileTfjsHolds = Y.location === "gpu-buffer";
    const tfHeld = adapters.tfjsHeldBuffers(backend);
    tt.dispose();
    const ortDisposedAfterTfjs = Y.location === "none";
    out.dispose();
    s.dispose();
    const ledgerGone = ctx.ledger
      .entries()
      .filter((x: { pointer: number }) => x.pointer === tPtr || x.pointer === outPtr).length;
    return {
      ledgerLive,
      ledgerGone,
      guardOwners: ctx.stats().devices[0].guardOwners,
      sameAsOrt,
      sameInTfjs,
      sharedOut,
      zeroCopyIn: adapters.handoffInfo(tt),
      outFlags,
      tShape,
      bytesBeforeReadback,
      bytesAfterReadback,
      values,
      expected: ref.tfjs_sigmoid.flat(),
      ortAliveWhileTfjsHolds,
      tfHeld,
      ortDisposedAfterTfjs,
      leftoverPointers: ctx.stats().livePointers - baseline,
      // ORT and TF.js hold the device through their guards (a destroy() from one only drops its reference).
      deviceIsShared:
        webdlpack.unwrapDevice(binding.device) === device &&
        webdlpack.unwrapDevice(ort.env.webgpu.device) === device &&
        webdlpack.unwrapDevice(backend.device) === device &&
        binding.device !== device &&
        backend.device !== device,
    };
  });
  expect(r.sameAsOrt).toBe(true);
  expect(r.sameInTfjs).toBe(true);
  expect(r.sharedOut).toBe(true);
  expect(r.zeroCopyIn).toEqual({ zeroCopy: true, isCopied: false, reason: null });
  expect(r.outFlags).toEqual({ readOnly: true, isCopied: false });
  expect(r.tShape).toEqual([4, 8]);
  expect(r.bytesBeforeReadback).toBe(0);
  expect(r.bytesAfterReadback).toBe(128);
  expect(r.values).toHaveLength(32);
  r.values.forEach((v: number, i: number) => expect(Math.abs(v - r.expected[i])).toBeLessThan(1e-5));
  expect(r.ortAliveWhileTfjsHolds).toBe(true);
  expect(r.tfHeld).toBe(1);
  expect(r.ortDisposedAfterTfjs).toBe(true);
  expect(r.leftoverPointers).toBe(0);
  expect(r.deviceIsShared).toBe(true);
  expect(r.guardOwners).toEqual(expect.arrayContaining(["onnxruntime-web", "tfjs"]));
  expect(r.ledgerLive).toEqual({
    ortTensor: { owner: "onnxruntime-web", deviceId: 0, bytes: 4 * 8 * 4, aged: true },
    ortBuffer: null, // one entry per adopted output: the tensor's (its pointer is registered untracked)
    tfjsTensor: { owner: "tfjs", deviceId: 0, bytes: 4 * 8 * 4, aged: true },
    tfjsBuffer: { owner: "tfjs", deviceId: 0, bytes: expect.any(Number), aged: true },
  });
  expect(r.ledgerGone).toBe(0);
});

test("TF.js tensor with unsubmitted work → webdlpack → ORT input (zero-copy) → right output", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, loadMlp } = window as any;
    const w = window as unknown as { gpuReadBytes: number };
    const { ref, model } = await loadMlp();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const readAtSetup = w.gpuReadBytes; // setup() measures transfers: count from here on
    const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx, "webdlpack-webgpu");
    // Small ops would run on the CPU; force the GPU so TF.js has recorded, unsubmitted work.
    tf.env().set("WEBGPU_CPU_FORWARD", false);
    const binding = adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    // x * 2 * 0.5 computed by TF.js: recorded in a compute pass TF.js has not submitted yet.
    const raw = tf.tensor(Float32Array.from(ref.input.flat()), [4, 8], "float32");
    const xt = tf.mul(tf.mul(raw, 2), 0.5);
    const pendingBefore = backend.commandEncoder !== null;
    const xd = await adapters.tensorFromTfjs(tf, xt);
    const xo = await binding.tensorToOrt(xd);
    const same = xo.gpuBuffer === backend.tensorMap.get(xt.dataId).resource;
    const info = adapters.handoffInfo(xo);
    const { Y } = await session.run({ X: xo });
    const y = binding.tensorFromOrt(Y);
    const before = w.gpuReadBytes - readAtSetup;
    const values = Array.from(await adapters.readTensor(y)) as number[];
    y.dispose();
    xo.dispose();
    xd.dispose();
    xt.dispose();
    raw.dispose();
    return { backendName: tf.getBackend(), pendingBefore, same, info, before, values, expected: ref.output.flat() };
  });
  expect(r.backendName).toBe("webdlpack-webgpu");
  expect(r.pendingBefore).toBe(true);
  expect(r.same).toBe(true);
  expect(r.info).toEqual({ zeroCopy: true, isCopied: false, reason: null });
  expect(r.before).toBe(0);
  r.values.forEach((v: number, i: number) => expect(Math.abs(v - r.expected[i])).toBeLessThan(1e-5));
});

test("byte_offset != 0 and strided inputs to ORT are copied on the GPU (IS_COPIED) and give the right values", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, loadMlp } = window as any;
    const { ref, model } = await loadMlp();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const binding = adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    const input = Float32Array.from(ref.input.flat());
    const results: Record<string, unknown> = {};

    // (a) contiguous at byte_offset 20 (copyBufferToBuffer path)
    const ptrA = await ctx.allocWebGPUChecked(20 + input.byteLength);
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptrA), 20, input);
    const a = webdlpack.Tensor.webgpu({ pointer: ptrA, deviceId: 0, dtype: "float32", shape: [4, 8], byteOffset: 20 });
    // (b) the transpose of an [8, 4] row-major array (shader path)
    const transposed = new Float32Array(32);
    for (let i = 0; i < 4; i++) for (let j = 0; j < 8; j++) transposed[j * 4 + i] = input[i * 8 + j]!;
    const ptrB = await ctx.allocWebGPUChecked(transposed.byteLength);
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptrB), 0, transposed);
    const b = webdlpack.Tensor.webgpu({ pointer: ptrB, deviceId: 0, dtype: "float32", shape: [4, 8], strides: [1, 4] });
    // (c) negative strides: rows stored in reverse order
    const reversed = new Float32Array(32);
    for (let i = 0; i < 4; i++) for (let j = 0; j < 8; j++) reversed[(3 - i) * 8 + j] = input[i * 8 + j]!;
    const ptrC = await ctx.allocWebGPUChecked(reversed.byteLength);
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptrC), 0, reversed);
    const c = webdlpack.Tensor.webgpu({
      pointer: ptrC,
      deviceId: 0,
      dtype: "float32",
      shape: [4, 8],
      strides: [-8, 1],
      byteOffset: 3 * 8 * 4,
    });

    for (const [name, t] of [
      ["offset", a],
      ["strided", b],
      ["negative", c],
    ] as const) {
      const xo = await binding.tensorToOrt(t);
      const info = adapters.handoffInfo(xo);
      const { Y } = await session.run({ X: xo });
      const y = binding.tensorFromOrt(Y);
      results[name] = { info, values: Array.from(await adapters.readTensor(y)) };
      y.dispose();
      xo.dispose();
    }
    let never: unknown = null;
    try {
      await binding.tensorToOrt(a, { copy: "never" });
    } catch (e) {
      never = { code: (e as { code: string }).code, message: String((e as Error).message) };
    }
    const live = ctx.stats().livePointers;
    ctx.freeWebGPU(ptrA);
    ctx.freeWebGPU(ptrB);
    ctx.freeWebGPU(ptrC);
    return { results, never, expected: ref.output.flat(), live, liveAfter: ctx.stats().livePointers };
  });
  for (const name of ["offset", "strided", "negative"]) {
    const got = r.results[name] as { info: { isCopied: boolean; zeroCopy: boolean; reason: string }; values: number[] };
    expect(got.info.isCopied, name).toBe(true);
    expect(got.info.zeroCopy, name).toBe(false);
    got.values.forEach((v, i) => expect(Math.abs(v - r.expected[i]), `${name}[${i}]`).toBeLessThan(1e-5));
  }
  expect((r.results.offset as { info: { reason: string } }).info.reason).toContain("byte_offset 20");
  expect((r.results.strided as { info: { reason: string } }).info.reason).toContain("strides");
  expect(r.never).toMatchObject({ code: "COPY_REQUIRED" });
  expect(r.live).toBe(3); // the three inputs; every copy and ORT output was released
  expect(r.liveAfter).toBe(0);
});

test("bool crosses between DLPack (1 byte) and TF.js (4 bytes) through GPU conversion; missing types are refused", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const bits = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1];
    // DLPack bool [11] on the GPU, starting at byte 3 (a misaligned start)
    const ptr = await ctx.allocWebGPUChecked(16);
    const bytes = new Uint8Array(16);
    bytes.set(bits, 3);
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, bytes);
    const b = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "bool", shape: [11], byteOffset: 3 });
    const tb = await adapters.tensorToTfjs(tf, b);
    const tfValues = Array.from(await tb.data());
    const toTfjs = { dtype: tb.dtype, info: adapters.handoffInfo(tb), values: tfValues };
    // TF.js bool → DLPack bool
    const src = tf.tensor([3, -1, 2, 0, 5, -4], [2, 3], "float32");
    const g = tf.greater(src, 0);
    const back = await adapters.tensorFromTfjs(tf, g);
    const fromTfjs = {
      dtype: { ...back.dtype },
      flags: { ...back.flags },
      values: Array.from(await adapters.readTensor(back)),
      nbytes: back.nbytes,
    };
    // ORT takes 1-byte bool from a GPU buffer as it is.
    const ob = await adapters.tensorToOrt(ort, b);
    const ortBool = { type: ob.type, info: adapters.handoffInfo(ob) };
    ob.dispose();
    const errors: Record<string, unknown> = {};
    const f16 = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float16", shape: [4] });
    const bf16 = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "bfloat16", shape: [4] });
    const i8 = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "int8", shape: [4] });
    for (const [name, fn] of [
      ["f16→tfjs", () => adapters.tensorToTfjs(tf, f16)],
      ["bf16→ort", () => adapters.tensorToOrt(ort, bf16)],
      ["int8→ort(gpu)", () => adapters.tensorToOrt(ort, i8)],
      ["complex64←tfjs", () => adapters.tensorFromTfjs(tf, tf.complex([1], [2]))],
    ] as const) {
      try {
        await fn();
        errors[name] = "no error";
      } catch (e) {
        const err = e as { code: string; message: string; field: string };
        errors[name] = { code: err.code, message: err.message, field: err.field };
      }
    }
    b.dispose();
    back.dispose();
    tb.dispose();
    g.dispose();
    src.dispose();
    ctx.freeWebGPU(ptr);
    return { toTfjs, fromTfjs, ortBool, errors, bits, live: ctx.stats().livePointers };
  });
  expect(r.toTfjs.dtype).toBe("bool");
  expect(r.toTfjs.info.isCopied).toBe(true);
  expect(r.toTfjs.values).toEqual(r.bits);
  expect(r.fromTfjs.dtype).toEqual({ code: 6, bits: 8, lanes: 1 });
  expect(r.fromTfjs.flags.isCopied).toBe(true);
  expect(r.fromTfjs.nbytes).toBe(6);
  expect(r.fromTfjs.values).toEqual([1, 0, 1, 0, 1, 0]);
  expect(r.ortBool.type).toBe("bool");
  expect(r.ortBool.info.isCopied).toBe(true); // byte_offset 3
  expect(r.errors["f16→tfjs"]).toMatchObject({ code: "UNSUPPORTED", field: "dtype" });
  expect((r.errors["f16→tfjs"] as { message: string }).message).toContain(
    "TF.js has no float16 tensors: on the GPU a TF.js tensor is float32, int32 or bool. Before handing the tensor to TF.js, cast it to float32",
  );
  expect(r.errors["bf16→ort"]).toMatchObject({ code: "UNSUPPORTED" });
  expect((r.errors["bf16→ort"] as { message: string }).message).toContain("bfloat16");
  expect(r.errors["int8→ort(gpu)"]).toMatchObject({ code: "UNSUPPORTED", field: "tensor.dtype" });
  expect(r.errors["complex64←tfjs"]).toMatchObject({ code: "UNSUPPORTED", field: "tf.Tensor.dtype" });
  expect(r.live).toBe(0);
});

test("ORT already bound to another device is reported with a typed error", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort } = window as any;
    const model = new Uint8Array(await (await fetch("/tests/data/mlp.onnx")).arrayBuffer());
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const catchErr = async (fn: () => unknown) => {
      try {
        await fn();
        return "no error";
      } catch (e) {
        const err = e as { code: string; field: string; message: string };
        return { code: err.code, field: err.field, message: err.message };
      }
    };
    // A session made without webdlpack's options: ORT creates its own device.
    await ort.InferenceSession.create(model, { executionProviders: ["webgpu"] });
    const ortOwn = ort.env.webgpu.device;
    const bind = await catchErr(() => adapters.bindOrtToContext(ort, ctx));
    const ptr = await ctx.allocWebGPUChecked(128);
    const t = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4, 8] });
    const toOrt = await catchErr(() => adapters.tensorToOrt(ort, t));
    const opts = await catchErr(() =>
      adapters.ortSessionOptions(ctx, { executionProviders: [{ name: "webgpu", device: ortOwn }] }),
    );
    ctx.freeWebGPU(ptr);
    return { differs: ortOwn !== undefined && ortOwn !== ctx.getWebGPUDevice(0), bind, toOrt, opts };
  });
  expect(r.differs).toBe(true);
  expect(r.bind).toMatchObject({ code: "BAD_DEVICE", field: "ort.env.webgpu.device" });
  expect((r.bind as { message: string }).message).toContain("already bound to another GPUDevice");
  expect(r.toOrt).toMatchObject({ code: "BAD_DEVICE", field: "ort.env.webgpu.device" });
  expect(r.opts).toMatchObject({ code: "BAD_DEVICE", field: "extra.executionProviders[0].device" });
});
