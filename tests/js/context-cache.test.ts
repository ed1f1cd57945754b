/** Node tests of the caching allocator against fake WebGPU: size classes, the four cache modes, caps, stats, sync allocation. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { WebDLPackError } from "../../js/src/errors.js";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { GPUUsage } from "../../js/src/context/ground/create.js";
import { bucketSize, FINE_BUCKET_THRESHOLD, MIN_BUCKET_SIZE } from "../../js/src/context/allocation/size-classes.js";
import { DeviceAllocator, MAX_OWNER_COUNT_ROWS } from "../../js/src/context/allocation/device-allocator.js";
import type { DeviceRecord } from "../../js/src/context/devices/registry.js";
import { asGPU, type FakeBuffer, FakeDevice, FakeGPU } from "./context-fakes.js";
import { isCode } from "./helpers.js";

async function ready(limits: Record<string, number> = {}): Promise<{ ctx: PageContext; device: FakeDevice }> {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU();
  if (Object.keys(limits).length > 0) Object.assign(gpu.adapter!.limits, limits);
  await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  return { ctx, device: gpu.adapter!.devices[0]! };
}

/**
 * Let the fakes' asynchronous work settle: `hops` macrotasks one after another. The fakes resolve through
 * setTimeout(0) and microtasks, and a timer set later never fires before an earlier one of the same delay, so
 * this outlasts any chain of fewer hops however loaded the machine (a fixed 5 ms wait did not, under load).
 */
async function tick(hops = 10): Promise<void> {
  for (let i = 0; i < hops; i++) await new Promise((r) => setTimeout(r, 0));
}
const MiB = 2 ** 20;

test("bucket size classes: 256 minimum, powers of two to 16 KiB, then four steps per doubling", () => {
  const cases: [number, number][] = [
    [0, 256],
    [1, 256],
    [256, 256],
    [257, 512],
    [1000, 1024],
    [1024, 1024],
    [16384, 16384],
    [16385, 20480],
    [20480, 20480],
    [20481, 24576],
    [30000, 32768],
    [32769, 40960],
    [16 * MiB, 16 * MiB],
    [16 * MiB + 1, 20 * MiB],
    [100 * MiB, 112 * MiB],
  ];
  for (const [n, want] of cases) assert.equal(bucketSize(n), want, `bucketSize(${n})`);
  let previous = 0;
  for (let n = 0; n <= 1 << 22; n += 997) {
    const size = bucketSize(n);
    assert.ok(size >= n && size % MIN_BUCKET_SIZE === 0, `class of ${n} is ${size}`);
    if (n > FINE_BUCKET_THRESHOLD) assert.ok(size < n * 1.25 + 1, `waste under 25% at ${n}`);
    assert.ok(size >= previous, "classes never shrink as n grows");
    previous = size;
  }
  // Around large powers of two, where log2 rounds.
  for (const k of [30, 40, 50]) {
    assert.equal(bucketSize(2 ** k), 2 ** k);
    assert.equal(bucketSize(2 ** k - 1), 2 ** k);
    assert.equal(bucketSize(2 ** k + 1), 2 ** k * 1.25);
  }
});

test("bucket (default): a freed buffer serves the next request of its class under a NEW pointer; the old one is stale", async () => {
  const { ctx, device } = await ready();
  assert.equal(ctx.getCacheMode(), "bucket");
  const a = await ctx.allocWebGPUChecked(1000, { owner: "ort" });
  const bufA = ctx.gpuPointerToBuffer(a);
  assert.equal(bufA.size, 1024);
  assert.equal(ctx.gpuPointerInfo(a).requestedSize, 1000);
  ctx.freeWebGPU(a);
  assert.equal((bufA as unknown as FakeBuffer).destroyed, 0, "kept, not destroyed");
  let s = ctx.stats();
  assert.deepEqual([s.cachedBuffers, s.cachedBytes, s.hits, s.misses], [1, 1024, 0, 1]);
  const b = await ctx.allocWebGPUChecked(900, { owner: "tfjs" }); // same class (1024)
  assert.notEqual(b, a, "a reused buffer gets a new pointer value");
  assert.equal(ctx.gpuPointerToBuffer(b), bufA);
  assert.throws(() => ctx.gpuPointerToBuffer(a), isCode("STALE_POINTER"));
  assert.throws(() => ctx.freeWebGPU(a), isCode("DOUBLE_FREE"));
  const c = ctx.allocWebGPU(600, { owner: "tfjs" }); // same class, cache now empty → miss
  assert.notEqual(ctx.gpuPointerToBuffer(c), bufA);
  s = ctx.stats();
  assert.deepEqual([s.cachedBuffers, s.hits, s.misses, s.livePointers, s.liveBytes], [0, 1, 2, 2, 2048]);
  assert.deepEqual(
    s.owners.map((o) => [o.owner, o.deviceId, o.livePointers, o.liveBytes, o.hits, o.misses]),
    [
      ["ort", 0, 0, 0, 0, 1],
      ["tfjs", 0, 2, 2048, 1, 1],
    ],
  );
  assert.equal(s.devices[0]!.cacheMode, "bucket");
  // Another usage is another class; non-storage buffers keep their 16-byte size.
  ctx.freeWebGPU(b);
  const d = await ctx.allocWebGPUChecked(1000, { usage: GPUUsage.COPY_SRC | GPUUsage.COPY_DST });
  assert.notEqual(ctx.gpuPointerToBuffer(d), bufA);
  assert.equal(ctx.gpuPointerToBuffer(d).size, 1008);
  assert.equal(device.scopes.length, 0);
});

