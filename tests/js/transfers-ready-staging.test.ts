/**
 * The staging setup() keeps ready (transfers/calibrate.ts): sized by what the plan uses and by the memory
 * budget, and given back under memory pressure — also the buffers out in a transfer when the pressure came.
 * Against fake WebGPU (tests/js/context-fakes.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { readyStaging } from "../../js/src/context/transfers/calibrate.js";
import { DEFAULT_TRANSFER_PLAN } from "../../js/src/context/transfers/device-transfers.js";
import { Inflight } from "../../js/src/context/transfers/inflight.js";
import { ReadRing, WriteRing } from "../../js/src/context/transfers/staging.js";
import { writeRange } from "../../js/src/context/transfers/write.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { asGPU, DEFAULT_LIMITS, FakeAdapter, FakeDevice, FakeGPU } from "./context-fakes.js";

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const usage = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

/** The calibration target readyStaging reads: a device of `maxBufferSize`, the default plan (`minPieceBytes`). */
function target(maxBufferSize = GiB, minPieceBytes = DEFAULT_TRANSFER_PLAN.write.minPieceBytes) {
  return {
    device: asGPU<GPUDevice>({ limits: { maxBufferSize } }),
    read: DEFAULT_TRANSFER_PLAN.read,
    write: { ...DEFAULT_TRANSFER_PLAN.write, minPieceBytes },
  };
}

const total = (r: ReturnType<typeof readyStaging>): number =>
  r.readBytes * r.readCount + r.smallReadBytes + r.writeBytes * r.writeCount;
const KiB = 1024;

test("without a budget: four 4 MiB read buffers and a 64 KiB one, and the pieces of a 16 MiB upload only where uploads stage", () => {
  assert.deepEqual(readyStaging(target(), MiB, null), {
    readBytes: 4 * MiB,
    readCount: 4,
    smallReadBytes: 64 * KiB,
    writeBytes: 4 * MiB,
    writeCount: 4,
  });
  // In Node a piece may be 64 MiB: a 16 MiB upload is one 16 MiB piece, not a 64 MiB buffer.
  assert.deepEqual(readyStaging(target(GiB, 64 * MiB), MiB, null), {
    readBytes: 4 * MiB,
    readCount: 4,
    smallReadBytes: 64 * KiB,
    writeBytes: 16 * MiB,
    writeCount: 1,
  });
  // Uploads never stage (a software adapter): no write staging.
  assert.deepEqual(readyStaging(target(), Number.POSITIVE_INFINITY, null), {
    readBytes: 4 * MiB,
    readCount: 4,
    smallReadBytes: 64 * KiB,
    writeBytes: 0,
    writeCount: 0,
  });
  // A device whose buffers are small: read buffers of its largest size.
  assert.equal(readyStaging(target(MiB), MiB, null).readBytes, MiB);
  // A budget whose read buffers are 64 KiB or less: they serve small readbacks themselves, no small one beside.
  assert.equal(readyStaging(target(), MiB, 512 * KiB).smallReadBytes, 0);
  assert.equal(readyStaging(target(), MiB, 1024).smallReadBytes, 0);
});

test("with a budget: everything within 1/8 of it, write staging only for uploads that stage", () => {
  // The page of the brief: 40 MiB of budget loses at most 5 MiB to staging (was 32 MiB).
  const forty = readyStaging(target(), MiB, 40 * MiB);
  assert.deepEqual(forty, {
    readBytes: 2 * MiB,
    readCount: 1,
    smallReadBytes: 64 * KiB,
    writeBytes: 2 * MiB,
    writeCount: 1,
  });
  // Uploads stage from 4 MiB only: a 2 MiB ready buffer would serve none of them.
  assert.deepEqual(readyStaging(target(), 4 * MiB, 40 * MiB), {
    readBytes: 2 * MiB,
    readCount: 1,
    smallReadBytes: 64 * KiB,
    writeBytes: 0,
    writeCount: 0,
  });
  // No upload staging: the read buffers take the whole share.
  assert.deepEqual(readyStaging(target(), Number.POSITIVE_INFINITY, 40 * MiB), {
    readBytes: 4 * MiB,
    readCount: 1,
    smallReadBytes: 64 * KiB,
    writeBytes: 0,
    writeCount: 0,
  });
  assert.equal(total(readyStaging(target(), MiB, 1024)), 0, "a 1 KiB budget: nothing kept");
  for (let budget = 64 * 1024; budget <= 4 * GiB; budget *= 2) {
    for (const minPiece of [4 * MiB, 64 * MiB]) {
      for (const stagingMin of [64 * 1024, MiB, 16 * MiB, Number.POSITIVE_INFINITY]) {
        const r = readyStaging(target(GiB, minPiece), stagingMin, budget);
        assert.ok(total(r) <= budget / 8, `budget ${budget}: ${JSON.stringify(r)}`);
        assert.ok(r.readCount <= 4 && r.writeBytes * r.writeCount <= 16 * MiB);
      }
    }
  }
});

