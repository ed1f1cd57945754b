/**
 * Staging that follows demand on a long-lived device (issue 33): a size class a transfer lacked is made for the
 * next one by making room — the least recently kept buffers of other classes go — within the ring's cap and, under
 * a memory budget, within 1/8 of it without ever pressing it; the cold way of a class that stages warm. Against
 * fake WebGPU (tests/js/context-fakes.ts); nothing here is timed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { coldWay } from "../../js/src/context/transfers/calibrate.js";
import { directBelow } from "../../js/src/context/transfers/device-transfers.js";
import { Inflight } from "../../js/src/context/transfers/inflight.js";
import { ReadRing, WriteRing } from "../../js/src/context/transfers/staging.js";
import { type WritePlan, writeRange } from "../../js/src/context/transfers/write.js";
import { asGPU, DEFAULT_LIMITS, FakeAdapter, FakeDevice, FakeGPU } from "./context-fakes.js";

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const usage = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST
const sizesOf = (buffers: readonly GPUBuffer[]): number[] => buffers.map((b) => b.size).sort((x, y) => x - y);

test("a ring grows for a class it lacks by dropping the least recently kept buffers of other classes", async () => {
  const device = new FakeDevice([], { maxBufferSize: GiB });
  const destroyed: GPUBuffer[] = [];
  const destroy = (b: GPUBuffer): void => {
    destroyed.push(b);
    b.destroy();
  };
  const ring = new WriteRing(asGPU<GPUDevice>(device), destroy, 24 * MiB);
  await ring.prepare(4 * MiB, 1); // least recently kept
  await ring.prepare(8 * MiB, 1);
  await ring.prepare(2 * MiB, 2);
  assert.equal(ring.stats().keptBytes, 16 * MiB);
  // 16 MiB more: 8 MiB must go, the oldest first (the 4 MiB, then the 8 MiB); the 2 MiB pair stays.
  await ring.prepare(16 * MiB, 1);
  assert.deepEqual(sizesOf(destroyed), [4 * MiB, 8 * MiB]);
  assert.equal(ring.stats().keptBytes, 20 * MiB);
  assert.equal(ring.owned(16 * MiB), 1);
  // A class that can not fit even with every other buffer gone is not made, and nothing is dropped for it.
  await ring.prepare(32 * MiB, 1);
  assert.equal(ring.owned(32 * MiB), 0);
  assert.equal(destroyed.length, 2);
  // Nor while buffers out leave no room: they are never dropped.
  const out = ring.take(16 * MiB);
  await ring.prepare(16 * MiB, 2);
  assert.equal(ring.owned(16 * MiB), 1, "16 MiB out: no room for 16 MiB more, even with the 2 MiB pair gone");
  assert.equal(destroyed.length, 2, "so nothing was dropped");
  assert.ok(!destroyed.includes(out));
});

test("on a long-lived device every size stages once its staging was made, in any order (no writeBuffer fallback)", async () => {
  // Node on a GPU: one piece per upload, staging from 8 MiB, no new staging made inline (makeStaging false: the
  // first upload of a size it lacks goes through writeBuffer), 384 MiB-like cap scaled down: 48 MiB.
  const device = new FakeDevice([], { maxBufferSize: GiB });
  const ring = new WriteRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 48 * MiB);
  await ring.prepare(4 * MiB, 1); // what setup kept (scaled down)
  const inflight = new Inflight(asGPU<GPUDevice>(device), "fake");
  const plan: WritePlan = {
    classes: [{ fromBytes: 2 * MiB, cold: "staging", warm: "staging" }],
    makeStaging: false,
    minPieceBytes: 256 * MiB,
    maxPieces: 8,
  };
  const history = { warm: 0 };
  const sizes = [32 * MiB, 2 * MiB, 8 * MiB, 4 * MiB];
  const targets = new Map(sizes.map((n) => [n, device.createBuffer({ size: n, usage })]));
  const upload = (n: number, fill: number): string => {
    const bytes = new Uint8Array(n).fill(fill);
    const path = writeRange(asGPU<GPUDevice>(device), ring, inflight, plan, history, asGPU(targets.get(n)!), 0, bytes);
    assert.equal(targets.get(n)!.data[n - 1], fill, "the bytes arrived");
    return path;
  };
  /** The GPU work done, the staging made for the next call (prepareSoon) and mapped again. */
  const idle = async (): Promise<void> => {
    await new Promise((r) => setTimeout(r, 5));
    await ring.settled();
  };
  const first = sizes.map((n, i) => upload(n, i + 1));
  assert.equal(first[0], "mixed", "32 MiB: none of its size yet, none made inline: the kept 4 MiB takes a part");
  assert.equal(first[1], "writeBuffer", "2 MiB: the kept buffer is being mapped again");
  await idle();
  for (let round = 0; round < 3; round++) {
    for (const [i, n] of [...sizes].reverse().entries()) {
      assert.equal(upload(n, 10 + round * 4 + i), "staging", `round ${round}, ${n} bytes`);
      await idle();
    }
  }
  assert.ok(ring.stats().keptBytes <= 48 * MiB);
});

