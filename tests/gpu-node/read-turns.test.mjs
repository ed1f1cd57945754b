// A large first readback through the kept read staging in turn (transfers/read-rotate.ts) on a real WebGPU
// implementation (dawn.node; SwiftShader here, the H100 on the device machine): the bytes, ordering against work
// submitted after the call, no staging made for it, its own staging made after (the snapshot: transfers-read-turns.test.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, globals } from "webgpu";
import { WebDLPackError } from "../../js/dist/index.js";
import { DEFAULT_TRANSFER_PLAN } from "../../js/dist/context/transfers/device-transfers.js";
import { Inflight } from "../../js/dist/context/transfers/inflight.js";
import { readRange } from "../../js/dist/context/transfers/read.js";
import { ReadRing } from "../../js/dist/context/transfers/staging.js";

Object.assign(globalThis, globals);
const gpu = create([]);
const MiB = 2 ** 20;
const U = { COPY_SRC: 4, COPY_DST: 8, STORAGE: 128 };

test("a 40 MiB first readback in turns through four kept 4 MiB buffers: its bytes, none submitted later", async () => {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, "a WebGPU adapter (is VK_DRIVER_FILES set? run through scripts/run-tests.sh gpu)");
  const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: 256 * MiB } });
  try {
    const ring = new ReadRing(device, (b) => b.destroy(), 288 * MiB);
    await ring.prepare(4 * MiB, 4);
    const inflight = new Inflight(device, "device 0");
    const plan = { ...DEFAULT_TRANSFER_PLAN.read, turnBytes: 4 * MiB };
    const n = 40 * MiB;
    const source = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    const want = new Uint8Array(n);
    for (let i = 0; i < n; i++) want[i] = (i * 7 + (i >> 12)) & 0xff;
    device.queue.writeBuffer(source, 0, want);
    const got = new Uint8Array(n - 10);
    const reading = readRange(device, ring, inflight, plan, source, 6, n - 10, (b, at) => got.set(b, at));
    device.queue.writeBuffer(source, 0, new Uint8Array(n)); // after the call: must not be seen
    await reading;
    for (let i = 0; i < got.length; i += 1) if (got[i] !== want[i + 6]) assert.fail(`byte ${i + 6}`);
    assert.equal(ring.stats().created, 4, "no staging made for it");
    assert.equal(ring.stats().inUse, 0);
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(ring.stats().created > 4, "the range's own pieces are made after it, for the next readback");
    source.destroy();
    ring.drain();
  } finally {
    device.destroy();
  }
});

test("a first readback in turns whose copy WebGPU refuses: a typed error, no byte, the four kept buffers kept", async () => {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, "a WebGPU adapter (is VK_DRIVER_FILES set? run through scripts/run-tests.sh gpu)");
  const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: 256 * MiB } });
  let uncaptured = 0;
  device.addEventListener("uncapturederror", () => {
    uncaptured += 1;
  });
  try {
    const ring = new ReadRing(device, (b) => b.destroy(), 288 * MiB);
    await ring.prepare(4 * MiB, 4);
    const inflight = new Inflight(device, "device 0");
    const plan = { ...DEFAULT_TRANSFER_PLAN.read, turnBytes: 4 * MiB };
    const source = device.createBuffer({ size: 40 * MiB, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    source.destroy();
    let bytes = 0;
    await assert.rejects(
      readRange(device, ring, inflight, plan, source, 0, 40 * MiB, (b) => {
        bytes += b.byteLength;
      }),
      (err) => err instanceof WebDLPackError && ["DISPOSED", "BAD_DEVICE"].includes(err.code),
    );
    assert.equal(bytes, 0);
    assert.equal(inflight.pending, 0);
    assert.deepEqual([ring.stats().inUse, ring.stats().kept, ring.stats().created], [0, 4, 4]);
    // The kept buffers still read: a good source of the same size after it.
    const good = device.createBuffer({ size: 40 * MiB, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    device.queue.writeBuffer(good, 40 * MiB - 4, new Uint8Array([1, 2, 3, 4]));
    const got = new Uint8Array(40 * MiB);
    await readRange(device, ring, inflight, plan, good, 0, 40 * MiB, (b, at) => got.set(b, at));
    assert.deepEqual([...got.subarray(40 * MiB - 4)], [1, 2, 3, 4]);
    await device.queue.onSubmittedWorkDone();
    assert.equal(uncaptured, 0, "no error escaped to the page");
    good.destroy();
    ring.drain();
  } finally {
    device.destroy();
  }
});