test("simple: reuse only the exact (16-rounded) size and usage", async () => {
  const { ctx } = await ready();
  ctx.setCacheMode("simple");
  const a = await ctx.allocWebGPUChecked(100);
  const buf = ctx.gpuPointerToBuffer(a);
  assert.equal(buf.size, 112);
  ctx.freeWebGPU(a);
  const b = await ctx.allocWebGPUChecked(120); // 128: another size
  assert.notEqual(ctx.gpuPointerToBuffer(b), buf);
  const c = await ctx.allocWebGPUChecked(97); // 112 again
  assert.equal(ctx.gpuPointerToBuffer(c), buf);
  const s = ctx.stats();
  assert.deepEqual([s.hits, s.misses, s.cachedBuffers], [1, 2, 0]);
});

test("disabled: destroyed at once on free (through the throttle, which submits a marker)", async () => {
  const { ctx, device } = await ready();
  ctx.setCacheMode("disabled");
  const submitted = device.queue.submits; // setup's own (its warm-up readback) come before
  const a = await ctx.allocWebGPUChecked(64);
  const buf = ctx.gpuPointerToBuffer(a) as unknown as FakeBuffer;
  ctx.freeWebGPU(a);
  assert.equal(buf.destroyed, 1);
  assert.equal(ctx.stats().devices[0]!.pendingDestroyBytes, 64);
  await tick(); // microtask marker + onSubmittedWorkDone
  const d = ctx.stats().devices[0]!;
  assert.equal(d.pendingDestroyBytes, 0);
  assert.equal(d.destroyMarkers, 1);
  assert.equal(device.queue.submits - submitted, 1);
  assert.deepEqual([d.cachedBuffers, d.hits, d.misses], [0, 0, 1]);
});

test("lazyRelease: destroyed only after the work submitted before the free is done, or at flush()", async () => {
  const { ctx, device } = await ready();
  ctx.setCacheMode("lazyRelease");
  const a = await ctx.allocWebGPUChecked(64);
  const buf = ctx.gpuPointerToBuffer(a) as unknown as FakeBuffer;
  ctx.freeWebGPU(a);
  assert.equal(buf.destroyed, 0);
  let d = ctx.stats().devices[0]!;
  assert.deepEqual([d.lazyReleaseBuffers, d.lazyReleaseBytes], [1, 64]);
  const calls = device.queue.workDoneCalls;
  await tick();
  assert.ok(device.queue.workDoneCalls > calls, "asked the queue when its work is done");
  assert.equal(buf.destroyed, 1);
  d = ctx.stats().devices[0]!;
  assert.deepEqual([d.lazyReleaseBuffers, d.lazyReleaseBytes, d.hits], [0, 0, 0]);
  // No reuse in lazyRelease; flush() releases at once.
  const b = await ctx.allocWebGPUChecked(64);
  const bufB = ctx.gpuPointerToBuffer(b) as unknown as FakeBuffer;
  assert.notEqual(bufB, buf);
  ctx.freeWebGPU(b);
  await ctx.flush();
  assert.equal(bufB.destroyed, 1);
  assert.equal(ctx.stats().devices[0]!.pendingDestroyBytes, 0);
});

