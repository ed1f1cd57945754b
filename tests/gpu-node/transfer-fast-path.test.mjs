// What a pointer's table entry keeps for its transfers (the buffer's size and usage, its device's transfers
// object; js/src/context/transfers/context-calls.ts) never outlives what it describes: a freed pointer, a lost
// device, a poisoned pointer and released transfers each go the checked way, and a pointer made later in the same
// slot reads its own buffer. Also: setup's warm-up leaves nothing behind; readbacks back to back in one task
// reuse one staging buffer.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create, globals } from "webgpu";
import { getContext } from "../../js/dist/index.js";
import { releaseTransfers, transfersFor } from "../../js/dist/context/transfers/registry.js";
import { ReadRing } from "../../js/dist/context/transfers/staging.js";

Object.assign(globalThis, globals);
const gpu = create([]);
const U = globals.GPUBufferUsage;

async function newDevice() {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, "a WebGPU adapter (is VK_DRIVER_FILES set? run through scripts/run-tests.sh gpu)");
  return adapter.requestDevice();
}

const filled = (n, value) => new Uint8Array(n).fill(value);
const ctx = getContext();
let device;

let ledgerBefore;
let afterSetup;

before(async () => {
  device = await newDevice();
  ledgerBefore = ctx.ledger.entries().length;
  await ctx.setup({ device });
  afterSetup = { stats: ctx.stats(), transfers: ctx.transferStats(0), ledgerEntries: ctx.ledger.entries().length };
});

after(() => device.destroy());

