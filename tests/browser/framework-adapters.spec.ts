/**
 * The LiteRT.js and Transformers.js adapters with the real packages in
 * Chromium (WebGPU on SwiftShader), page tests/browser/frameworks.html: the
 * device LiteRT gets, copies where LiteRT cannot read in place, output leases,
 * and every refusal as a typed error naming its field.
 */
import { cachedTest as test, expect, openFrameworksPage } from "./fixtures.js";

test.beforeEach(async ({ page }) => {
  await openFrameworksPage(page);
});

test("bindLiteRtToContext: refused before loadLiteRt; then LiteRT's default environment is the shared device and its own device is destroyed", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, litert, loadLiteRtLocal, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const early = await testkit.failure(() => adapters.bindLiteRtToContext(litert, ctx));
    const notLiteRt = await testkit.failure(() => adapters.bindLiteRtToContext({}, ctx));
    await loadLiteRtLocal();
    const own: GPUDevice = litert.getWebGpuDevice();
    const ownLost = own.lost.then((info: GPUDeviceLostInfo) => info.reason);
    const binding = await adapters.bindLiteRtToContext(litert, ctx);
    const reason = await Promise.race([ownLost, new Promise((resolve) => setTimeout(() => resolve("not lost"), 2000))]);
    const device = ctx.getWebGPUDevice(0);
    // Binding again leaves the first binding's environment (on the shared device) usable.
    const model = await litert.loadAndCompile("/tests/data/litert_fc.tflite", { accelerator: "webgpu" });
    const again = await adapters.bindLiteRtToContext(litert, ctx);
    const [y] = await model.run([new litert.Tensor(new Float32Array(32).fill(1), [4, 8])]);
    const firstStillRuns = y.accelerator === "webgpu" && (await y.data()).length === 32;
    y.delete();
    model.delete();
    return {
      early: { code: early.code, field: early.field },
      notLiteRt: notLiteRt.code,
      ownWasOther: own !== device,
      ownReason: reason,
      defaultIsShared: webdlpack.unwrapDevice(litert.getWebGpuDevice()) === device,
      firstEnvReplaced:
        litert.getDefaultEnvironment() === again.environment && again.environment !== binding.environment,
      firstStillRuns,
      guardOwners: ctx.stats().devices[0].guardOwners,
    };
  });
  expect(r.early).toEqual({ code: "INVALID_ARGUMENT", field: "litert" });
  expect(r.notLiteRt).toBe("INVALID_ARGUMENT");
  expect(r.ownWasOther).toBe(true);
  expect(r.ownReason).toBe("destroyed");
  expect(r.defaultIsShared).toBe(true);
  expect(r.firstEnvReplaced).toBe(true);
  expect(r.firstStillRuns).toBe(true);
  expect(r.guardOwners).toContain("litert");
});

