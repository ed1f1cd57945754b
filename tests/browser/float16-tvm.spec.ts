/**
 * float16 between webdlpack and tvmjs (docs/float16.md), in real Chromium with TVM's web runtime
 * (tests/browser/frameworks.html): a float16 GPU tensor lent to tvmjs is a tvmjs "float16" tensor over the same
 * GPUBuffer; tvmjs copies it on the GPU (a buffer copy: no float16 shader, which SwiftShader could not run) and
 * its output comes back as a float16 webdlpack tensor that JS reads as a Float16Array; nothing left.
 */
import { frameworksTest as test, expect } from "./fixtures.js";

const X = [1, -2, 0.5, 65504, 2 ** -24, 0, 7.75, -0.25];

test("float16 webdlpack → tvmjs (same GPUBuffer) → tvmjs GPU copy → webdlpack (Float16Array values)", async ({
  page,
}) => {
  const r = await page.evaluate(async (xs) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const tvm = await loadTvmModels();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const gpu = tvm.lib.webGPUContext;
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const F16 = (globalThis as unknown as { Float16Array: new (v: number[]) => Uint16Array }).Float16Array;
    const ptr = await ctx.allocWebGPUChecked(xs.length * 2);
    ctx.upload(ptr, new F16(xs));
    const g = webdlpack.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float16",
      shape: [xs.length],
      onRelease: () => ctx.freeWebGPU(ptr),
    });
    const tx = await binding.tensorToTvm(g);
    const lent = [String(tx.dtype), gpu.gpuBufferFromPtr(tx.getDataPtr()) === ctx.gpuPointerToBuffer(ptr)];
    const copy = tvm.withNewScope(() => tvm.detachFromCurrentScope(tvm.empty([xs.length], "float16", tvm.webgpu())));
    copy.copyFrom(tx); // tvmjs's own GPU → GPU copy
    const back = binding.tensorFromTvm(copy);
    const values = await adapters.readTensor(back, ctx);
    const out = [[back.dtype.code, back.dtype.bits, back.dtype.lanes], values.constructor.name, Array.from(values)];
    for (const t of [back, tx, g]) t.dispose();
    copy.dispose();
    return {
      lent,
      out,
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
    };
  }, X);
  expect(r.lent).toEqual(["float16", true]);
  expect(r.out).toEqual([[2, 16, 1], "Float16Array", X]);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
});
