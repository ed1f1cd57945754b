// A page's first small readback takes staging that setup made ready (a 64 KiB read buffer kept beside the large
// ones: js/src/context/transfers/calibrate.ts readyStaging), not a new MAP_READ buffer, and moves the right bytes.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create, globals } from "webgpu";
import { getContext } from "../../js/dist/index.js";

Object.assign(globalThis, globals);
const gpu = create([]); // kept: the instance must outlive its devices
const ctx = getContext();
let device;

before(async () => {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, "a WebGPU adapter (is VK_DRIVER_FILES set? run through scripts/run-tests.sh gpu)");
  device = await adapter.requestDevice();
  await ctx.setup({ device });
});

after(() => device.destroy());

test("setup keeps a 64 KiB read buffer beside the large ones", () => {
  const read = ctx.transferStats(0).read;
  assert.equal(read.inUse, 0);
  assert.ok(read.keptBytes >= 64 * 1024, JSON.stringify(read));
});

test("first readbacks of 1 KiB, 16 KiB and 64 KiB make no staging buffer", async () => {
  const created = ctx.transferStats(0).read.created;
  for (const n of [1024, 16 * 1024, 64 * 1024]) {
    const ptr = await ctx.allocWebGPUChecked(n);
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 7 + n) & 0xff);
    ctx.upload(ptr, bytes);
    const into = new Uint8Array(n);
    await ctx.readbackInto(ptr, into);
    assert.deepEqual(into, bytes, `${n} bytes`);
    assert.deepEqual(new Uint8Array(await ctx.readback(ptr)), bytes, `${n} bytes, a new array`);
    ctx.freeWebGPU(ptr);
  }
  assert.equal(ctx.transferStats(0).read.created, created, "no read staging made");
});
