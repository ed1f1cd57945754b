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

/**
 * The GPU's answers — buffer maps and onSubmittedWorkDone — given out by the test a step at a time: no timer stands
 * between the code and what the test checks, so events come in the same order on an idle and on a loaded machine.
 */
class GpuSteps {
  readonly #waiting: (() => void)[] = [];
  /** Maps asked for and not answered, the most there were at once, and all asked for. */
  maps = 0;
  maxMaps = 0;
  mapCalls = 0;
  /** onSubmittedWorkDone calls not answered. */
  workDone = 0;

  /** A map's answer, held until {@link until} gives it. */
  map = (): Promise<void> => {
    this.maps += 1;
    this.mapCalls += 1;
    this.maxMaps = Math.max(this.maxMaps, this.maps);
    return new Promise((resolve) =>
      this.#waiting.push(() => {
        this.maps -= 1;
        resolve();
      }),
    );
  };

  /** onSubmittedWorkDone's answer, held until {@link until} gives it. */
  done = (): Promise<void> => {
    this.workDone += 1;
    return new Promise((resolve) =>
      this.#waiting.push(() => {
        this.workDone -= 1;
        resolve();
      }),
    );
  };

  /**
   * Until `done()` holds: let the code run until it waits (the promise reactions and the tasks it queued), check,
   * then answer everything it waits for. At most `limit` rounds: a regression fails here rather than hanging.
   */
  async until(done: () => boolean, limit = 100): Promise<void> {
    for (let round = 0; ; round++) {
      await new Promise((r) => setImmediate(r));
      if (done()) return;
      assert.ok(round < limit, `not done after ${limit} GPU steps`);
      for (const answer of this.#waiting.splice(0)) answer();
    }
  }

  /** `promise`'s value, stepping the GPU until it settles. */
  async settle<T>(promise: Promise<T>): Promise<T> {
    let settled = false;
    const flagged = promise.finally(() => {
      settled = true;
    });
    flagged.catch(() => undefined);
    await this.until(() => settled);
    return flagged;
  }
}

/** A checking device whose maps and onSubmittedWorkDone wait for `steps`. */
class SteppedDevice extends CheckingDevice {
  constructor(readonly steps: GpuSteps) {
    super([], { maxBufferSize: GiB });
    this.queue.onSubmittedWorkDone = () => {
      this.queue.workDoneCalls += 1;
      return steps.done();
    };
  }
  override createBuffer(desc: { size: number; usage: number; label?: string; mappedAtCreation?: boolean }): FakeBuffer {
    const buffer = super.createBuffer(desc);
    buffer.mapAnswer = this.steps.map;
    return buffer;
  }
}

/**
 * A device, its read ring with four 4 MiB buffers kept (as setup makes them ready), a source of `bytes`. With
 * `steps`, the GPU answers when the test steps it.
 */
async function rig(bytes: number, turnBytes = 4 * MiB, steps?: GpuSteps) {
  const device = steps === undefined ? new CheckingDevice([], { maxBufferSize: GiB }) : new SteppedDevice(steps);
  const ring = new ReadRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 288 * MiB);
  const prepared = ring.prepare(4 * MiB, 4);
  await (steps === undefined ? prepared : steps.settle(prepared));
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

test("a first large readback goes through the kept staging in turn; the next through its own pieces", async () => {
  const steps = new GpuSteps();
  const { ring, source, read, snapshots } = await rig(40 * MiB, 4 * MiB, steps);
  const maps = steps.mapCalls;
  steps.maxMaps = 0;
  // 40 MiB less 6 bytes from byte 6: a span of 10 chunks of 4 MiB (the last 4 MiB short of 8 bytes), uneven ends.
  const got = await steps.settle(read(6, 40 * MiB - 6));
  assert.deepEqual(got, source.data.subarray(6));
  assert.equal(ring.stats().created, 4, "no staging made for it: the four kept buffers in turn");
  assert.equal(steps.mapCalls - maps, 10, "one map per chunk");
  assert.equal(steps.maxMaps, 4, "in turn: never more chunks in flight than kept buffers");
  assert.equal(snapshots().length, 1);
  assert.equal(snapshots()[0]!.destroyed, 1, "the snapshot is destroyed");
  assert.equal(ring.stats().kept, 4, "the kept buffers are back");
  // Its own staging is made once the GPU work queued so far is done, in a task of its own: not before.
  await new Promise((r) => setImmediate(r));
  assert.equal(steps.workDone, 1, "it waits for the GPU's work done");
  assert.equal(ring.stats().created, 4, "nothing made before the GPU answered");
  // Then 8 pieces of 5 MiB (class 8 MiB), mapped once, then kept.
  await steps.until(() => ring.stats().kept === 12);
  assert.equal(ring.stats().created, 12);
  assert.equal(ring.stats().inUse, 0);
  steps.maxMaps = 0;
  const again = await steps.settle(read(0, 40 * MiB));
  assert.deepEqual(again, source.data);
  assert.equal(snapshots().length, 1, "the next readback of the size takes its pieces, no snapshot");
  assert.equal(ring.stats().created, 12);
  assert.equal(steps.maxMaps, 8, "its pieces all mapped at once");
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