describe("a pointer's transfer fast path", () => {
  test("setup's warm-up (uploads and readbacks through a pointer of its own) leaves nothing behind", async () => {
    const device0 = afterSetup.stats.devices.find((d) => d.deviceId === 0 && d.current);
    assert.equal(device0.livePointers, 0, "no pointer stays live");
    assert.equal(afterSetup.ledgerEntries, ledgerBefore, "no ledger entry");
    const s = afterSetup.transfers;
    assert.equal(s.pending, 0);
    assert.equal(s.read.inUse + s.write.inUse, 0, "no staging buffer is out");
    assert.ok(s.read.created + s.read.reused >= 3, "the readbacks ran (array, new array, wasm memory)");
    assert.equal(s.lastUploadPath, "writeBuffer", "the upload ran, through writeBuffer");
  });

  test("a freed pointer is refused; a later pointer in the same slot reads and writes its own buffer", async () => {
    const a = await ctx.allocWebGPUChecked(1024);
    ctx.upload(a, filled(1024, 1));
    assert.deepEqual(new Uint8Array(await ctx.readback(a)), filled(1024, 1));
    ctx.freeWebGPU(a);
    assert.throws(
      () => ctx.upload(a, filled(1024, 2)),
      (e) => e.code === "STALE_POINTER",
    );
    await assert.rejects(ctx.readbackInto(a, new Uint8Array(1024)), (e) => e.code === "STALE_POINTER");
    await assert.rejects(ctx.readback(a), (e) => e.code === "STALE_POINTER");
    // A different size: the allocator hands out another buffer, which the new pointer (maybe a's slot) must name.
    const b = await ctx.allocWebGPUChecked(4096, { usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    ctx.upload(b, filled(4096, 3));
    const into = new Uint8Array(4096);
    await ctx.readbackInto(b, into);
    assert.deepEqual(into, filled(4096, 3));
    assert.equal(ctx.gpuPointerInfo(b).size, ctx.gpuPointerToBuffer(b).size);
    ctx.freeWebGPU(b);
  });

  test("usage and size come from the entry: a buffer without COPY_DST refuses an upload, one too small a long one", async () => {
    const p = await ctx.allocWebGPUChecked(256, { usage: U.STORAGE | U.COPY_SRC });
    assert.throws(
      () => ctx.upload(p, filled(256, 1)),
      (e) => e.code === "UNSUPPORTED" && /COPY_DST/.test(e.message),
    );
    ctx.freeWebGPU(p);
    const q = await ctx.allocWebGPUChecked(256, { usage: U.COPY_DST });
    ctx.upload(q, filled(256, 1)); // the fast path writes it
    assert.throws(
      () => ctx.upload(q, filled(1 << 20, 1)),
      (e) => e.code === "OUT_OF_BOUNDS",
    );
    assert.throws(
      () => ctx.upload(q, filled(8, 1), { byteOffset: 2 }),
      (e) => e.code === "UNSUPPORTED",
    );
    await assert.rejects(ctx.readbackInto(q, new Uint8Array(256)), (e) => e.code === "INVALID_ARGUMENT");
    ctx.freeWebGPU(q);
  });

  test("device loss after transfers: every later transfer of the pointer is DEVICE_LOST", async () => {
    const doomed = await newDevice();
    const id = ctx.registerWebGPUDevice(doomed);
    const p = await ctx.allocWebGPUChecked(1024, { deviceId: id });
    ctx.upload(p, filled(1024, 4));
    assert.deepEqual(new Uint8Array(await ctx.readback(p)), filled(1024, 4));
    doomed.destroy();
    await doomed.lost;
    assert.throws(
      () => ctx.upload(p, filled(1024, 5)),
      (e) => e.code === "DEVICE_LOST",
    );
    await assert.rejects(ctx.readbackInto(p, new Uint8Array(1024)), (e) => e.code === "DEVICE_LOST");
    await assert.rejects(ctx.readback(p), (e) => e.code === "DEVICE_LOST");
    ctx.freeWebGPU(p);
    ctx.unregisterWebGPUDevice(id);
  });

  test("a pointer poisoned (its buffer refused: another device's) throws its error on every transfer", async () => {
    const foreignDevice = await newDevice();
    const foreign = foreignDevice.createBuffer({ size: 1024, usage: U.COPY_SRC | U.COPY_DST });
    const p = ctx.registerGPUBuffer(foreign);
    // Still being checked: the readback waits for the verdict, then refuses.
    await assert.rejects(ctx.readbackInto(p, new Uint8Array(1024)), (e) => e.code === "BAD_DEVICE");
    assert.throws(
      () => ctx.upload(p, filled(1024, 6)),
      (e) => e.code === "BAD_DEVICE",
    );
    await assert.rejects(ctx.readback(p), (e) => e.code === "BAD_DEVICE");
    ctx.freeWebGPU(p);
    foreignDevice.destroy();
  });

  test("released transfers (the device's were dropped) are not used again: the pointer takes the current ones", async () => {
    const p = await ctx.allocWebGPUChecked(1024);
    ctx.upload(p, filled(1024, 7));
    const before = transfersFor(device);
    assert.deepEqual(new Uint8Array(await ctx.readback(p)), filled(1024, 7));
    releaseTransfers(device);
    assert.equal(before.released, true);
    ctx.upload(p, filled(1024, 8));
    const into = new Uint8Array(1024);
    await ctx.readbackInto(p, into);
    assert.deepEqual(into, filled(1024, 8));
    const now = transfersFor(device);
    assert.notEqual(now, before);
    assert.equal(now.stats().lastUploadPath, "writeBuffer", "the upload went through the current transfers");
    assert.equal(now.stats().read.created + now.stats().read.reused, 1, "the readback too");
    ctx.freeWebGPU(p);
  });

  test("readbacks back to back in one task reuse one staging buffer (the one given back is unmapped for it)", async () => {
    const p = await ctx.allocWebGPUChecked(512);
    ctx.upload(p, filled(512, 9));
    const t = transfersFor(device);
    const into = new Uint8Array(512);
    await ctx.readbackInto(p, into);
    const created = t.stats().read.created;
    for (let k = 0; k < 5; k++) {
      ctx.upload(p, filled(512, 10 + k));
      await ctx.readbackInto(p, into); // no macrotask in between: the last staging is still mapped
      assert.deepEqual(into, filled(512, 10 + k));
    }
    assert.equal(t.stats().read.created, created, "no staging buffer made for them");
    ctx.freeWebGPU(p);
  });
});

describe("the read ring's hot buffer (the one a readback gave back last)", () => {
  /** A ring, and a buffer taken from it, mapped as a readback leaves it, given back mapped. */
  async function ringWithHot(maxKeptBytes = 2 ** 20) {
    const ring = new ReadRing(device, (b) => b.destroy(), maxKeptBytes);
    const hot = ring.take(1024);
    await hot.mapAsync(globals.GPUMapMode.READ, 0, 1024);
    ring.giveMapped(hot);
    return { ring, hot };
  }

  test("is counted as kept, and the next take of its class gets it unmapped", async () => {
    const { ring, hot } = await ringWithHot();
    assert.deepEqual([ring.stats().kept, ring.stats().keptBytes, ring.stats().inUse], [1, 1024, 0]);
    assert.equal(ring.owned(1024), 1);
    assert.equal(ring.hasReady(1024), false, "mapped: not ready yet, as a buffer given back mapped never was");
    const again = ring.take(1000);
    assert.equal(again, hot);
    assert.equal(again.mapState, "unmapped", "a copy destination must be unmapped");
    assert.deepEqual([ring.stats().kept, ring.stats().inUse, ring.stats().created], [0, 1, 1]);
    ring.give(again, true);
    ring.drain();
  });

  test("is unmapped in a later task; then ready, and a take of another class makes it a kept buffer", async () => {
    const { ring, hot } = await ringWithHot();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(hot.mapState, "unmapped");
    assert.equal(ring.hasReady(1024), true, "unmapped: ready, as a kept buffer");
    const other = ring.take(64 * 1024); // 1 KiB can not serve 64 KiB: a new buffer; the hot one is kept
    assert.notEqual(other, hot);
    assert.deepEqual([ring.stats().kept, ring.stats().keptBytes], [1, 1024]);
    assert.equal(ring.take(1024), hot, "then taken as a kept buffer of its class");
    ring.drain();
  });

  test("serves a smaller class within 64x that keeps no buffer of its own, and not one that does", async () => {
    const ring = new ReadRing(device, (b) => b.destroy(), 2 ** 20);
    const big = ring.take(64 * 1024);
    await big.mapAsync(globals.GPUMapMode.READ, 0, 1024);
    ring.giveMapped(big);
    const small = ring.take(1024); // 1 KiB keeps none: the hot 64 KiB buffer, unmapped
    assert.equal(small, big);
    assert.equal(small.mapState, "unmapped");
    assert.deepEqual([ring.stats().kept, ring.stats().keptBytes, ring.stats().created], [0, 0, 1]);
    await small.mapAsync(globals.GPUMapMode.READ, 0, 1024);
    ring.giveMapped(small);
    assert.notEqual(ring.take(256), big, "256 B is below 1/64 of it: not served by it");
    const own = ring.take(2048); // 2 KiB: served by the hot one (within 64x), then given back kept
    assert.equal(own, big);
    ring.give(own, true);
    const two = ring.take(2048 + 1); // a 4 KiB class buffer of its own, kept once given back
    ring.give(two, true);
    const again = ring.take(64 * 1024); // the 64 KiB one, now kept (not hot)
    await again.mapAsync(globals.GPUMapMode.READ, 0, 1024);
    ring.giveMapped(again); // hot again
    assert.equal(ring.take(4096), two, "4 KiB keeps its own buffer: that one, not the hot 64 KiB one");
    ring.drain();
  });

  test("memory pressure (clear), a lost device and a budget it does not fit destroy it, mapped or not", async () => {
    const cleared = await ringWithHot();
    cleared.ring.clear();
    assert.equal(cleared.hot.mapState, "unmapped", "destroyed (destroy unmaps)");
    assert.deepEqual([cleared.ring.stats().kept, cleared.ring.stats().keptBytes], [0, 0]);
    assert.notEqual(cleared.ring.take(1024), cleared.hot, "a destroyed buffer is never handed out");
    cleared.ring.drain();

    const lost = await ringWithHot();
    lost.ring.lose();
    assert.equal(lost.hot.mapState, "unmapped");
    assert.deepEqual([lost.ring.stats().kept, lost.ring.stats().inUse], [0, 0]);

    const small = await ringWithHot(512); // the 1 KiB buffer is over the ring's budget: not held, not kept
    small.ring.unmapNow();
    assert.deepEqual([small.ring.stats().kept, small.ring.stats().keptBytes], [0, 0]);
    assert.equal(small.hot.mapState, "unmapped");
    small.ring.drain();
  });
});
