/** Node tests of the memory room against fake WebGPU: bytes by owner, the budget, making room, OUT_OF_MEMORY. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebDLPackError } from "../../js/src/errors.js";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import type { MemoryPressure, MemoryReport } from "../../js/src/context/memory/index.js";
import { asGPU, FakeDevice, FakeGPU } from "./context-fakes.js";
import { isCode } from "./helpers.js";

const KiB = 1024;
const usage = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

/**
 * A context on a fake device with nothing cached: setup() keeps staging buffers (transfers/calibrate.ts),
 * which trimMemory() gives back; then the budget. `base` is the report then (counters are compared to it).
 */
async function ready(memoryBudget?: number): Promise<{ ctx: PageContext; device: FakeDevice; base: MemoryReport }> {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU();
  await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  const kept = ctx.memory().totalBytes;
  assert.equal(await ctx.trimMemory(), kept);
  assert.equal(ctx.memory().totalBytes, 0);
  if (memoryBudget !== undefined) ctx.setMemoryBudget(memoryBudget);
  return { ctx, device: gpu.adapter!.devices[0]!, base: ctx.memory() };
}

/** Counters of `m` minus those of `base`. */
function since(m: MemoryReport, base: MemoryReport): Record<string, number> {
  return {
    pressureEvents: m.pressureEvents - base.pressureEvents,
    trimmedBytes: m.trimmedBytes - base.trimmedBytes,
    outOfMemoryErrors: m.outOfMemoryErrors - base.outOfMemoryErrors,
    deviceOutOfMemory: m.deviceOutOfMemory - base.deviceOutOfMemory,
  };
}

function bytesOf(report: MemoryReport): Record<string, number> {
  return Object.fromEntries(report.owners.map((o) => [o.owner, o.bytes]));
}

test("every buffer on the device is counted by owner: webdlpack, a framework's guard, the page; destroy uncounts", async () => {
  const { ctx, device } = await ready();
  const ptr = await ctx.allocWebGPUChecked(4 * KiB);
  const sync = ctx.allocWebGPU(1 * KiB);
  const fw = ctx.getWebGPUDevice(0, { owner: "fw" });
  const fwBuffer = fw.createBuffer({ size: 8 * KiB, usage });
  const pageBuffer = ctx.getWebGPUDevice(0).createBuffer({ size: 2 * KiB, usage });
  let m = ctx.memory();
  assert.deepEqual(bytesOf(m), { webdlpack: 5 * KiB, fw: 8 * KiB, page: 2 * KiB });
  assert.equal(m.totalBytes, 15 * KiB);
  assert.equal(m.totalBuffers, 4);
  assert.equal(m.instrumented, true);
  assert.equal(m.budget, null);
  // The device holds exactly what was created and not destroyed.
  const held = device.created.filter((b) => b.destroyed === 0).reduce((n, b) => n + b.size, 0);
  assert.equal(m.owners.find((o) => o.owner === "webdlpack")!.cachedBytes, 0);
  assert.equal(m.totalBytes, held);
  fwBuffer.destroy();
  fwBuffer.destroy(); // a second destroy uncounts nothing
  pageBuffer.destroy();
  ctx.freeWebGPU(ptr); // into webdlpack's cache: still held, now cached
  ctx.freeWebGPU(sync);
  m = ctx.memory();
  assert.deepEqual(bytesOf(m), { webdlpack: 5 * KiB, fw: 0, page: 0 });
  const own = m.owners.find((o) => o.owner === "webdlpack")!;
  assert.equal(own.cachedBytes, 5 * KiB);
  assert.equal(own.liveBytes, 0);
  assert.equal(m.owners.find((o) => o.owner === "fw")!.cachedBytes, null); // fw reports nothing
  assert.ok(m.peakBytes >= 15 * KiB);
});

