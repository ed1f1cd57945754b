/**
 * The GPU pointer table on real WebGPU: allocate, translate, compute on the
 * buffer, read back, free; stale / double-free / foreign pointers; reuse.
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";

test("alloc → translate → writeBuffer → compute shader doubles in place → read back → free → STALE_POINTER", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { setup, codeOf, dispatch, readBuffer } = (window as unknown as HarnessWindow).testkit;
    // No caching, so the free destroys the buffer at once (checked below).
    const { ctx, device } = await setup({ cacheMode: "disabled" });
    const n = 1001;
    const nbytes = n * 4;
    const ptr = await ctx.allocWebGPUChecked(nbytes, { label: "doubling", owner: "test" });
    const buffer = ctx.gpuPointerToBuffer(ptr);
    const input = Float32Array.from({ length: n }, (_, i) => i * 0.5 - 7);
    device.queue.writeBuffer(buffer, 0, input);

    const doubling = `
        @group(0) @binding(0) var<storage, read_write> data: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3u) {
          if (id.x < arrayLength(&data)) { data[id.x] = data[id.x] * 2.0; }
        }`;
    dispatch(device, doubling, { buffer: ctx.gpuPointerToBuffer(ptr), size: nbytes }, Math.ceil(n / 64));
    const output = new Float32Array((await readBuffer(device, ctx.gpuPointerToBuffer(ptr), 0, nbytes)).buffer);
    let wrong = 0;
    for (let i = 0; i < n; i++) if (output[i] !== input[i]! * 2) wrong += 1;

    const info = ctx.gpuPointerInfo(ptr);
    const statsBefore = ctx.stats();
    ctx.freeWebGPU(ptr);
    // freeWebGPU destroyed the owned buffer: using it is now a validation error.
    device.pushErrorScope("validation");
    device.queue.writeBuffer(buffer, 0, new Float32Array(4));
    const afterFree = await device.popErrorScope();
    return {
      ptr,
      wrong,
      sample: [output[0], output[1], output[n - 1]],
      info,
      livePointers: statsBefore.livePointers,
      liveBytes: statsBefore.liveBytes,
      stale: codeOf(() => ctx.gpuPointerToBuffer(ptr)),
      staleInfo: codeOf(() => ctx.gpuPointerInfo(ptr)),
      doubleFree: codeOf(() => ctx.freeWebGPU(ptr)),
      foreign: codeOf(() => ctx.gpuPointerToBuffer(12345)),
      foreignFree: codeOf(() => ctx.freeWebGPU(12345)),
      nullPtr: codeOf(() => ctx.gpuPointerToBuffer(0)),
      negative: codeOf(() => ctx.gpuPointerToBuffer(-ptr)),
      destroyedAfterFree: afterFree !== null,
      liveAfter: ctx.stats().livePointers,
    };
  });
  expect(Number.isInteger(result.ptr)).toBe(true);
  expect(result.ptr).toBeGreaterThan(0);
  expect(result.ptr).toBeLessThan(2 ** 32);
  expect(result.wrong).toBe(0);
  expect(result.sample).toEqual([-14, -13, 986]);
  expect(result.info).toMatchObject({
    deviceId: 0,
    size: 4016,
    requestedSize: 4004,
    owner: "test",
    owned: true,
    label: "doubling",
    deviceLost: false,
  });
  expect(result.info.usage).toBe(0x80 | 0x04 | 0x08);
  expect(result.livePointers).toBe(1);
  expect(result.liveBytes).toBe(4016);
  expect(result.stale).toBe("STALE_POINTER");
  expect(result.staleInfo).toBe("STALE_POINTER");
  expect(result.doubleFree).toBe("DOUBLE_FREE");
  expect(result.foreign).toBe("INVALID_POINTER");
  expect(result.foreignFree).toBe("INVALID_POINTER");
  expect(result.nullPtr).toBe("INVALID_POINTER");
  expect(result.negative).toBe("INVALID_POINTER");
  expect(result.destroyedAfterFree).toBe(true);
  expect(result.liveAfter).toBe(0);
});

test("1000 alloc/free cycles reuse one cached buffer under 1000 distinct pointer values; a stale pointer never names it", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { ctx } = await (window as unknown as HarnessWindow).testkit.setup();
    const seen = new Set<number>();
    const buffers = new Set<GPUBuffer>();
    const first = await ctx.allocWebGPUChecked(16);
    ctx.freeWebGPU(first);
    let staleResolved = 0;
    for (let i = 0; i < 1000; i++) {
      const p = await ctx.allocWebGPUChecked(16 + (i % 7));
      seen.add(p);
      buffers.add(ctx.gpuPointerToBuffer(p));
      try {
        ctx.gpuPointerToBuffer(first);
        staleResolved += 1;
      } catch {
        /* expected: STALE_POINTER */
      }
      ctx.freeWebGPU(p);
    }
    return {
      distinct: seen.size,
      hasFirst: seen.has(first),
      buffers: buffers.size,
      staleResolved,
      live: ctx.stats().livePointers,
    };
  });
  expect(result.distinct).toBe(1000);
  expect(result.hasFirst).toBe(false);
  // bucket mode (the default): every request is in the 256-byte class, so the first buffer serves them all.
  expect(result.buffers).toBe(1);
  expect(result.staleResolved).toBe(0);
  expect(result.live).toBe(0);
});

test("bad sizes and usages are typed errors and never destroy the device; foreign buffers can be adopted", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { setup, failure } = (window as unknown as HarnessWindow).testkit;
    const { ctx, device } = await setup();
    const tooBig = await failure(() => ctx.allocWebGPU(2 ** 30 + 1));
    const negative = await failure(() => ctx.allocWebGPU(-4));
    // MAP_READ may only be combined with COPY_DST: refused before WebGPU is asked.
    const badUsage = await failure(() =>
      ctx.allocWebGPU(64, { usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE }),
    );
    const okAfter = await ctx.allocWebGPUChecked(64);
    const usable = ctx.gpuPointerToBuffer(okAfter).size;
    ctx.freeWebGPU(okAfter);

    // Adopt a buffer "another framework" made; freeing only forgets it.
    const foreign = device.createBuffer({
      size: 36,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    const released: number[] = [];
    const ptr = ctx.registerGPUBuffer(foreign, { owner: "other", onRelease: (_b, p) => released.push(p) });
    const same = ctx.gpuPointerToBuffer(ptr) === foreign;
    const twice = await failure(() => ctx.registerGPUBuffer(foreign));
    ctx.freeWebGPU(ptr);
    device.pushErrorScope("validation");
    device.queue.writeBuffer(foreign, 0, new Uint8Array(4));
    const stillAlive = (await device.popErrorScope()) === null;
    foreign.destroy();
    return {
      tooBig,
      negative,
      badUsage,
      usable,
      same,
      twice,
      released: released[0] === ptr && released.length === 1,
      stillAlive,
    };
  });
  expect(result.tooBig.code).toBe("INVALID_ARGUMENT");
  expect(result.tooBig.message).toContain("1073741825");
  expect(result.tooBig.message).toContain("1073741824");
  expect(result.negative.code).toBe("INVALID_ARGUMENT");
  expect(result.badUsage.code).toBe("INVALID_ARGUMENT");
  expect(result.badUsage.message).toContain("MAP_READ");
  expect(result.usable).toBe(256);
  expect(result.same).toBe(true);
  expect(result.twice.code).toBe("INVALID_ARGUMENT");
  expect(result.released).toBe(true);
  expect(result.stillAlive).toBe(true);
});