/** A context set up on a fake GPU whose buffers may be 1 GiB. */
async function setUp(memoryBudget?: number) {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU(new FakeAdapter(undefined, { ...DEFAULT_LIMITS, maxBufferSize: GiB }));
  await ctx.setup({
    gpu: asGPU<GPU>(gpu),
    requiredLimits: { maxBufferSize: GiB },
    ...(memoryBudget === undefined ? {} : { memoryBudget }),
  });
  return { ctx, device: gpu.adapter!.devices[0]! };
}

test("setup under a 40 MiB budget keeps at most 5 MiB of staging and measured within half the budget", async () => {
  const { ctx } = await setUp(40 * MiB);
  const m = ctx.memory();
  const stats = ctx.transferStats();
  assert.ok(m.totalBytes <= 5 * MiB, `kept ${m.totalBytes} bytes`);
  assert.equal(m.totalBytes, stats.read.keptBytes + stats.write.keptBytes, "all of it is staging");
  assert.ok(stats.read.kept >= 1, "a read buffer is still ready before the first readback");
  assert.ok(m.peakBytes <= 20 * MiB, `peak ${m.peakBytes} bytes during setup`);
  assert.equal(m.pressureEvents, 0, "setup never pressed the budget");
  assert.ok(
    stats.calibration!.upload.every((u) => u.bytes <= 8 * MiB),
    "uploads measured up to 1/4 of the budget",
  );
});

test("setup without a budget keeps at most 16 MiB + 64 KiB read and 16 MiB write staging, nothing else", async () => {
  const { ctx } = await setUp();
  const stats = ctx.transferStats();
  assert.ok(stats.read.keptBytes <= 16 * MiB + 64 * KiB && stats.write.keptBytes <= 16 * MiB, JSON.stringify(stats));
  assert.equal(ctx.memory().totalBytes, stats.read.keptBytes + stats.write.keptBytes);
});

test("pressure gives the staging back, buffers out in a transfer when it came too; transfers go on", async () => {
  const { ctx } = await setUp();
  assert.ok(ctx.memory().totalBytes > 0, "staging is ready after setup");
  const ptr = await ctx.allocWebGPUChecked(8 * MiB, { usage });
  const bytes = Uint8Array.from({ length: 8 * MiB }, (_, i) => i % 251);
  ctx.upload(ptr, bytes); // its staging is out now, being mapped again
  const reading = ctx.readback(ptr); // and so is the read's
  const out = ctx.transferStats();
  assert.ok(out.read.inUse + out.write.inUse > 0);
  assert.ok((await ctx.trimMemory()) > 0);
  assert.deepEqual(new Uint8Array(await reading), bytes, "the read in flight still delivers");
  await ctx.flush();
  const s = ctx.transferStats();
  assert.equal(s.read.kept + s.write.kept + s.read.inUse + s.write.inUse, 0, "what was out is not kept again");
  assert.equal(ctx.memory().totalBytes, 8 * MiB, "the device holds the tensor's buffer, no staging");
  // Transfers after the trim make new staging.
  ctx.upload(ptr, bytes.reverse());
  assert.deepEqual(new Uint8Array(await ctx.readback(ptr)), bytes);
  ctx.freeWebGPU(ptr);
});

