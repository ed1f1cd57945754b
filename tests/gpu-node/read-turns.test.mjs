// A large first readback through the kept read staging in turn (transfers/read-rotate.ts) on a real WebGPU
// implementation (dawn.node; SwiftShader here, the H100 on the device machine): the bytes, ordering against work
// submitted after the call, no staging made for it, its own staging made after (the snapshot: transfers-read-turns.test.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, globals } from "webgpu";
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