/** A context set up on a fake GPU whose buffers may be 1 GiB, under `memoryBudget`. */
async function setUp(memoryBudget: number) {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU(new FakeAdapter(undefined, { ...DEFAULT_LIMITS, maxBufferSize: GiB }));
  await ctx.setup({ gpu: asGPU<GPU>(gpu), requiredLimits: { maxBufferSize: GiB }, memoryBudget });
  return ctx;
}

test("under a memory budget staging grows to at most 1/8 of it a ring and never presses the budget", async () => {
  const budget = 64 * MiB;
  const ctx = await setUp(budget);
  const ptr = await ctx.allocWebGPUChecked(16 * MiB);
  const bytes = new Uint8Array(16 * MiB);
  for (let i = 0; i < bytes.length; i += 4099) bytes[i] = i & 0xff;
  for (let round = 0; round < 4; round++) {
    ctx.upload(ptr, bytes);
    const back = new Uint8Array(await ctx.readback(ptr));
    assert.equal(back[4099 * 7], bytes[4099 * 7]);
    await new Promise((r) => setTimeout(r, 5));
    const s = ctx.transferStats();
    assert.ok(s.read.keptBytes <= budget / 8, `read staging ${s.read.keptBytes}`);
    assert.ok(s.write.keptBytes <= budget / 8, `write staging ${s.write.keptBytes}`);
  }
  assert.equal(ctx.memory().pressureEvents, 0, "no staging made pressure");
  ctx.freeWebGPU(ptr);
});

test("a ring makes no staging that would cross the device's budget", async () => {
  const budget = 64 * MiB;
  const ctx = await setUp(budget);
  const device = ctx.getWebGPUDevice(0);
  await ctx.trimMemory(); // setup's staging gone: the device holds what is allocated below
  const held = [];
  for (const n of [32 * MiB, 16 * MiB, 8 * MiB, 4 * MiB]) held.push(await ctx.allocWebGPUChecked(n));
  const left = budget - ctx.memory().totalBytes;
  assert.ok(left >= 2 * MiB && left < 8 * MiB, `left ${left}`); // 8 MiB: a ring's cap under this budget
  const ring = new ReadRing(device, (b) => b.destroy(), 384 * MiB);
  const before = ctx.memory().totalBytes;
  const events = ctx.memory().pressureEvents; // the trim above counts as one
  await ring.prepare(8 * MiB, 1);
  assert.equal(ring.owned(8 * MiB), 0, "8 MiB more would cross the budget");
  assert.equal(ctx.memory().totalBytes, before);
  await ring.prepare(2 * MiB, 1);
  assert.equal(ring.owned(2 * MiB), 1, "2 MiB fits");
  assert.equal(ctx.memory().pressureEvents, events, "no pressure made");
  ring.drain();
  for (const ptr of held) ctx.freeWebGPU(ptr);
});

