/**
 * Ordered readback on real WebGPU: a compute shader is submitted and the
 * readback is asked for at once, with no await in between — it must see the
 * shader's values, because its copy is queued after the dispatch.
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";

test("compute shader submitted, then readback at once → the new values (ArrayBuffer, view, wasm memory)", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { ctx, device } = await (window as unknown as HarnessWindow).testkit.setup();
    const n = 1000;
    const ptr = await ctx.allocWebGPUChecked(n * 4, { owner: "shader" });
    device.queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr),
      0,
      Float32Array.from({ length: n }, (_, i) => i),
    );
    const tripling = `
        @group(0) @binding(0) var<storage, read_write> data: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3u) {
          if (id.x < ${n}u) { data[id.x] = data[id.x] * 3.0 + 1.0; }
        }`;
    const { testkit } = window as unknown as HarnessWindow;
    const resource = { buffer: ctx.gpuPointerToBuffer(ptr), size: n * 4 };
    let shader: GPUComputePipeline | string = tripling; // the pipeline, once the first dispatch made it
    const dispatch = (): void => {
      shader = testkit.dispatch(device, shader, resource, Math.ceil(n / 64));
    };

    dispatch();
    const first = new Float32Array(await ctx.readback(ptr)); // no await between submit and readback
    dispatch();
    const view = new Float32Array(4);
    const intoView = ctx.readbackInto(ptr, view, { byteOffset: 8, byteLength: 16 });
    dispatch(); // submitted after the readback's copy: must not show up in it
    await intoView;
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 8 });
    const intoHeap = ctx.readbackInto(ptr, { memory, address: 1024, byteLength: 8 }, { byteOffset: 0 });
    memory.grow(2); // the heap view is re-derived after the await
    await intoHeap;
    const heap = Array.from(new Float32Array(memory.buffer, 1024, 2));
    const unaligned = Array.from(new Uint8Array(await ctx.readback(ptr, { byteOffset: 5, byteLength: 3 })));
    const expectedUnaligned = Array.from(
      new Uint8Array(new Float32Array([((1 * 3 + 1) * 3 + 1) * 3 + 1]).buffer).subarray(1, 4),
    );
    let wrong = 0;
    for (let i = 0; i < n; i++) if (first[i] !== i * 3 + 1) wrong += 1;
    const stats = ctx.stats().devices[0]!;
    ctx.freeWebGPU(ptr);
    return {
      wrong,
      firstFew: Array.from(first.subarray(0, 3)),
      view: Array.from(view),
      heap,
      unaligned,
      expectedUnaligned,
      stagingKept: stats.stagingBuffers,
    };
  });
  expect(result.wrong).toBe(0);
  expect(result.firstFew).toEqual([1, 4, 7]);
  // Second dispatch: (i*3+1)*3+1 for i = 2..5; the third dispatch came after the copy.
  expect(result.view).toEqual([2, 3, 4, 5].map((i) => (i * 3 + 1) * 3 + 1));
  expect(result.heap).toEqual([0, 1].map((i) => ((i * 3 + 1) * 3 + 1) * 3 + 1));
  expect(result.unaligned).toEqual(result.expectedUnaligned);
  expect(result.stagingKept).toBeGreaterThanOrEqual(1);
});