test("staging asked for before a ring was cleared is never made: pressure's trim stays until new demand", async () => {
  const device = asGPU<GPUDevice>(new FakeDevice([], { maxBufferSize: GiB }));
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  };
  for (const ring of [
    new ReadRing(device, (b) => b.destroy(), 64 * MiB),
    new WriteRing(device, (b) => b.destroy(), 64 * MiB),
  ]) {
    ring.prepareSoon(4 * MiB, 2); // a transfer that lacked staging asks for it, once the GPU work so far is done
    ring.clear(); // memory pressure comes first
    await settle();
    assert.equal(
      ring.stats().kept + ring.stats().inUse,
      0,
      `${ring.constructor.name}: ${JSON.stringify(ring.stats())}`,
    );
    ring.prepareSoon(4 * MiB, 2); // asked for after the clear: made
    await settle();
    assert.equal(ring.stats().kept, 2, `${ring.constructor.name}: ${JSON.stringify(ring.stats())}`);
    // Asked for again after another clear while the earlier ask is still pending: the later ask is not lost.
    ring.prepareSoon(8 * MiB, 1);
    ring.clear();
    ring.prepareSoon(8 * MiB, 1);
    await settle();
    assert.equal(ring.stats().kept, 1, `${ring.constructor.name}: ${JSON.stringify(ring.stats())}`);
    assert.equal(ring.stats().keptBytes, 8 * MiB);
  }
});

test("a ring cleared while buffers are out destroys them when they come back", async () => {
  const device = asGPU<GPUDevice>(new FakeDevice([], { maxBufferSize: GiB }));
  const destroyed: GPUBuffer[] = [];
  const destroy = (b: GPUBuffer): void => {
    destroyed.push(b);
    b.destroy();
  };
  const reads = new ReadRing(device, destroy, 64 * MiB);
  const r = reads.take(MiB);
  reads.clear();
  reads.give(r);
  assert.deepEqual(destroyed, [r]);
  assert.equal(reads.stats().kept, 0);
  const again = reads.take(MiB);
  assert.notEqual(again, r);
  reads.give(again);
  assert.equal(reads.stats().kept, 1, "after the clear, buffers are kept again");

  const writes = new WriteRing(device, destroy, 64 * MiB);
  const w = writes.take(MiB); // mapped at creation
  w.unmap();
  writes.rearm(w); // mapping again in the background
  writes.clear();
  await writes.settled();
  assert.deepEqual(destroyed, [r, w]);
  assert.equal(writes.stats().kept + writes.stats().inUse, 0);
});