test("a budget makes room before it is crossed: webdlpack's cache first, then handlers in order until it fits", async () => {
  const { ctx, base } = await ready(64 * KiB);
  const fw = ctx.getWebGPUDevice(0, { owner: "fw" });
  const fwCache: GPUBuffer[] = [];
  for (let i = 0; i < 4; i++) fwCache.push(fw.createBuffer({ size: 8 * KiB, usage })); // 32 KiB "cached" by fw
  const calls: string[] = [];
  let seen: MemoryPressure | undefined;
  ctx.onMemoryPressure(
    (p) => {
      calls.push("fw");
      seen = p;
      while (fwCache.length > 0 && ctx.memory().totalBytes + p.requestedBytes > p.budget!) fwCache.pop()!.destroy();
    },
    { owner: "fw", cachedBytes: () => fwCache.reduce((n, b) => n + b.size, 0) },
  );
  ctx.onMemoryPressure(() => calls.push("second"));
  ctx.freeWebGPU(await ctx.allocWebGPUChecked(16 * KiB)); // 16 KiB cached by webdlpack
  assert.equal(ctx.memory().owners.find((o) => o.owner === "fw")!.cachedBytes, 32 * KiB);
  // 48 KiB held; 20 KiB more (bucket class 20 KiB) crosses 64 KiB: webdlpack's 16 KiB cache goes first and is enough.
  const a = await ctx.allocWebGPUChecked(20 * KiB);
  assert.deepEqual(calls, []);
  assert.deepEqual(bytesOf(ctx.memory()), { fw: 32 * KiB, webdlpack: 20 * KiB });
  // 52 KiB held; 24 KiB more: the cache is empty, fw gives back two buffers, the second handler is not needed.
  const b = ctx.allocWebGPU(24 * KiB);
  assert.deepEqual(calls, ["fw"]);
  assert.equal(seen?.reason, "budget");
  assert.equal(seen?.requestedBytes, 24 * KiB);
  assert.equal(seen?.requestedBy, "webdlpack");
  assert.equal(seen?.budget, 64 * KiB);
  const m = ctx.memory();
  assert.deepEqual(bytesOf(m), { fw: 16 * KiB, webdlpack: 44 * KiB });
  assert.ok(m.totalBytes <= 64 * KiB);
  assert.deepEqual(since(m, base), {
    pressureEvents: 2,
    trimmedBytes: 32 * KiB,
    outOfMemoryErrors: 0,
    deviceOutOfMemory: 0,
  });
  ctx.freeWebGPU(a);
  ctx.freeWebGPU(b);
});