test("tensorToLiteRt: in place when it can, a GPU copy for byte_offset (IS_COPIED, right values), LiteRT's own copy for CPU; refusals are typed", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, litert, loadLiteRtLocal, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    await loadLiteRtLocal();
    const lr = await adapters.bindLiteRtToContext(litert, ctx);
    const ref = await (await fetch("/tests/data/litert_chain_reference.json")).json();
    const input = Float32Array.from(ref.input.flat());
    const model = await litert.loadAndCompile("/tests/data/litert_fc.tflite", { accelerator: "webgpu" });
    const run = async (lx: unknown) => {
      const [ly] = await model.run([lx]);
      const t = lr.tensorFromLiteRt(ly);
      const values = Array.from(await adapters.readTensor(t)) as number[];
      t.dispose();
      return Math.max(...values.map((v, i) => Math.abs(v - ref.litert.flat()[i])));
    };
    // At byte_offset 16: LiteRT takes no offset, so the adapter copies on the GPU.
    const ptr = await ctx.allocWebGPU(16 + input.byteLength);
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 16, input);
    const shifted = webdlpack.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [4, 8],
      byteOffset: 16,
    });
    const never = await testkit.failure(() => lr.tensorToLiteRt(shifted, { copy: "never" }));
    const copied = await lr.tensorToLiteRt(shifted);
    const copiedInfo = adapters.handoffInfo(copied);
    const copiedErr = await run(copied);
    const pointersWithCopy = ctx.stats().livePointers;
    copied.delete(); // frees the copy
    const copyFreed = ctx.stats().livePointers === pointersWithCopy - 1;
    // A CPU tensor: LiteRT copies it into its heap (and to the GPU at run).
    const cpu = webdlpack.Tensor.fromTypedArray(input, { shape: [4, 8] });
    const cpuNever = await testkit.failure(() => lr.tensorToLiteRt(cpu, { copy: "never" }));
    const fromCpu = await lr.tensorToLiteRt(cpu);
    const cpuInfo = adapters.handoffInfo(fromCpu);
    const cpuErr = await run(fromCpu);
    fromCpu.delete();
    // Types LiteRT.js lacks, and an environment on another device.
    const f16 = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float16", shape: [4] });
    const badType = await testkit.failure(() => lr.tensorToLiteRt(f16));
    const otherDevice = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const otherEnv = await litert.Environment.create({ webGpuDevice: otherDevice });
    const contiguous = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4] });
    const badEnv = await testkit.failure(() => adapters.tensorToLiteRt(litert, contiguous, { environment: otherEnv }));
    const cpuEnv = await litert.Environment.create({ webGpuDevice: null });
    const noGpuEnv = testkit.codeOf(() => adapters.checkLiteRtEnvironment(cpuEnv, ctx));
    otherEnv.delete();
    cpuEnv.delete();
    otherDevice.destroy();
    shifted.dispose();
    f16.dispose();
    contiguous.dispose();
    cpu.dispose();
    ctx.freeWebGPU(ptr);
    model.delete();
    return {
      never: { code: never.code, message: never.message },
      copiedInfo,
      copiedErr,
      copyFreed,
      cpuNever: cpuNever.code,
      cpuInfo,
      cpuErr,
      badType: { code: badType.code, field: badType.field, value: badType.value },
      badEnv: { code: badEnv.code, field: badEnv.field },
      noGpuEnv,
      leaks: ctx.leaks().length,
      produced: adapters.liveProducedTensors(),
    };
  });
  expect(r.never.code).toBe("COPY_REQUIRED");
  expect(r.never.message).toContain("byte_offset 16");
  expect(r.copiedInfo).toEqual({ zeroCopy: false, isCopied: true, reason: expect.stringContaining("byte_offset 16") });
  expect(r.copiedErr).toBeLessThan(1e-5);
  expect(r.copyFreed).toBe(true);
  expect(r.cpuNever).toBe("COPY_REQUIRED");
  expect(r.cpuInfo).toEqual({ zeroCopy: false, isCopied: true, reason: expect.stringContaining("wasm heap") });
  expect(r.cpuErr).toBeLessThan(1e-5);
  expect(r.badType).toEqual({ code: "UNSUPPORTED", field: "tensor.dtype", value: "float16" });
  expect(r.badEnv).toEqual({ code: "BAD_DEVICE", field: "environment.webGpuDevice" });
  expect(r.noGpuEnv).toBe("BAD_DEVICE");
  expect(r.leaks).toBe(0);
  expect(r.produced).toBe(0);
});

