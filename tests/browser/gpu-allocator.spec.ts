/**
 * The caching allocator on real WebGPU (SwiftShader): each cache mode's reuse
 * and release with stats, and alloc/free cycles of 16 MiB in every mode: 1000
 * synchronous ones with no await (the GPU process died at ~900 such cycles
 * without the destroy throttle), 300 awaited ones in the modes that destroy
 * (4.8 GB, 18× the 256 MiB pending budget: each 16 MiB cycle costs ~10 ms of
 * SwiftShader clearing memory) and 1000 in the caching modes (they reuse).
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";

test("each cache mode: reuse and release of a freed buffer, with stats", async ({ jsPage }) => {
  const result = await jsPage.evaluate(async () => {
    const { ctx, device } = await (window as unknown as HarnessWindow).testkit.setup();
    // Whether `buffer` is destroyed right now: writeBuffer to a destroyed buffer is a validation error.
    const destroyedNow = (buffer: GPUBuffer): Promise<boolean> => {
      device.pushErrorScope("validation");
      device.queue.writeBuffer(buffer, 0, new Uint8Array(4));
      return device.popErrorScope().then((e) => e !== null);
    };
    const out: Record<string, unknown> = {};
    for (const mode of ["disabled", "lazyRelease", "simple", "bucket"] as const) {
      ctx.setCacheMode(mode);
      const before = ctx.stats().devices[0]!;
      const ptr = await ctx.allocWebGPUChecked(3000, { owner: `owner-${mode}` });
      const buffer = ctx.gpuPointerToBuffer(ptr);
      ctx.freeWebGPU(ptr);
      const atFree = destroyedNow(buffer); // checked synchronously after the free
      const afterFree = ctx.stats().devices[0]!;
      const next = await ctx.allocWebGPUChecked(2995, { owner: `owner-${mode}` });
      const reused = ctx.gpuPointerToBuffer(next) === buffer;
      let staleCode = "";
      try {
        ctx.gpuPointerToBuffer(ptr);
      } catch (e) {
        staleCode = (e as { code: string }).code;
      }
      ctx.freeWebGPU(next);
      await ctx.flush();
      const flushed = await destroyedNow(buffer);
      const after = ctx.stats();
      const owner = after.owners.find((o) => o.owner === `owner-${mode}`)!;
      out[mode] = {
        size: buffer.size,
        destroyedAtFree: await atFree,
        reused,
        newPointer: next !== ptr,
        staleCode,
        destroyedAfterFlush: flushed,
        cachedAfterFree: afterFree.cachedBuffers - before.cachedBuffers,
        lazyAfterFree: afterFree.lazyReleaseBuffers,
        hits: after.devices[0]!.hits - before.hits,
        misses: after.devices[0]!.misses - before.misses,
        ownerHits: owner.hits,
        ownerMisses: owner.misses,
        pendingAfterFlush: after.devices[0]!.pendingDestroyBytes,
        mode: after.devices[0]!.cacheMode,
      };
    }
    return out;
  });
  expect(result["disabled"]).toMatchObject({
    size: 3008,
    destroyedAtFree: true,
    reused: false,
    cachedAfterFree: 0,
    hits: 0,
    misses: 2,
    ownerHits: 0,
    ownerMisses: 2,
    pendingAfterFlush: 0,
    mode: "disabled",
    staleCode: "STALE_POINTER",
    newPointer: true,
  });
  expect(result["lazyRelease"]).toMatchObject({
    size: 3008,
    destroyedAtFree: false,
    lazyAfterFree: 1,
    reused: false,
    destroyedAfterFlush: true,
    hits: 0,
    misses: 2,
    pendingAfterFlush: 0,
    mode: "lazyRelease",
  });
  expect(result["simple"]).toMatchObject({
    size: 3008,
    destroyedAtFree: false,
    cachedAfterFree: 1,
    reused: true,
    newPointer: true,
    staleCode: "STALE_POINTER",
    destroyedAfterFlush: false,
    hits: 1,
    misses: 1,
    ownerHits: 1,
    ownerMisses: 1,
    mode: "simple",
  });
  expect(result["bucket"]).toMatchObject({
    size: 4096,
    destroyedAtFree: false,
    cachedAfterFree: 1,
    reused: true,
    newPointer: true,
    staleCode: "STALE_POINTER",
    destroyedAfterFlush: false,
    hits: 1,
    misses: 1,
    mode: "bucket",
  });
});

for (const [mode, cycles] of [
  ["disabled", 300],
  ["lazyRelease", 300],
  ["simple", 1000],
  ["bucket", 1000],
] as const) {
  test(`${cycles} alloc/free cycles of 16 MiB survive in ${mode} mode`, async ({ jsPage }) => {
    test.setTimeout(180_000);
    const result = await jsPage.evaluate(
      async ([mode, cycles]) => {
        const { ctx, device } = await (window as unknown as HarnessWindow).testkit.setup({ cacheMode: mode });
        let lost = "";
        void device.lost.then((info) => {
          lost = `${info.reason}: ${info.message}`;
        });
        const size = 16 * 2 ** 20;
        const t0 = performance.now();
        for (let i = 0; i < cycles; i++) {
          const ptr = await ctx.allocWebGPUChecked(size, { owner: "cycler" });
          if (i % 100 === 0) device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, new Uint32Array([i]));
          ctx.freeWebGPU(ptr);
        }
        const loopMs = performance.now() - t0;
        await ctx.flush();
        // The device still works: a fresh allocation round-trips data.
        const check = await ctx.allocWebGPUChecked(16);
        device.queue.writeBuffer(ctx.gpuPointerToBuffer(check), 0, new Uint32Array([1, 2, 3, 4]));
        const values = Array.from(new Uint32Array(await ctx.readback(check)));
        ctx.freeWebGPU(check);
        await ctx.flush();
        const d = ctx.stats().devices[0]!;
        return {
          lost,
          loopMs,
          values,
          hits: d.hits,
          misses: d.misses,
          peak: d.peakPendingBytes,
          markers: d.destroyMarkers,
          destroyed: d.destroyed,
          pending: d.pendingDestroyBytes,
          live: ctx.stats().livePointers,
        };
      },
      [mode, cycles] as const,
    );
    console.log(
      `${mode}: ${cycles} × 16 MiB in ${result.loopMs.toFixed(0)} ms; hits ${result.hits}, misses ${result.misses}, ` +
        `destroyed ${result.destroyed}, markers ${result.markers}, peak pending ${(result.peak / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(result.lost).toBe("");
    expect(result.values).toEqual([1, 2, 3, 4]);
    expect(result.live).toBe(0);
    expect(result.pending).toBe(0);
    // Pending (destroyed, not yet reclaimed) memory stays within the 256 MiB budget plus one buffer.
    expect(result.peak).toBeLessThanOrEqual(256 * 2 ** 20 + 16 * 2 ** 20);
    if (mode === "simple" || mode === "bucket") {
      expect(result.hits).toBeGreaterThanOrEqual(cycles - 1);
      expect(result.destroyed).toBe(0);
    } else {
      expect(result.misses).toBeGreaterThanOrEqual(cycles);
      expect(result.destroyed).toBeGreaterThanOrEqual(cycles);
      // What keeps the GPU process alive: queue markers after the destroys, at least one per markerBytes (32 MiB).
      expect(result.markers).toBeGreaterThanOrEqual((cycles * 16) / 32);
    }
  });
}

test("1000 synchronous 16 MiB alloc/free cycles with no await at all survive in disabled mode (the throttle submits markers)", async ({
  jsPage,
}) => {
  test.setTimeout(180_000);
  const result = await jsPage.evaluate(async () => {
    const { ctx, device } = await (window as unknown as HarnessWindow).testkit.setup({ cacheMode: "disabled" });
    let lost = "";
    void device.lost.then((info) => {
      lost = `${info.reason}: ${info.message}`;
    });
    for (let i = 0; i < 1000; i++) ctx.freeWebGPU(ctx.allocWebGPU(16 * 2 ** 20));
    const markersInLoop = ctx.stats().devices[0]!.destroyMarkers;
    await ctx.flush();
    const check = ctx.allocWebGPU(64);
    device.queue.writeBuffer(ctx.gpuPointerToBuffer(check), 0, new Uint32Array([42]));
    const value = new Uint32Array(await ctx.readback(check, { byteLength: 4 }))[0];
    return { lost, markersInLoop, value, asyncError: String(ctx.lastAsyncError()) };
  });
  expect(result.lost).toBe("");
  expect(result.value).toBe(42);
  expect(result.asyncError).toBe("null");
  // 16 GB destroyed in one task; a marker every 32 MiB (markerBytes) was submitted synchronously.
  expect(result.markersInLoop).toBeGreaterThanOrEqual(500);
});
