/**
 * Every consumer of a webdlpack tensor, with the real frameworks in Chromium (issue 35, items 2 and 3):
 * - READ_ONLY: readers (ORT inputs, TF.js, LiteRT.js) get the very buffer; a consumer that writes (an ORT
 *   pre-allocated output, `mayWrite: true`) gets a copy, stated and counted, or with `copy: "never"` COPY_REQUIRED
 *   naming tensor.flags.readOnly; Python's views of a READ_ONLY tensor are read-only (tvmjs: handoff-inplace.spec.ts);
 * - a registered buffer its owner destroyed: every read, write, copy and hand-off refuses it with DISPOSED and no
 *   framework gets it.
 */
import { expect, frameworksTest as test, openFrameworksPage } from "./fixtures.js";

test("READ_ONLY: ORT inputs, TF.js and LiteRT.js read it in place; an ORT pre-allocated output is a copy ORT writes, the source unchanged", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, litert, loadLiteRtLocal, testkit } = window as any;
    const ref = await (await fetch("/tests/data/tvm_chain_reference.json")).json();
    const model = new Uint8Array(await (await fetch("/tests/data/mlp.onnx")).arrayBuffer());
    const ctx = webdlpack.getContext();
    await ctx.setup();
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const binding = adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    await loadLiteRtLocal();
    const lr = await adapters.bindLiteRtToContext(litert, ctx);
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const x = await testkit.gpuTensor(ctx, ref.input.flat(), [4, 8], { readOnly: true });
    const y = await testkit.gpuTensor(ctx, new Float32Array(32), [4, 8], { readOnly: true }); // ORT's output goes here
    // ORT: an input is read in place; a pre-allocated output (fetches) is written, so it is a copy.
    const xo = await binding.tensorToOrt(x);
    const never = await testkit.failure(() => binding.tensorToOrt(y, { mayWrite: true, copy: "never" }));
    const yo = await binding.tensorToOrt(y, { mayWrite: true });
    const ortInfo = [adapters.handoffInfo(xo), adapters.handoffInfo(yo)];
    const yBufferIsCopy = yo.gpuBuffer !== ctx.gpuPointerToBuffer(y.data);
    await session.run({ X: xo }, { Y: yo });
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const written = Array.from(new Float32Array((await testkit.readBuffer(device, yo.gpuBuffer, 0, 128)).buffer));
    const ortErr = Math.max(...ref.mlp.flat().map((v: number, i: number) => Math.abs(v - written[i]!)));
    const ySource = Array.from(await adapters.readTensor(y));
    xo.dispose();
    yo.dispose();
    // A CPU READ_ONLY tensor as an ORT output is copied too; as an input it is shared.
    const cpu = webdlpack.Tensor.fromTypedArray(new Float32Array(32), { shape: [4, 8], readOnly: true });
    const cpuInfo = [
      adapters.handoffInfo(await binding.tensorToOrt(cpu)),
      adapters.handoffInfo(await binding.tensorToOrt(cpu, { mayWrite: true })),
    ];
    // TF.js and LiteRT.js never write what they are given: shared.
    const xt = await adapters.tensorToTfjs(tf, x);
    const tfInfo = adapters.handoffInfo(xt);
    const tfSum = (await tf.sum(xt).data())[0];
    xt.dispose();
    const xl = await lr.tensorToLiteRt(x);
    const liteInfo = adapters.handoffInfo(xl);
    xl.delete();
    const xAfter = Array.from(await adapters.readTensor(x));
    for (const t of [x, y, cpu]) t.dispose();
    await session.release();
    const inputSum = ref.input.flat().reduce((a: number, b: number) => a + b, 0);
    return {
      never: { code: never.code, field: never.field, value: never.value },
      ortInfo,
      yBufferIsCopy,
      ortErr,
      ySource,
      cpuInfo,
      tfInfo,
      tfSumErr: Math.abs(tfSum - inputSum),
      liteInfo,
      xUnchanged: xAfter.every((v, i) => v === ref.input.flat()[i]),
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
    };
  });
  const shared = { zeroCopy: true, isCopied: false, reason: null };
  const copied = { zeroCopy: false, isCopied: true, reason: "the tensor is READ_ONLY and ORT may write its input" };
  expect(r.never).toEqual({ code: "COPY_REQUIRED", field: "tensor.flags.readOnly", value: true });
  expect(r.ortInfo).toEqual([shared, copied]);
  expect(r.yBufferIsCopy).toBe(true);
  expect(r.ortErr).toBeLessThan(1e-5); // ORT wrote its output into the copy
  expect(r.ySource).toEqual(new Array(32).fill(0)); // the READ_ONLY tensor: never written
  expect(r.cpuInfo).toEqual([shared, copied]);
  expect(r.tfInfo).toEqual(shared);
  expect(r.tfSumErr).toBeLessThan(1e-4);
  expect(r.liteInfo).toEqual(shared);
  expect(r.xUnchanged).toBe(true);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
});