test("tensorFromLiteRt: one lease per output shared by every holder; deleted, CPU and foreign-device outputs are refused", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, litert, loadLiteRtLocal, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    await loadLiteRtLocal();
    const lr = await adapters.bindLiteRtToContext(litert, ctx);
    const x = new Float32Array(32).fill(1);
    const gpuModel = await litert.loadAndCompile("/tests/data/litert_fc.tflite", { accelerator: "webgpu" });
    const [ly] = await gpuModel.run([new litert.Tensor(x, [4, 8])]);
    const buffer: GPUBuffer = ly.toGpuBuffer();
    const pointersBefore = ctx.stats().livePointers;
    const a = lr.tensorFromLiteRt(ly);
    const b = lr.tensorFromLiteRt(ly); // the same adoption: one pointer, two holders
    const onePointer = a.data === b.data && ctx.stats().livePointers === pointersBefore + 1;
    const ledger = ctx.ledger
      .entries()
      .filter((e: { pointer: number }) => e.pointer === a.data)
      .map((e: { kind: string; owner: string }) => `${e.kind}:${e.owner}`)
      .sort();
    const desc = { shape: [...a.shape], sameBuffer: ctx.gpuPointerToBuffer(a.data) === buffer };
    a.dispose();
    const aliveWithB = !ly.deleted;
    const managed = b.retain(); // e.g. a DLPack export's hold
    b.dispose();
    const aliveWithHold = !ly.deleted;
    managed();
    const deletedAtLast = ly.deleted;
    const pointersAfter = ctx.stats().livePointers;
    // Refusals.
    const deleted = testkit.codeOf(() => lr.tensorFromLiteRt(ly));
    const notTensor = testkit.codeOf(() => lr.tensorFromLiteRt({}));
    const cpuModel = await litert.loadAndCompile("/tests/data/litert_fc.tflite", { accelerator: "wasm" });
    const [cy] = await cpuModel.run([new litert.Tensor(x, [4, 8])]);
    const cpuOut = await testkit.failure(() => lr.tensorFromLiteRt(cy));
    cy.delete();
    const otherDevice = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const otherEnv = await litert.Environment.create({ webGpuDevice: otherDevice });
    const otherModel = await litert.loadAndCompile("/tests/data/litert_fc.tflite", {
      accelerator: "webgpu",
      environment: otherEnv,
    });
    const [oy] = await otherModel.run([new litert.Tensor(x, [4, 8], otherEnv)]);
    const foreign = await testkit.failure(() => lr.tensorFromLiteRt(oy));
    oy.delete();
    otherModel.delete();
    cpuModel.delete();
    gpuModel.delete();
    otherEnv.delete();
    otherDevice.destroy();
    return {
      onePointer,
      ledger,
      desc,
      aliveWithB,
      aliveWithHold,
      deletedAtLast,
      pointersBack: pointersAfter === pointersBefore,
      deleted,
      notTensor,
      cpuOut: { code: cpuOut.code, field: cpuOut.field, value: cpuOut.value },
      foreign: { code: foreign.code, field: foreign.field },
      produced: adapters.liveProducedTensors(),
      leaks: ctx.leaks().length,
    };
  });
  expect(r.onePointer).toBe(true);
  // One ledger entry per holder, none for the adopted buffer itself (registered untracked).
  expect(r.ledger).toEqual(["tensor:litert", "tensor:litert"]);
  expect(r.desc).toEqual({ shape: [4, 8], sameBuffer: true });
  expect(r.aliveWithB).toBe(true);
  expect(r.aliveWithHold).toBe(true);
  expect(r.deletedAtLast).toBe(true);
  expect(r.pointersBack).toBe(true);
  expect(r.deleted).toBe("DISPOSED");
  expect(r.notTensor).toBe("INVALID_ARGUMENT");
  expect(r.cpuOut).toEqual({ code: "UNSUPPORTED", field: "litertTensor.accelerator", value: "wasm" });
  expect(r.foreign).toEqual({ code: "BAD_DEVICE", field: "environment.webGpuDevice" });
  expect(r.produced).toBe(0);
  expect(r.leaks).toBe(0);
});