test("caps: per-class count and bytes, and the device total; the overflow is released", async () => {
  const { ctx } = await ready();
  ctx.setCacheMode("bucket", {
    cacheLimits: { maxBuffersPerClass: 2, maxBytesPerClass: 4096, maxCachedBytes: 1 << 20 },
  });
  const small = await Promise.all([1, 2, 3].map(() => ctx.allocWebGPUChecked(256)));
  const bufs = small.map((p) => ctx.gpuPointerToBuffer(p) as unknown as FakeBuffer);
  for (const p of small) ctx.freeWebGPU(p);
  assert.deepEqual(
    bufs.map((b) => b.destroyed),
    [0, 0, 1],
    "third buffer of the class is over the count cap",
  );
  const big = await Promise.all([1, 2].map(() => ctx.allocWebGPUChecked(3000))); // class 4096: two would be 8192 > 4096 bytes
  const bigBufs = big.map((p) => ctx.gpuPointerToBuffer(p) as unknown as FakeBuffer);
  for (const p of big) ctx.freeWebGPU(p);
  assert.deepEqual(
    bigBufs.map((b) => b.destroyed),
    [0, 1],
  );
  assert.deepEqual([ctx.stats().cachedBuffers, ctx.stats().cachedBytes], [3, 2 * 256 + 4096]);
  // Lowering the caps evicts; switching to disabled empties the cache.
  ctx.setCacheMode("bucket", { cacheLimits: { maxBuffersPerClass: 1 } });
  assert.equal(ctx.stats().cachedBuffers, 2);
  assert.equal(bufs[0]!.destroyed, 1, "oldest of the class evicted");
  ctx.setCacheMode("disabled");
  assert.equal(ctx.stats().cachedBuffers, 0);
  assert.deepEqual([bufs[1]!.destroyed, bigBufs[0]!.destroyed], [1, 1]);
});

test("cache mode per device; bad modes and limits are INVALID_ARGUMENT; setup({cacheMode})", async () => {
  const { ctx } = await ready();
  const id = ctx.registerWebGPUDevice(asGPU<GPUDevice>(new FakeDevice()));
  ctx.setCacheMode("simple", { deviceId: id });
  assert.equal(ctx.getCacheMode(id), "simple");
  assert.equal(ctx.getCacheMode(0), "bucket");
  ctx.setCacheMode("disabled"); // the default; device `id` keeps its own
  assert.equal(ctx.getCacheMode(id), "simple");
  assert.equal(ctx.getCacheMode(0), "disabled");
  const p = await ctx.allocWebGPUChecked(100, { deviceId: id });
  assert.equal(ctx.gpuPointerToBuffer(p).size, 112);
  assert.throws(() => ctx.setCacheMode("pool" as "simple"), isCode("INVALID_ARGUMENT", /"bucket"/));
  assert.throws(() => ctx.setCacheMode("simple", { deviceId: 9 }), isCode("UNKNOWN_DEVICE"));
  assert.throws(
    () => ctx.setCacheMode("simple", { cacheLimits: { maxBuffers: 3 } as never }),
    isCode("INVALID_ARGUMENT", /maxBuffers/),
  );
  assert.throws(
    () => ctx.setCacheMode("simple", { cacheLimits: { maxCachedBytes: -1 } }),
    (e: unknown) =>
      isCode("INVALID_ARGUMENT")(e) && (e as WebDLPackError).field === "options.cacheLimits.maxCachedBytes",
  );
  assert.throws(
    () => ctx.setCacheMode("simple", { throttleLimits: { markerBytes: 1.5 } }),
    isCode("INVALID_ARGUMENT", /markerBytes/),
  );
  const other = new PageContext(CONTEXT_PROTOCOL);
  await assert.rejects(
    other.setup({ gpu: asGPU<GPU>(new FakeGPU()), cacheMode: "huge" as "simple" }),
    isCode("INVALID_ARGUMENT", /cfg\.cacheMode/),
  );
  await other.setup({ gpu: asGPU<GPU>(new FakeGPU()), cacheMode: "simple" });
  assert.equal(other.getCacheMode(0), "simple");
});

