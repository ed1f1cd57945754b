/**
 * Read-only pointers (context/pointers/read-only.ts) with the real packages in Chromium: a consumer that imported a
 * READ_ONLY GPU tensor — Python through from_js, C through wdl_tensor_from_js — holds a pointer of its own whose
 * every write through webdlpack (the Python bridge's upload, the C library's upload) is refused with BAD_FLAGS,
 * while the owner keeps writing through its pointer and the consumer reads what it wrote; TF.js's shared buffer is
 * read-only to everyone.
 */
import { expect, frameworksTest as test, openFrameworksPage } from "./fixtures.js";

test("Python and C get a read-only pointer to a READ_ONLY tensor: their uploads refused, the owner's work, reads see them", async ({
  page,
}) => {
  await openFrameworksPage(page, "?pyodide=1");
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, tf, WebGPUBackend, pyodide, py, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    tf.env().set("WEBGPU_CPU_FORWARD", false);
    const pointersBefore = ctx.stats().livePointers;
    const t = await testkit.gpuTensor(ctx, [1, 2, 3, 4], [4], { readOnly: true });
    const scratch = py.host.malloc(16);
    new Float32Array(pyodide._module.HEAPU8.buffer, scratch, 4).set([9, 9, 9, 9]);
    // Python: its view names its own, read-only pointer; the bridge's upload into it is refused.
    pyodide.globals.set("t_js", t);
    pyodide.globals.set("scratch", scratch);
    const fromPython = pyodide
      .runPython(`
import webdlpack
from webdlpack.bridge.js import call
g = webdlpack.from_js(t_js)
try:
    call(g.device, lambda js: js.gpuUpload, g.data_ptr, 0, scratch, 16)
    refused = "no error"
except Exception as e:
    refused = f"{type(e).__name__} {e.code.name} {e.field}"
[g.data_ptr, g.flags.read_only, refused]
`)
      .toJs();
    const [pythonPointer] = fromPython;
    const pythonInfo = ctx.gpuPointerInfo(pythonPointer);
    // The owner writes through its own pointer; Python's pointer reads what it wrote.
    ctx.upload(t.data, new Float32Array([5, 6, 7, 8]));
    const seenByPython = Array.from(new Float32Array(await ctx.readback(pythonPointer)));
    pyodide.runPython("g.dispose()");
    const pythonPointerAfter = testkit.codeOf(() => ctx.gpuPointerInfo(pythonPointer));
    // C: the struct it takes names a read-only pointer; the C library's upload into it is refused.
    const bridge = await webdlpack.loadWebDLPack(pyodide);
    const lib = await webdlpack.loadWebDLPackC(pyodide, { url: "/wasm/build/libwebdlpack.so" });
    let fromC: unknown;
    try {
      const struct = lib.exports.wdl_tensor_from_js(lib.publishTensor(t.toManaged(bridge.host))) >>> 0;
      // DLManagedTensorVersioned on wasm32: version 8 bytes, manager_ctx and deleter 4 each, flags 8: data at 24.
      const cPointer = new DataView(pyodide._module.HEAPU8.buffer).getUint32(struct + 24, true);
      const refused = await testkit.failure(() => lib.upload(cPointer, scratch, 16));
      const read = new Float32Array(4);
      await ctx.readbackInto(cPointer, read);
      lib.releaseTensor(struct);
      fromC = {
        differs: cPointer !== t.data,
        refused: `${refused.code} ${refused.field}`,
        message: refused.message,
        read: Array.from(read),
        afterRelease: testkit.codeOf(() => ctx.gpuPointerInfo(cPointer)),
      };
    } finally {
      lib.dispose();
    }
    // A TF.js result: its pointer is read-only to everyone (nothing writes TF.js's data through webdlpack).
    const a = tf.add(tf.tensor1d([1, 2, 3, 4]), 1);
    const fromTf = await adapters.tensorFromTfjs(tf, a);
    const tfRefused = testkit.codeOf(() => ctx.upload(fromTf.data, new Float32Array(4)));
    fromTf.dispose();
    const tfData = Array.from(await a.data());
    a.dispose();
    py.host.free(scratch);
    const ownerValues = Array.from(new Float32Array(await ctx.readback(t.data)));
    const ownerPointer = t.data;
    t.dispose();
    return {
      python: { differs: pythonPointer !== ownerPointer, readOnly: fromPython[1], refused: fromPython[2] },
      pythonInfo: { readOnly: pythonInfo.readOnly, owned: pythonInfo.owned },
      seenByPython,
      pythonPointerAfter,
      fromC,
      tfRefused,
      tfData,
      ownerValues,
      leftoverPointers: ctx.stats().livePointers - pointersBefore,
    };
  });
  expect(r.python).toEqual({
    differs: true,
    readOnly: true,
    refused: "WebDLPackDeviceError BAD_FLAGS tensor.flags.readOnly",
  });
  expect(r.pythonInfo).toEqual({ readOnly: true, owned: false });
  expect(r.seenByPython).toEqual([5, 6, 7, 8]);
  expect(r.pythonPointerAfter).toBe("STALE_POINTER"); // Python's release freed its pointer, not the buffer
  expect(r.fromC).toMatchObject({
    differs: true,
    refused: "BAD_FLAGS tensor.flags.readOnly",
    read: [5, 6, 7, 8],
    afterRelease: "STALE_POINTER",
  });
  expect((r.fromC as { message: string }).message).toMatch(/lent read-only.*copy the tensor first/);
  expect(r.tfRefused).toBe("BAD_FLAGS");
  expect(r.tfData).toEqual([2, 3, 4, 5]);
  expect(r.ownerValues).toEqual([5, 6, 7, 8]); // no consumer's write reached the buffer
  expect(r.leftoverPointers).toBe(0);
});

test("a tensor over a read-only pointer, even without the READ_ONLY flag, reaches a consumer that writes only as a copy", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const binding = adapters.bindOrtToContext(ort, ctx);
    const pointersBefore = ctx.stats().livePointers;
    const owner = await testkit.gpuTensor(ctx, [1, 2, 3, 4], [4]);
    const lent = ctx.registerGPUBuffer(ctx.gpuPointerToBuffer(owner.data), { readOnly: true });
    const t = webdlpack.Tensor.webgpu({ pointer: lent, deviceId: 0, dtype: "float32", shape: [4] }); // no flag
    const never = await testkit.failure(() => binding.tensorToOrt(t, { mayWrite: true, copy: "never" }));
    const written = await binding.tensorToOrt(t, { mayWrite: true });
    const read = await binding.tensorToOrt(t);
    const ownersOwn = await binding.tensorToOrt(owner, { mayWrite: true });
    const infos = [written, read, ownersOwn].map((o) => adapters.handoffInfo(o));
    for (const o of [written, read, ownersOwn]) o.dispose();
    t.dispose();
    ctx.freeWebGPU(lent);
    owner.dispose();
    return {
      never: `${never.code} ${never.field}`,
      infos,
      leftoverPointers: ctx.stats().livePointers - pointersBefore,
    };
  });
  const shared = { zeroCopy: true, isCopied: false, reason: null };
  expect(r.never).toBe("COPY_REQUIRED tensor.flags.readOnly");
  expect(r.infos).toEqual([
    { zeroCopy: false, isCopied: true, reason: "the tensor is READ_ONLY and ORT may write its input" },
    shared, // a reader gets the very buffer
    shared, // the owner's own pointer is writable
  ]);
  expect(r.leftoverPointers).toBe(0);
});