test("when no room can be made: OUT_OF_MEMORY naming the budget, the request and the bytes by owner (async, sync)", async () => {
  const { ctx, base } = await ready(32 * KiB);
  const fw = ctx.getWebGPUDevice(0, { owner: "fw" });
  const held = fw.createBuffer({ size: 16 * KiB, usage });
  const ptr = await ctx.allocWebGPUChecked(8 * KiB);
  let handlerCalls = 0;
  ctx.onMemoryPressure(() => (handlerCalls += 1), { owner: "fw" });
  const checkError = (err: unknown, requested: number, by: string): true => {
    assert.ok(err instanceof WebDLPackError);
    assert.equal(err.code, "OUT_OF_MEMORY");
    assert.equal(err.field, "memoryBudget");
    assert.deepEqual(err.value, {
      budget: 32 * KiB,
      requestedBytes: requested,
      requestedBy: by,
      totalBytes: 24 * KiB,
      byOwner: { fw: 16 * KiB, webdlpack: 8 * KiB },
    });
    assert.match(err.message, /memory budget of webgpu:0 \(32768 bytes\) can not take/);
    assert.match(err.message, /held: 24576 bytes \(.*fw 16384/);
    assert.match(err.message, /webdlpack 8192/);
    assert.match(err.message, new RegExp(`value ${requested} bytes for ${by};`));
    return true;
  };
  await assert.rejects(ctx.allocWebGPUChecked(16 * KiB), (e) => checkError(e, 16 * KiB, "webdlpack"));
  assert.throws(
    () => ctx.allocWebGPU(16 * KiB),
    (e) => checkError(e, 16 * KiB, "webdlpack"),
  );
  assert.equal(handlerCalls, 2);
  // A request larger than the whole budget fails at once, asking no one.
  assert.throws(() => ctx.allocWebGPU(40 * KiB), isCode("OUT_OF_MEMORY"));
  assert.equal(handlerCalls, 2);
  assert.equal(since(ctx.memory(), base).outOfMemoryErrors, 3);
  assert.equal(ctx.memory().totalBytes, 24 * KiB); // nothing was created
  held.destroy();
  ctx.freeWebGPU(ptr);
  ctx.setMemoryBudget(null);
  ctx.freeWebGPU(ctx.allocWebGPU(40 * KiB));
});

test("a device out-of-memory error makes room and retries once; a second one is OUT_OF_MEMORY naming the bytes by owner", async () => {
  const { ctx, device, base } = await ready();
  const reasons: string[] = [];
  ctx.onMemoryPressure((p) => void reasons.push(`${p.reason}:${p.requestedBytes}:${p.bytesToFree}`), { owner: "fw" });
  ctx.freeWebGPU(await ctx.allocWebGPUChecked(4 * KiB)); // cached: trimmed by the room made
  device.failNext = { filter: "out-of-memory", message: "fake OOM" };
  const ptr = await ctx.allocWebGPUChecked(8 * KiB);
  assert.deepEqual(reasons, [`out-of-memory:${8 * KiB}:Infinity`]);
  let m = ctx.memory();
  assert.deepEqual(bytesOf(m), { webdlpack: 8 * KiB });
  assert.deepEqual(since(m, base), {
    pressureEvents: 1,
    trimmedBytes: 4 * KiB,
    outOfMemoryErrors: 0,
    deviceOutOfMemory: 1,
  });
  // Both tries refused: the handler arms the second failure.
  device.failNext = { filter: "out-of-memory", message: "fake OOM" };
  ctx.onMemoryPressure(() => {
    device.failNext = { filter: "out-of-memory", message: "fake OOM again" };
  });
  await assert.rejects(ctx.allocWebGPUChecked(16 * KiB), (err: unknown) => {
    assert.ok(err instanceof WebDLPackError);
    assert.equal(err.code, "OUT_OF_MEMORY");
    assert.equal(err.field, "nbytes");
    assert.match(
      err.message,
      /webgpu:0 is out of memory: it refused 16384 bytes for webdlpack after making room; held: 8192 bytes \(webdlpack 8192\)/,
    );
    assert.match(String((err.cause as Error).message), /fake OOM again/);
    return true;
  });
  m = ctx.memory();
  assert.equal(since(m, base).deviceOutOfMemory, 3);
  assert.equal(since(m, base).outOfMemoryErrors, 1);
  ctx.freeWebGPU(ptr);
});

test("bad budgets and handlers are INVALID_ARGUMENT naming the field; unregistering stops the calls", async () => {
  await assert.rejects(
    new PageContext(CONTEXT_PROTOCOL).setup({ gpu: asGPU<GPU>(new FakeGPU()), memoryBudget: -1 }),
    (e: unknown) => isCode("INVALID_ARGUMENT")(e) && (e as WebDLPackError).field === "cfg.memoryBudget",
  );
  const { ctx } = await ready();
  for (const bad of [0, 1.5, "1", Number.MAX_VALUE])
    assert.throws(
      () => ctx.setMemoryBudget(bad as number),
      (e: unknown) => isCode("INVALID_ARGUMENT")(e) && (e as WebDLPackError).field === "bytes",
    );
  assert.throws(() => ctx.setMemoryBudget(1024, 7), isCode("UNKNOWN_DEVICE"));
  assert.throws(
    () => ctx.onMemoryPressure(42 as never),
    (e: unknown) => (e as WebDLPackError).field === "handler",
  );
  assert.throws(
    () => ctx.onMemoryPressure(() => 0, { owner: "" }),
    (e: unknown) => (e as WebDLPackError).field === "options.owner",
  );
  assert.throws(
    () => ctx.onMemoryPressure(() => 0, { cachedBytes: 3 as never }),
    (e: unknown) => (e as WebDLPackError).field === "options.cachedBytes",
  );
  ctx.setMemoryBudget(16 * KiB);
  let calls = 0;
  const off = ctx.onMemoryPressure(() => {
    calls += 1;
  });
  const p = ctx.allocWebGPU(12 * KiB);
  assert.throws(() => ctx.allocWebGPU(8 * KiB), isCode("OUT_OF_MEMORY"));
  off();
  off();
  assert.throws(() => ctx.allocWebGPU(8 * KiB), isCode("OUT_OF_MEMORY"));
  assert.equal(calls, 1);
  ctx.freeWebGPU(p);
});

test("device loss: nothing is held any more; an unregistered device gets its own createBuffer back", async () => {
  const { ctx, device } = await ready();
  const p = ctx.allocWebGPU(4 * KiB);
  assert.equal(ctx.memory().totalBytes, 4 * KiB);
  const other = new FakeDevice();
  const own = other.createBuffer;
  const id = ctx.registerWebGPUDevice(asGPU<GPUDevice>(other));
  assert.notEqual(Object.getOwnPropertyDescriptor(other, "createBuffer"), undefined);
  const b = (other as unknown as GPUDevice).createBuffer({ size: 256, usage });
  assert.deepEqual(bytesOf(ctx.memory(id)), { page: 256 });
  b.destroy();
  ctx.unregisterWebGPUDevice(id);
  assert.equal(Object.getOwnPropertyDescriptor(other, "createBuffer"), undefined);
  assert.equal(other.createBuffer, own);
  device.destroy();
  await new Promise((r) => setTimeout(r, 5));
  const m = ctx.memory();
  assert.equal(m.totalBytes, 0);
  assert.equal(m.totalBuffers, 0);
  ctx.freeWebGPU(p);
  assert.equal(ctx.memory().totalBytes, 0);
});

test("a framework's or the page's createBuffer past the budget never throws: it goes ahead, counted as an overrun", async () => {
  const { ctx, device, base } = await ready(32 * KiB);
  const fw = ctx.getWebGPUDevice(0, { owner: "fw" });
  const raw = ctx.getWebGPUDevice(0);
  const held = fw.createBuffer({ size: 24 * KiB, usage });
  const asked: MemoryPressure[] = [];
  ctx.onMemoryPressure((p) => void asked.push(p), { owner: "fw" });
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(" "));
  let over: GPUBuffer[];
  try {
    // Room is made first (the handler is asked), then the creations go ahead past the budget, as WebGPU's would.
    over = [fw.createBuffer({ size: 16 * KiB, usage }), fw.createBuffer({ size: 8 * KiB, usage })];
    over.push(raw.createBuffer({ size: 4 * KiB, usage }));
    over.push(fw.createBuffer({ size: 64 * KiB, usage })); // larger than the whole budget: nobody is asked
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(
    asked.map((p) => [p.reason, p.requestedBy, p.requestedBytes]),
    [
      ["budget", "fw", 16 * KiB],
      ["budget", "fw", 8 * KiB],
      ["budget", "page", 4 * KiB],
    ],
  );
  const m = ctx.memory();
  assert.deepEqual(bytesOf(m), { webdlpack: 0, fw: 112 * KiB, page: 4 * KiB });
  assert.equal(
    m.totalBytes,
    device.created.filter((b) => b.destroyed === 0).reduce((n, b) => n + b.size, 0),
  );
  assert.equal(m.budgetOverruns - base.budgetOverruns, 4);
  assert.equal(since(m, base).outOfMemoryErrors, 0);
  // One warning per owner, saying what happened and where to look.
  assert.equal(warnings.length, 2);
  assert.match(warnings[0]!, /fw's createBuffer of 16384 bytes crosses the memory budget of webgpu:0 \(32768 bytes/);
  assert.match(warnings[0]!, /budgetOverruns/);
  assert.match(warnings[1]!, /page's createBuffer of 4096 bytes/);
  // webdlpack's own allocations are still refused while the page is over its budget.
  assert.throws(() => ctx.allocWebGPU(1 * KiB), isCode("OUT_OF_MEMORY"));
  await assert.rejects(ctx.allocWebGPUChecked(1 * KiB), isCode("OUT_OF_MEMORY"));
  for (const b of [held, ...over]) b.destroy();
  assert.equal(ctx.memory().totalBytes, 0);
  ctx.freeWebGPU(await ctx.allocWebGPUChecked(1 * KiB)); // under the budget again: webdlpack allocates
});