test("allocWebGPU (synchronous): checks throw at once; a hit needs no GPU call; a late OOM surfaces on use", async () => {
  const { ctx, device } = await ready();
  assert.throws(() => ctx.allocWebGPU(2 ** 40), isCode("INVALID_ARGUMENT", /maxBufferSize/));
  assert.throws(() => ctx.allocWebGPU(8, { usage: 0 }), isCode("INVALID_ARGUMENT", /usage/));
  assert.throws(() => ctx.allocWebGPU(8, { deviceId: 4 }), isCode("UNKNOWN_DEVICE"));
  const first = ctx.allocWebGPU(5000);
  const buffer = ctx.gpuPointerToBuffer(first);
  await tick();
  assert.equal(device.scopes.length, 0, "scopes popped");
  ctx.freeWebGPU(first);
  const created = device.created.length;
  const hit = ctx.allocWebGPU(5000);
  assert.equal(device.created.length, created, "a hit creates nothing");
  assert.equal(ctx.gpuPointerToBuffer(hit), buffer);

  device.failNext = { filter: "out-of-memory", message: "Out of memory" };
  const bad = ctx.allocWebGPU(1 << 19);
  assert.ok(bad > 0, "returned before the verdict");
  assert.equal(ctx.lastAsyncError(), null);
  await tick();
  assert.throws(
    () => ctx.gpuPointerToBuffer(bad),
    (e: unknown) => isCode("OUT_OF_MEMORY", /Out of memory/)(e) && (e as WebDLPackError).value === bad,
  );
  assert.equal(ctx.lastAsyncError()?.code, "OUT_OF_MEMORY");
  await assert.rejects(ctx.readback(bad), isCode("OUT_OF_MEMORY"));
  const failed = device.created.at(-1)!;
  ctx.freeWebGPU(bad); // freeing works; the failed buffer is destroyed, never cached
  assert.equal(failed.destroyed, 1);
  assert.equal(ctx.stats().cachedBuffers, 0);
  assert.equal(ctx.stats().livePointers, 1);
});

test("the throttle makes async allocation wait when too many destroyed bytes are unconfirmed", async () => {
  const { ctx, device } = await ready({ maxBufferSize: 64 * MiB });
  ctx.setCacheMode("disabled", { throttleLimits: { maxPendingBytes: 8 * MiB, markerBytes: 4 * MiB } });
  const setupSubmits = device.queue.submits; // setup's own (transfers measured at setup)
  const ptrs = await Promise.all([1, 2, 3, 4].map(() => ctx.allocWebGPUChecked(3 * MiB)));
  for (const p of ptrs) ctx.freeWebGPU(p); // 12 MiB destroyed synchronously
  let d = ctx.stats().devices[0]!;
  assert.equal(d.pendingDestroyBytes, 12 * MiB);
  assert.equal(d.destroyMarkers, 2, "a marker per 4 MiB destroyed, submitted synchronously");
  assert.equal(device.queue.submits - setupSubmits, 2);
  const next = await ctx.allocWebGPUChecked(1024); // over budget: waits for the markers
  d = ctx.stats().devices[0]!;
  assert.equal(d.throttleWaits, 1);
  assert.ok(d.pendingDestroyBytes <= 8 * MiB, `pending ${d.pendingDestroyBytes}`);
  assert.equal(d.peakPendingBytes, 12 * MiB);
  ctx.freeWebGPU(next);
  await ctx.flush();
  assert.equal(ctx.stats().devices[0]!.pendingDestroyBytes, 0);
});

test("unregistering a device releases its cache; a device lost drops it", async () => {
  const { ctx } = await ready();
  const extra = new FakeDevice();
  const id = ctx.registerWebGPUDevice(asGPU<GPUDevice>(extra));
  const p = await ctx.allocWebGPUChecked(64, { deviceId: id });
  const buf = ctx.gpuPointerToBuffer(p) as unknown as FakeBuffer;
  ctx.freeWebGPU(p);
  assert.equal(buf.destroyed, 0);
  ctx.unregisterWebGPUDevice(id);
  assert.equal(buf.destroyed, 1);

  const q = await ctx.allocWebGPUChecked(64);
  const bufQ = ctx.gpuPointerToBuffer(q) as unknown as FakeBuffer;
  ctx.freeWebGPU(q);
  const device0 = ctx.getWebGPUDevice(0) as unknown as FakeDevice;
  device0.destroy();
  await tick();
  assert.equal(bufQ.destroyed, 1);
  assert.equal(ctx.stats().cachedBuffers, 0);
});

