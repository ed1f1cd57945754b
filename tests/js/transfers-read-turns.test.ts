/**
 * A large first readback through the kept read staging in turn (transfers/read-rotate.ts): the range copied on the
 * GPU into a snapshot, read out in chunks through the kept buffers, no new staging made for it; the staging of its
 * own pieces made once it is done, for the next readback of the size. Fake WebGPU (context-fakes.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebDLPackError } from "../../js/src/errors.js";
import { DEFAULT_TRANSFER_PLAN } from "../../js/src/context/transfers/device-transfers.js";
import { Inflight } from "../../js/src/context/transfers/inflight.js";
import { type ReadPlan, readRange } from "../../js/src/context/transfers/read.js";
import { ReadRing } from "../../js/src/context/transfers/staging.js";
import { asGPU, type FakeBuffer, FakeDevice, FakeEncoder } from "./context-fakes.js";

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const STORAGE = 0x80;
const SNAPSHOT = "webdlpack readback snapshot";

/** A copy out of a destroyed buffer raises a validation error into the innermost scope, as WebGPU does. */
class CheckingEncoder extends FakeEncoder {
  constructor(readonly device: FakeDevice) {
    super();
  }
  override copyBufferToBuffer(src: FakeBuffer, so: number, dst: FakeBuffer, doff: number, size: number): void {
    if (src.destroyed > 0) {
      const scope = this.device.scopes.findLast((s) => s.filter === "validation");
      if (scope !== undefined) scope.error ??= { message: "Destroyed buffer used in a submit." };
      return;
    }
    super.copyBufferToBuffer(src, so, dst, doff, size);
  }
}
class CheckingDevice extends FakeDevice {
  override createCommandEncoder(): FakeEncoder {
    return new CheckingEncoder(this);
  }
}

/** A device, its read ring with four 4 MiB buffers kept (as setup makes them ready), a source of `bytes`. */
async function rig(bytes: number, turnBytes = 4 * MiB) {
  const device = new CheckingDevice([], { maxBufferSize: GiB });
  const ring = new ReadRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 288 * MiB);
  await ring.prepare(4 * MiB, 4);
  const inflight = new Inflight(asGPU<GPUDevice>(device), "fake");
  const plan: ReadPlan = { ...DEFAULT_TRANSFER_PLAN.read, turnBytes };
  const source = device.createBuffer({ size: bytes, usage: STORAGE | COPY_SRC | COPY_DST });
  for (let i = 0; i < bytes; i += 4093) source.data[i] = (i * 7 + 3) & 0xff;
  source.data[bytes - 1] = 0x5a;
  const read = async (offset: number, length: number): Promise<Uint8Array> => {
    const out = new Uint8Array(length);
    await readRange(asGPU<GPUDevice>(device), ring, inflight, plan, asGPU<GPUBuffer>(source), offset, length, (b, at) =>
      out.set(b, at),
    );
    return out;
  };
  const snapshots = () => device.created.filter((b) => b.label === SNAPSHOT);
  return { device, ring, inflight, source, read, snapshots };
}