test("decoder model: Transformers.js replaces preferredOutputLocation — logits come back on the CPU, the KV cache stays on the shared GPU and is adoptable once generate returns it", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, transformers } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const ref = await (await fetch("/tests/data/transformers/tiny-gpt2/reference.json")).json();
    const options = adapters.transformersOptions(ctx, {}, { env: transformers.env });
    const asked = options.session_options.preferredOutputLocation;
    const tokenizer = await transformers.AutoTokenizer.from_pretrained("tiny-gpt2");
    const model = await transformers.AutoModelForCausalLM.from_pretrained("tiny-gpt2", options);
    const inputs = tokenizer(ref.text);
    // One forward pass: what each output's location became.
    const out = await model(inputs);
    const locations = Object.fromEntries(
      Object.entries(out).map(([k, v]) => [k, (v as { location: string }).location]),
    );
    const logits = adapters.tensorFromTransformers(out.logits);
    const logitsDevice = logits.device.deviceType;
    const logitsErr = Math.max(
      ...(Array.from(out.logits.data) as number[]).map((v, i) => Math.abs(v - ref.logits.flat(2)[i])),
    );
    logits.dispose();
    for (const k of ["present.0.key", "present.0.value"]) out[k].dispose();
    // generate() hands its cache over only when asked (return_dict_in_generate); then it is the caller's.
    const g = await model.generate({ ...inputs, max_new_tokens: 2, do_sample: false, return_dict_in_generate: true });
    const cached = g.past_key_values["past_key_values.0.key"];
    const key = adapters.tensorFromTransformers(cached);
    const keySame = ctx.gpuPointerToBuffer(key.data) === cached.ort_tensor.gpuBuffer;
    const keyValues = Array.from(await adapters.readTensor(key)) as number[];
    const sequence = (Array.from(g.sequences.data) as bigint[]).map(Number);
    const cachedTokens = sequence.slice(0, key.shape[2]);
    const keyErr = Math.max(
      ...keyValues.map((v, i) => Math.abs(v - ref.embedding[cachedTokens[Math.floor(i / 8)]!][i % 8])),
    );
    const keyShape = [...key.shape];
    key.dispose();
    const keyReleased = cached.location === "none";
    await g.past_key_values.dispose(); // the value tensor (the key went back through the adapter)
    await model.dispose();
    return {
      asked,
      locations,
      logitsDevice,
      logitsErr,
      keySame,
      keyShape,
      keyErr,
      keyReleased,
      promptLength: ref.ids.length,
      leaks: ctx.leaks().length,
      produced: adapters.liveProducedTensors(),
    };
  });
  expect(r.asked).toBe("cpu");
  expect(r.locations).toEqual({ logits: "cpu", "present.0.key": "gpu-buffer", "present.0.value": "gpu-buffer" });
  expect(r.logitsDevice).toBe(1); // kDLCPU: a CPU tensor over the logits ORT read back
  expect(r.logitsErr).toBeLessThan(1e-5);
  expect(r.keySame).toBe(true);
  expect(r.keyShape.slice(0, 2)).toEqual([1, 1]);
  expect(r.keyShape[2]).toBeGreaterThanOrEqual(r.promptLength);
  expect(r.keyShape[3]).toBe(8);
  expect(r.keyErr).toBeLessThan(1e-6);
  expect(r.keyReleased).toBe(true);
  expect(r.leaks).toBe(0);
  expect(r.produced).toBe(0);
});

test("transformersOptions puts Transformers.js on the shared device and refuses other devices; tensorFromTransformers checks its input", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, testkit, transformers } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const options = adapters.transformersOptions(
      ctx,
      { dtype: "fp32", session_options: { logSeverityLevel: 3 } },
      { env: transformers.env }, // the real one: its version is in the supported range
    );
    const ep = options.session_options.executionProviders;
    return {
      device: options.device,
      dtype: options.dtype,
      log: options.session_options.logSeverityLevel,
      location: options.session_options.preferredOutputLocation,
      optIn: adapters.transformersOptions(ctx, { session_options: { preferredOutputLocation: "gpu-buffer" } })
        .session_options.preferredOutputLocation,
      ep: ep.map((e: { name: string }) => e.name),
      shared: webdlpack.unwrapDevice(ep[0].device) === ctx.getWebGPUDevice(0),
      wasm: await testkit.failure(() => adapters.transformersOptions(ctx, { device: "wasm" })),
      notTensor: testkit.codeOf(() => adapters.tensorFromTransformers({ dims: [1] })),
      old: await testkit.failure(() => adapters.transformersOptions(ctx, {}, { env: { version: "4.0.0" } })),
    };
  });
  expect(r).toMatchObject({
    device: "webgpu",
    dtype: "fp32",
    log: 3,
    location: "cpu",
    optIn: "gpu-buffer",
    ep: ["webgpu"],
    shared: true,
    notTensor: "INVALID_ARGUMENT",
  });
  expect(r.wasm).toMatchObject({ code: "BAD_DEVICE", field: "extra.device", value: "wasm" });
  expect(r.old).toMatchObject({ code: "UNSUPPORTED", field: "env.version", value: "4.0.0" });
  expect(r.old.message).toContain("@huggingface/transformers 4.3.1 or later");
});