test("a late allocation error follows the buffer: out of the cache if it sits there, onto the pointer now holding it", async () => {
  const { ctx, device } = await ready();
  // Freed before the verdict: the buffer went to the cache; the verdict takes it out and destroys it.
  device.failNext = { filter: "out-of-memory", message: "Out of memory" };
  const a = ctx.allocWebGPU(3000);
  const bufA = device.created.at(-1)!;
  ctx.freeWebGPU(a);
  assert.equal(ctx.stats().cachedBuffers, 1);
  await tick();
  assert.equal(ctx.stats().cachedBuffers, 0);
  assert.equal(bufA.destroyed, 1);
  assert.equal(ctx.lastAsyncError()?.value, a);
  // Freed and reused by another pointer before the verdict: that pointer gets the error.
  device.failNext = { filter: "out-of-memory", message: "Out of memory" };
  const b = ctx.allocWebGPU(3000);
  ctx.freeWebGPU(b);
  const c = ctx.allocWebGPU(3000);
  assert.equal(
    ctx.gpuPointerToBuffer(c),
    asGPU<GPUBuffer>(device.created.at(-1)),
    "a hit on the not-yet-judged buffer",
  );
  await tick();
  assert.throws(
    () => ctx.gpuPointerToBuffer(c),
    (e: unknown) => isCode("OUT_OF_MEMORY")(e) && (e as WebDLPackError).value === c,
  );
  assert.equal(ctx.lastAsyncError()?.value, c);
  ctx.freeWebGPU(c);
  assert.equal(ctx.stats().cachedBuffers, 0, "never cached again");
});

test("per-owner hit/miss rows are bounded: past 256 owners the least recently allocating one is dropped", async () => {
  const { ctx } = await ready();
  const rowsOn0 = (): string[] =>
    ctx
      .stats()
      .owners.filter((o) => o.deviceId === 0)
      .map((o) => o.owner);
  const kept = ctx.allocWebGPU(64, { owner: "model" }); // a long-lived owner that stops allocating (bucket: 256 bytes)
  const busy = "busy";
  ctx.freeWebGPU(ctx.allocWebGPU(64, { owner: busy }));
  for (let i = 0; i < MAX_OWNER_COUNT_ROWS + 50; i++) {
    ctx.freeWebGPU(ctx.allocWebGPU(64, { owner: `request-${i}` })); // one-off owners, all idle afterwards
    if (i % 100 === 0) ctx.freeWebGPU(ctx.allocWebGPU(64, { owner: busy })); // keeps allocating: stays recent
  }
  const owners = rowsOn0();
  assert.equal(
    owners.length,
    MAX_OWNER_COUNT_ROWS + 1,
    "256 counted rows, plus the row of an evicted owner that still holds a pointer",
  );
  assert.ok(!owners.includes("request-0"), "the oldest idle owner's row went");
  assert.ok(owners.includes(`request-${MAX_OWNER_COUNT_ROWS + 49}`), "the newest owner is there");
  const busyRow = ctx.stats().owners.find((o) => o.owner === busy)!;
  assert.deepEqual(
    [busyRow.hits + busyRow.misses, busyRow.livePointers],
    [5, 0],
    "a recently allocating owner keeps its whole history",
  );
  const model = ctx.stats().owners.find((o) => o.owner === "model")!;
  assert.deepEqual(
    [model.livePointers, model.liveBytes, model.hits, model.misses],
    [1, 256, 0, 0],
    "an evicted owner with a live pointer is still listed; its hit/miss history restarted",
  );
  const s = ctx.stats();
  assert.equal(s.hits + s.misses, MAX_OWNER_COUNT_ROWS + 50 + 5 + 1, "device totals are not affected by evicting rows");
  ctx.freeWebGPU(kept);
  assert.equal(rowsOn0().length, MAX_OWNER_COUNT_ROWS, "with no pointer left the evicted owner is gone from stats");
});

test("DeviceAllocator keeps at most maxOwnerRows rows, in recency order", async () => {
  const { device } = await ready();
  const record = { id: 0, lost: false, device: asGPU<GPUDevice>(device) } as unknown as DeviceRecord;
  const allocator = new DeviceAllocator(record, "disabled", undefined, undefined, 3);
  for (const owner of ["a", "b", "c", "a", "d"]) allocator.take(256, GPUUsage.STORAGE, owner);
  assert.deepEqual([...allocator.counts.keys()], ["c", "a", "d"], "b was the least recent when d came");
  assert.deepEqual(allocator.counts.get("a"), { hits: 0, misses: 2 });
  allocator.take(256, GPUUsage.STORAGE, "d"); // the most recent again: no reordering, counted
  assert.deepEqual(allocator.counts.get("d"), { hits: 0, misses: 2 });
  assert.equal(allocator.misses, 6);
});
