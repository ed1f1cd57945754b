/**
 * Teardown against the ownership rule (docs/ownership.md, "Teardown"): a framework torn down while webdlpack still
 * holds outputs it adopted. In real Chromium with the real packages (tests/browser/frameworks.html):
 * - tvmjs: `tvm.dispose()` destroys every buffer in its table; the outputs webdlpack holds are taken out first,
 *   stay readable and usable by TF.js, and are destroyed by their last holder's release.
 * - ORT-web and Transformers.js: after the last session's release ORT's `dispose()` of an output throws a raw wasm
 *   error; webdlpack's `dispose()` does not throw, and frees the buffer ORT can no longer take back.
 * - ORT 1.23–1.29 (the floor; `make test-matrix` runs this spec there): a session made from
 *   `binding.sessionOptions()` after the last one was released runs on the shared device again.
 */
import { frameworksTest as test, expect } from "./fixtures.js";

test("tvm.dispose() with adopted outputs still held: they read right after it, TF.js computes on them, their last release destroys them", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels, createTvmVm, tf, WebGPUBackend, testkit } = window as any;
    const ref = await (await fetch("/tests/data/tvm_chain_reference.json")).json();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const tvm = await loadTvmModels();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const gpu = tvm.lib.webGPUContext;
    const vm = createTvmVm(tvm);
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const g = await testkit.gpuTensor(ctx, ref.input.flat(), [4, 8]);
    const tx = await binding.tensorToTvm(g);
    tvm.beginScope();
    const pair = vm.getFunction("two_outputs")(tx);
    const outs = [binding.tensorFromTvm(pair.get(0)), binding.tensorFromTvm(pair.get(1))];
    tvm.endScope();
    const buffers: GPUBuffer[] = outs.map((t: { data: number }) => ctx.gpuPointerToBuffer(t.data));
    for (const t of [tx, g]) t.dispose();
    vm.dispose();
    tvm.dispose(); // destroys every buffer left in its table, then its device (its guard: only its hold)
    const inTable = buffers.map((b) => gpu.bufferTable.includes(b));
    // Memory pressure after it: tvmjs's handler calls nothing into the disposed instance (no console error).
    const consoleErrors: string[] = [];
    const logError = console.error;
    console.error = (...args: unknown[]) => void consoleErrors.push(args.map(String).join(" "));
    try {
      await ctx.trimMemory();
    } finally {
      console.error = logError;
    }
    const read = async (t: { data: number; nbytes: number }) =>
      Array.from(new Float32Array(await ctx.readback(t.data, { byteLength: t.nbytes })));
    const values = [await read(outs[0]), await read(outs[1])];
    const maxErr = [ref.two_outputs[0].flat(), ref.two_outputs[1]].map((want: number[], i: number) =>
      Math.max(...want.map((v, j) => Math.abs(v - values[i]![j]!))),
    );
    // TF.js on the first output, after tvmjs is gone: the same values doubled, not zeros.
    const t0 = await adapters.tensorToTfjs(tf, outs[0]);
    const doubled = tf.mul(t0, 2);
    const tfValues = Array.from(await doubled.data()) as number[];
    const tfErr = Math.max(...tfValues.map((v, i) => Math.abs(v - 2 * values[0]![i]!)));
    doubled.dispose();
    t0.dispose();
    const released = [];
    for (const [i, t] of outs.entries()) released.push(await testkit.disposeHolder(ctx, t, buffers[i], "tvmjs"));
    return {
      inTable,
      consoleErrors,
      maxErr,
      tfErr,
      anyNonZero: values[0]!.some((v) => v !== 0),
      released,
      sizes: buffers.map((b) => b.size),
      pointers: ctx.stats().livePointers - baseline.pointers,
      produced: adapters.liveProducedTensors() - baseline.produced,
      rows: ctx.ledger.entries().filter((e: { owner: string }) => e.owner === "tvmjs").length,
    };
  });
  expect(r.inTable, "taken out of tvmjs's table before it destroyed its table").toEqual([false, false]);
  expect(r.consoleErrors, "a trim after tvm.dispose() calls nothing into tvmjs").toEqual([]);
  expect(r.anyNonZero).toBe(true);
  for (const e of r.maxErr) expect(e).toBeLessThan(1e-5);
  expect(r.tfErr).toBeLessThan(1e-5);
  // The last release destroyed each (nothing thrown), and tvmjs's row of ctx.memory() lost its bytes.
  expect(r.released).toEqual(r.sizes.map((size) => ({ thrown: "nothing", freed: size, destroyed: true })));
  expect({ pointers: r.pointers, produced: r.produced, rows: r.rows }).toEqual({ pointers: 0, produced: 0, rows: 0 });
});