test("a registered buffer its owner destroyed: upload, readback, copy and every framework hand-off refuse it with DISPOSED", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, litert, loadLiteRtLocal, loadTvmModels, testkit } =
      window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const binding = adapters.bindOrtToContext(ort, ctx);
    await loadLiteRtLocal();
    const lr = await adapters.bindLiteRtToContext(litert, ctx);
    const tvm = await loadTvmModels();
    const tvmBinding = adapters.bindTvmToContext(tvm, ctx);
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const { STORAGE, COPY_SRC, COPY_DST } = GPUBufferUsage;
    const buffer = device.createBuffer({ size: 16, usage: STORAGE | COPY_SRC | COPY_DST, label: "page's" });
    const t = adapters.tensorFromGPUBuffer(buffer, { dtype: "float32", shape: [4] });
    ctx.upload(t.data, new Float32Array([1, 2, 3, 4]));
    const before = Array.from(await adapters.readTensor(t));
    buffer.destroy(); // its owner ends it while webdlpack still names it
    const tfTensors = tf.memory().numTensors;
    const heldByTfjs = adapters.tfjsHeldBuffers(backend);
    const outcome = async (fn: () => unknown) => {
      const f = await testkit.failure(fn);
      return `${f.code} ${f.field} ${/destroyed/.test(f.message)}`;
    };
    const refusals = {
      upload: await outcome(() => ctx.upload(t.data, new Float32Array([5, 6, 7, 8]))),
      readback: await outcome(() => ctx.readback(t.data)),
      readTensor: await outcome(() => adapters.readTensor(t)),
      copyGPUTensor: await outcome(() => adapters.copyGPUTensor(t)),
      tensorToTfjs: await outcome(() => adapters.tensorToTfjs(tf, t)),
      tensorToOrt: await outcome(() => binding.tensorToOrt(t)),
      tensorToLiteRt: await outcome(() => lr.tensorToLiteRt(t)),
      tensorToTvm: await outcome(() => tvmBinding.tensorToTvm(t)),
    };
    const nothingHanded = {
      tfTensors: tf.memory().numTensors - tfTensors,
      tfHeld: adapters.tfjsHeldBuffers(backend) - heldByTfjs,
      tvmLent: tvmBinding.lentBuffers(),
    };
    t.dispose(); // freeing the pointer still works
    return { before, refusals, nothingHanded, live: ctx.stats().livePointers };
  });
  expect(r.before).toEqual([1, 2, 3, 4]);
  const refused = "DISPOSED buffer true";
  expect(r.refusals).toEqual({
    upload: refused,
    readback: refused,
    readTensor: refused,
    copyGPUTensor: refused,
    tensorToTfjs: refused,
    tensorToOrt: refused,
    tensorToLiteRt: refused,
    tensorToTvm: refused,
  });
  expect(r.nothingHanded).toEqual({ tfTensors: 0, tfHeld: 0, tvmLent: 0 });
});

test("Python's views of a READ_ONLY tensor are read-only: memoryview, a writable buffer request refused; a TF.js result stays read-only", async ({
  page,
}) => {
  await openFrameworksPage(page, "?pyodide=1");
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, tf, WebGPUBackend, pyodide, py } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    tf.env().set("WEBGPU_CPU_FORWARD", false);
    // READ_ONLY bytes in Pyodide's heap (a JS tensor elsewhere reaches Python as a copy, which is writable).
    const addr = py.host.malloc(16);
    new Float32Array(pyodide._module.HEAPU8.buffer, addr, 4).set([1, 2, 3, 4]);
    const cpu = webdlpack.Tensor.wasmView(py.host, { data: addr, dtype: "float32", shape: [4], readOnly: true });
    const a = tf.add(tf.tensor1d([1, 2, 3, 4]), 1);
    const gpu = await adapters.tensorFromTfjs(tf, a);
    pyodide.globals.set("cpu_js", cpu);
    pyodide.globals.set("gpu_js", gpu);
    const out = pyodide.runPython(`
import inspect, webdlpack
c = webdlpack.from_js(cpu_js)
g = webdlpack.from_js(gpu_js)
mv = memoryview(c)
try:
    c.__buffer__(inspect.BufferFlags.WRITABLE)
    refused = "no error"
except BufferError as e:
    refused = f"{type(e).__name__} {e.code.name} {e.field}"
info = [c.flags.read_only, mv.readonly, refused, g.flags.read_only]
mv.release()
c.dispose(); g.dispose()
info
`);
    const info = out.toJs();
    out.destroy();
    for (const t of [cpu, gpu]) t.dispose();
    py.host.free(addr);
    const tfData = Array.from(await a.data());
    a.dispose();
    return { info, tfData };
  });
  expect(r.info).toEqual([true, true, "WebDLPackBufferError BAD_FLAGS flags", true]);
  expect(r.tfData).toEqual([2, 3, 4, 5]);
});