test("a class that stages warm takes staging cold where its first staged call was faster at all", () => {
  // Warm staging: any margin (the staging is kept for the warm calls anyway; a fresh device's first writeBuffer
  // costs more than the one setup times).
  assert.equal(coldWay(4.0, 3.0, "staging"), "staging");
  assert.equal(coldWay(3.0, 4.0, "staging"), "writeBuffer");
  // Warm writeBuffer: staging only where twice as fast.
  assert.equal(coldWay(4.0, 3.0, "writeBuffer"), "writeBuffer");
  assert.equal(coldWay(4.0, 1.9, "writeBuffer"), "staging"); // exact: compares a returned string
});

test("an upload that stages with no staging of its size and none made inline: the kept buffer takes its first part", async () => {
  // Node on the GPU: setup keeps one 16 MiB buffer, new staging measured dearer than writeBuffer (makeStaging
  // false); a first 64 MiB upload stages its first 16 MiB and writes the rest with one writeBuffer.
  const device = new FakeDevice([], { maxBufferSize: GiB });
  const ring = new WriteRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 384 * MiB);
  await ring.prepare(16 * MiB, 1);
  const inflight = new Inflight(asGPU<GPUDevice>(device), "fake");
  const plan: WritePlan = {
    classes: [{ fromBytes: 8 * MiB, cold: "staging", warm: "staging" }],
    makeStaging: false,
    minPieceBytes: 256 * MiB,
    maxPieces: 8,
  };
  const n = 64 * MiB - 3; // the tail padded by writeBuffer
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i += 4093) bytes[i] = (i * 5 + 3) & 0xff;
  bytes[n - 1] = 0x77;
  const target = device.createBuffer({ size: 64 * MiB, usage });
  const made = (): number => device.created.filter((b) => b.label === "webdlpack upload staging").length;
  const before = made();
  const path = writeRange(asGPU<GPUDevice>(device), ring, inflight, plan, { warm: 0 }, asGPU(target), 0, bytes);
  assert.equal(path, "mixed");
  assert.equal(made(), before, "no staging made inline");
  assert.equal(ring.stats().inUse, 1, "the kept 16 MiB buffer took the first part");
  assert.deepEqual(target.data.subarray(0, n), bytes);
  assert.equal(target.data[n], 0, "padding");
  // Its own staging is made once the GPU work is done: the next upload of the size stages whole.
  await new Promise((r) => setTimeout(r, 5));
  await ring.settled();
  bytes.fill(9, 0, 4096);
  const next = writeRange(asGPU<GPUDevice>(device), ring, inflight, plan, { warm: 1 }, asGPU(target), 0, bytes);
  assert.equal(next, "staging");
  assert.deepEqual(target.data.subarray(0, n), bytes);
});

test("the direct writeBuffer path covers every class whose next upload takes writeBuffer", () => {
  const KiB = 1024;
  const classes = [
    { fromBytes: 64 * KiB, cold: "staging", warm: "writeBuffer" },
    { fromBytes: 512 * KiB, cold: "writeBuffer", warm: "writeBuffer" },
    { fromBytes: 2 * MiB, cold: "writeBuffer", warm: "staging" },
  ] as const;
  // The 64 KiB class's first upload stages (cold): it goes through the class path …
  assert.equal(directBelow(classes, { warm: 0 }), 64 * KiB);
  // … and once it had one, everything below the class that stages warm goes direct.
  assert.equal(directBelow(classes, { warm: 1 }), 2 * MiB);
  assert.equal(directBelow(classes.slice(0, 2), { warm: 1 }), Number.POSITIVE_INFINITY);
  assert.equal(directBelow([], { warm: 0 }), Number.POSITIVE_INFINITY);
});