/** Until `done()` holds (checked every 5 ms): staging made in a later task is made, mapped once and kept. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

test("a first large readback goes through the kept staging in turn; the next through its own pieces", async () => {
  const { ring, source, read, snapshots } = await rig(40 * MiB);
  // 40 MiB less 6 bytes from byte 6: a span of 10 chunks of 4 MiB (the last 4 MiB short of 8 bytes), uneven ends.
  const got = await read(6, 40 * MiB - 6);
  assert.deepEqual(got, source.data.subarray(6));
  assert.equal(ring.stats().created, 4, "no staging made for it: the four kept buffers in turn");
  assert.equal(snapshots().length, 1);
  assert.equal(snapshots()[0]!.destroyed, 1, "the snapshot is destroyed");
  assert.equal(ring.stats().kept, 4, "the kept buffers are back");
  // Its own staging is made once it is done: 8 pieces of 5 MiB (class 8 MiB), mapped once, then kept (on a loaded
  // machine that took over 20 ms: waited for, not timed).
  await until(() => ring.stats().kept === 12);
  assert.equal(ring.stats().created, 12);
  const again = await read(0, 40 * MiB);
  assert.deepEqual(again, source.data);
  assert.equal(snapshots().length, 1, "the next readback of the size takes its pieces, no snapshot");
  assert.equal(ring.stats().created, 12);
});

test("no turns where setup measured none (turnBytes 0), nor up to singleBytes", async () => {
  const off = await rig(40 * MiB, 0);
  assert.deepEqual(await off.read(0, 40 * MiB), off.source.data);
  assert.equal(off.snapshots().length, 0);
  assert.equal(off.ring.stats().created, 12, "new pieces, as before");
  const small = await rig(4 * MiB);
  assert.deepEqual(await small.read(0, 4 * MiB), small.source.data);
  assert.equal(small.snapshots().length, 0);
});

test("a refused copy (a destroyed source) rejects with a typed error and hands over no byte", async () => {
  const { source, ring, inflight, device, snapshots } = await rig(40 * MiB);
  source.destroy();
  let bytes = 0;
  const plan: ReadPlan = { ...DEFAULT_TRANSFER_PLAN.read, turnBytes: 4 * MiB };
  await assert.rejects(
    readRange(asGPU<GPUDevice>(device), ring, inflight, plan, asGPU<GPUBuffer>(source), 0, 40 * MiB, (b) => {
      bytes += b.byteLength;
    }),
    (err: unknown) => err instanceof WebDLPackError && ["INVALID_ARGUMENT", "BAD_DEVICE"].includes(err.code),
  );
  assert.equal(bytes, 0);
  assert.equal(snapshots()[0]!.destroyed, 1);
  assert.equal(inflight.pending, 0);
  assert.equal(ring.stats().inUse, 0, "the staging it took is not left out");
  assert.equal(ring.stats().kept, 4, "the ready staging is kept: its buffers were sound");
  assert.equal(ring.stats().created, 4);
});

test("a snapshot the GPU has no memory for: OUT_OF_MEMORY (not a refused copy), no byte, the ready staging kept", async () => {
  const { device, ring, inflight, read, snapshots } = await rig(40 * MiB);
  device.failNext = { filter: "out-of-memory", message: "Out of memory." };
  await assert.rejects(
    read(0, 40 * MiB),
    (err: unknown) =>
      err instanceof WebDLPackError &&
      err.code === "OUT_OF_MEMORY" &&
      err.field === "byteLength" &&
      err.value === 40 * MiB,
  );
  assert.equal(snapshots().length, 1);
  assert.equal(snapshots()[0]!.destroyed, 1);
  assert.equal(device.scopes.length, 0, "every scope pushed was popped");
  assert.equal(inflight.pending, 0);
  assert.deepEqual([ring.stats().inUse, ring.stats().kept, ring.stats().created], [0, 4, 4]);
});

test("new staging pieces the GPU has no memory for: OUT_OF_MEMORY, no byte, nothing left out", async () => {
  const { device, ring, inflight, read } = await rig(40 * MiB, 0);
  device.failNext = { filter: "out-of-memory", message: "Out of memory." };
  await assert.rejects(
    read(0, 40 * MiB),
    (err: unknown) => err instanceof WebDLPackError && err.code === "OUT_OF_MEMORY",
  );
  assert.equal(device.scopes.length, 0, "every scope pushed was popped");
  assert.equal(inflight.pending, 0);
  assert.equal(ring.stats().inUse, 0);
  // The ring still reads: the next readback of the size gets its bytes.
  assert.equal((await read(0, 40 * MiB)).byteLength, 40 * MiB);
});

test("the device lost during the turns: DEVICE_LOST, nothing pending, the staging destroyed", async () => {
  const { ring, inflight, device, read } = await rig(64 * MiB);
  const reading = read(0, 64 * MiB);
  device.destroy();
  await device.lost;
  inflight.lose("destroyed");
  ring.lose();
  await assert.rejects(reading, (err: unknown) => err instanceof WebDLPackError && err.code === "DEVICE_LOST");
  assert.equal(inflight.pending, 0);
  assert.equal(ring.stats().inUse + ring.stats().kept, 0);
});