test("a first upload no kept buffer takes whole goes in pieces of the one setup keeps; the rest alone is new", async () => {
  // Node on a GPU stages in one piece (minPieceBytes 256 MiB) and setup keeps one 16 MiB buffer: a first 20 MiB
  // upload takes it for 16 MiB and makes only a 4 MiB buffer (not a 32 MiB one); later uploads stage in one piece.
  const device = new FakeDevice([], { maxBufferSize: GiB });
  const ring = new WriteRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 288 * MiB);
  await ring.prepare(16 * MiB, 1);
  const inflight = new Inflight(asGPU<GPUDevice>(device), "fake");
  const plan = {
    ...DEFAULT_TRANSFER_PLAN.write,
    classes: [{ fromBytes: 8 * MiB, cold: "staging", warm: "staging" } as const],
    minPieceBytes: 256 * MiB,
  };
  const history = { warm: 0 };
  const n = 20 * MiB - 2; // not a multiple of 4: the last piece padded (to 4 MiB)
  const target = device.createBuffer({ size: 24 * MiB, usage });
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i += 4093) bytes[i] = (i * 7 + 1) & 0xff;
  bytes[n - 1] = 0x5a;
  const made = () => device.created.filter((b) => b.label === "webdlpack upload staging").map((b) => b.size);
  const path = writeRange(asGPU<GPUDevice>(device), ring, inflight, plan, history, asGPU<GPUBuffer>(target), 0, bytes);
  assert.equal(path, "staging");
  assert.deepEqual(made(), [16 * MiB, 4 * MiB], "the kept 16 MiB buffer, and a new one for the 4 MiB left");
  assert.deepEqual(target.data.subarray(0, n), bytes);
  assert.equal(target.data[n], 0, "padding");
  // Warm: one piece of the whole upload, as the plan says (its own 32 MiB buffer).
  await ring.settled();
  writeRange(asGPU<GPUDevice>(device), ring, inflight, plan, history, asGPU<GPUBuffer>(target), 0, bytes);
  assert.equal(made().at(-1), 32 * MiB);
  assert.deepEqual(target.data.subarray(0, n), bytes);
  // A first upload the kept buffer takes less than half of (40 MiB): the kept 16 MiB buffer takes the first part and
  // new staging of the rest's size (24 MiB) the rest, used once; the class's own 64 MiB buffer is made after.
  const ring3 = new WriteRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 288 * MiB);
  await ring3.prepare(16 * MiB, 1);
  const large = device.createBuffer({ size: 40 * MiB, usage });
  const forty = new Uint8Array(40 * MiB);
  for (let i = 0; i < forty.length; i += 4099) forty[i] = (i * 3 + 1) & 0xff;
  const before3 = made().length;
  const path3 = writeRange(
    asGPU<GPUDevice>(device),
    ring3,
    inflight,
    plan,
    { warm: 0 },
    asGPU<GPUBuffer>(large),
    0,
    forty,
  );
  assert.equal(path3, "staging");
  assert.deepEqual(made().slice(before3), [24 * MiB], "only the rest's staging is new");
  assert.deepEqual(large.data, forty);
  const once = device.created.at(-1)!;
  await device.queue.onSubmittedWorkDone();
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(once.destroyed, "used once: destroyed once its copy ran");
  assert.equal(ring3.owned(64 * MiB), 1, "the class's own staging, made after");
  // Where new staging measured dearer than writeBuffer (makeStaging false), the rest goes through writeBuffer.
  const ring2 = new WriteRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 288 * MiB);
  await ring2.prepare(16 * MiB, 1);
  const before = made().length;
  const mixed = writeRange(
    asGPU<GPUDevice>(device),
    ring2,
    inflight,
    { ...plan, makeStaging: false },
    { warm: 0 },
    asGPU<GPUBuffer>(target),
    0,
    bytes,
  );
  assert.equal(mixed, "mixed");
  assert.deepEqual(made().slice(before), [], "no new staging: the 4 MiB left went through writeBuffer");
  assert.deepEqual(target.data.subarray(0, n), bytes);
});

test("a first upload's rest: a budget refusing its once-used staging sends it through writeBuffer; other errors throw", async () => {
  const device = new FakeDevice([], { maxBufferSize: GiB });
  const inflight = new Inflight(asGPU<GPUDevice>(device), "fake");
  const plan = {
    ...DEFAULT_TRANSFER_PLAN.write,
    classes: [{ fromBytes: 8 * MiB, cold: "staging", warm: "staging" } as const],
    minPieceBytes: 256 * MiB,
    makeStaging: true,
  };
  const forty = new Uint8Array(40 * MiB);
  for (let i = 0; i < forty.length; i += 4099) forty[i] = (i * 5 + 3) & 0xff;
  // The once-used buffer for the rest (24 MiB, mapped at creation) is what the device refuses here.
  const real = device.createBuffer.bind(device);
  const refuseRestWith = (error: Error) => {
    device.createBuffer = ((d: GPUBufferDescriptor) => {
      if (d.size === 24 * MiB && d.mappedAtCreation === true) throw error;
      return real(d);
    }) as typeof device.createBuffer;
  };
  const upload = async () => {
    const ring = new WriteRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 288 * MiB);
    await ring.prepare(16 * MiB, 1);
    const large = device.createBuffer({ size: 40 * MiB, usage });
    const path = writeRange(
      asGPU<GPUDevice>(device),
      ring,
      inflight,
      plan,
      { warm: 0 },
      asGPU<GPUBuffer>(large),
      0,
      forty,
    );
    return { path, large };
  };
  refuseRestWith(new WebDLPackError("OUT_OF_MEMORY", "past the budget", { field: "size", value: 24 * MiB }));
  const refused = await upload();
  assert.equal(refused.path, "mixed", "the kept buffer's part staged, the rest through writeBuffer");
  assert.deepEqual(refused.large.data, forty);
  refuseRestWith(new TypeError("a bug, not the budget"));
  await assert.rejects(upload, (err: unknown) => {
    assert.ok(err instanceof WebDLPackError);
    assert.equal(err.code, "GPU_ERROR"); // the upload's typed failure, naming the cause: not hidden by a fallback
    assert.match(err.message, /a bug, not the budget/);
    return true;
  });
});