test("ORT-web: an adopted output outlives its session; dispose() after the release throws nothing and frees the buffer; the next session runs on the shared device", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const errors: string[] = [];
    const onError = (e: ErrorEvent) => errors.push(String(e.error ?? e.message));
    window.addEventListener("error", onError);
    const binding = adapters.bindOrtToContext(ort, ctx);
    const model = new Uint8Array(await (await fetch("/tests/data/relu_dynamic.onnx")).arrayBuffer());
    const x = Float32Array.from([-1, 2, -3, 4, -5, 6]);
    const relu = Array.from(x, (v) => Math.max(0, v));
    const run = async () => {
      const session = await ort.InferenceSession.create(model, binding.sessionOptions());
      const { Y } = await session.run({ X: new ort.Tensor("float32", x, [x.length]) });
      return { session, Y };
    };
    const first = await run();
    const y = binding.tensorFromOrt(first.Y);
    const buffer: GPUBuffer = ctx.gpuPointerToBuffer(y.data);
    await first.session.release(); // ORT's last session: its backend goes (1.23–1.29 also destroy its device)
    const afterRelease = Array.from(new Float32Array(await ctx.readback(y.data, { byteLength: y.nbytes })));
    const released = await testkit.disposeHolder(ctx, y, buffer, "onnxruntime-web");
    // A new session from the binding's options: on the shared device again (ORT 1.23–1.29 request a new device).
    const second = await run();
    const onShared = webdlpack.unwrapDevice(ort.env.webgpu.device) === webdlpack.unwrapDevice(device);
    const y2 = binding.tensorFromOrt(second.Y);
    const again = Array.from(new Float32Array(await ctx.readback(y2.data, { byteLength: y2.nbytes })));
    const rebound = adapters.bindOrtToContext(ort, ctx).deviceId;
    y2.dispose();
    await second.session.release();
    await new Promise((resolve) => setTimeout(resolve, 0)); // an "error" event would be out by now
    window.removeEventListener("error", onError);
    return {
      version: ort.env.versions.web,
      relu,
      afterRelease,
      released,
      size: buffer.size,
      onShared,
      again,
      rebound,
      errors,
      rows: ctx.ledger.entries().length,
      leaks: ctx.leaks().length,
    };
  });
  console.log(`onnxruntime-web ${r.version}`);
  expect(r.afterRelease).toEqual(r.relu);
  // Nothing thrown; ORT could not take it back, so webdlpack destroyed it.
  expect(r.released).toEqual({ thrown: "nothing", freed: r.size, destroyed: true });
  expect(r.onShared).toBe(true);
  expect(r.again).toEqual(r.relu);
  expect(r.rebound).toBe(0);
  expect(r.errors).toEqual([]);
  expect({ rows: r.rows, leaks: r.leaks }).toEqual({ rows: 0, leaks: 0 });
});

test("Transformers.js: a KV-cache output adopted before model.dispose() reads right after it; its dispose() throws nothing and frees the buffer", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, transformers, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const ref = await (await fetch("/tests/data/transformers/tiny-gpt2/reference.json")).json();
    const options = adapters.transformersOptions(ctx, {}, { env: transformers.env });
    const tokenizer = await transformers.AutoTokenizer.from_pretrained("tiny-gpt2");
    const model = await transformers.AutoModelForCausalLM.from_pretrained("tiny-gpt2", options);
    const inputs = tokenizer(ref.text);
    const out = await model(inputs);
    const key = adapters.tensorFromTransformers(out["present.0.key"]);
    out["present.0.value"].dispose();
    const buffer: GPUBuffer = ctx.gpuPointerToBuffer(key.data);
    const before = Array.from(await adapters.readTensor(key)) as number[];
    await model.dispose(); // its sessions released: Transformers.js's ORT has none left
    const after = Array.from(await adapters.readTensor(key)) as number[];
    const released = await testkit.disposeHolder(ctx, key, buffer, "transformers.js");
    return {
      same: JSON.stringify(before) === JSON.stringify(after),
      nonZero: after.some((v) => v !== 0),
      released,
      size: buffer.size,
      rows: ctx.ledger.entries().length,
    };
  });
  expect(r.same).toBe(true);
  expect(r.nonZero).toBe(true);
  expect(r.released).toEqual({ thrown: "nothing", freed: r.size, destroyed: true });
  expect(r.rows).toBe(0);
});
