// A readback whose copy WebGPU refuses must reject with a typed error, never return the staging buffer's stale bytes
// — whether the copy ran inside a validation error scope (a buffer whose origin JS can not know) or without one
// (a buffer the device's meter saw made and not destroyed: transfers/read.ts validatedHere). Dawn in Node on
// whatever Vulkan driver is found (SwiftShader here, through scripts/run-tests.sh gpu).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create, globals } from "webgpu";
import { getContext, WebDLPackError } from "../../js/dist/index.js";
import { transfersFor } from "../../js/dist/context/transfers/registry.js";

Object.assign(globalThis, globals);
const gpu = create([]);
const { STORAGE, COPY_SRC, COPY_DST } = GPUBufferUsage;

async function newDevice() {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, "a WebGPU adapter (is VK_DRIVER_FILES set? run through scripts/run-tests.sh gpu)");
  return adapter.requestDevice();
}

const ctx = getContext();
let device;
let other;

before(async () => {
  device = await newDevice();
  other = await newDevice();
  await ctx.setup({ device });
});

after(() => {
  device.destroy();
  other.destroy();
});

/** Runs `run` counting the validation scopes pushed on `device` meanwhile: {pushed, error} (error: its rejection). */
async function scopesDuring(run) {
  const push = device.pushErrorScope;
  let pushed = 0;
  device.pushErrorScope = function (filter) {
    pushed += 1;
    return push.call(this, filter);
  };
  try {
    await run();
    return { pushed, error: undefined };
  } catch (error) {
    return { pushed, error };
  } finally {
    delete device.pushErrorScope;
  }
}

/** A buffer holding `value` in each of its `n` bytes, made by `make` and filled on `on`'s queue. */
async function filled(on, n, value, make = (desc) => on.createBuffer(desc)) {
  const buffer = make({ size: n, usage: STORAGE | COPY_SRC | COPY_DST });
  on.queue.writeBuffer(buffer, 0, new Uint8Array(n).fill(value));
  await on.queue.onSubmittedWorkDone();
  return buffer;
}

/** Fill the read ring's 1 KiB staging with `value` (what a refused copy would leave there to be returned). */
async function leaveInStaging(value) {
  const ptr = await ctx.allocWebGPUChecked(1024);
  ctx.upload(ptr, new Uint8Array(1024).fill(value));
  await ctx.readback(ptr);
  ctx.freeWebGPU(ptr);
}

/** Assert `error` is a WebDLPackError with `code`, naming the buffer. */
function typed(error, code) {
  assert.ok(error instanceof WebDLPackError, `expected a WebDLPackError ${code}, got ${error}`);
  assert.equal(error.code, code);
  assert.equal(error.field, "buffer");
}

describe("refused copies are refused, with or without a validation scope", () => {
  test("a live buffer webdlpack allocated is read without a scope, and right", async () => {
    const ptr = await ctx.allocWebGPUChecked(1024);
    ctx.upload(ptr, new Uint8Array(1024).fill(3));
    const out = new Uint8Array(1024);
    assert.deepEqual(await scopesDuring(() => ctx.readbackInto(ptr, out)), { pushed: 0, error: undefined });
    assert.deepEqual([...new Set(out)], [3]);
    ctx.freeWebGPU(ptr);
  });

  test("a buffer webdlpack allocated, destroyed behind its back: DISPOSED (the scope path), not stale bytes", async () => {
    await leaveInStaging(9);
    // A size of its own, so the destroyed buffer is not handed out again by the bucket cache to another test.
    const ptr = await ctx.allocWebGPUChecked(1000);
    ctx.upload(ptr, new Uint8Array(1000).fill(4));
    ctx.gpuPointerToBuffer(ptr).destroy();
    const { pushed, error } = await scopesDuring(() => ctx.readbackInto(ptr, new Uint8Array(1000)));
    typed(error, "DISPOSED");
    assert.ok(pushed >= 1, "the destroy was seen: the copy ran in a scope (and the refusal was probed)");
    await assert.rejects(ctx.readback(ptr), (e) => e.code === "DISPOSED" && /is destroyed/.test(e.message));
    assert.equal(ctx.transferStats(0).read.inUse, 0, "the staging buffer came back");
  });

  test("the page's buffer on the device (counted): read without a scope; destroyed: DISPOSED", async () => {
    await leaveInStaging(9);
    const buffer = await filled(device, 1024, 5);
    const out = new Uint8Array(1024);
    const read = () => transfersFor(device).read(buffer, 0, 1024, (bytes, at) => out.set(bytes, at));
    assert.deepEqual(await scopesDuring(read), { pushed: 0, error: undefined });
    assert.deepEqual([...new Set(out)], [5]);
    buffer.destroy();
    const { pushed, error } = await scopesDuring(read);
    typed(error, "DISPOSED");
    assert.ok(pushed >= 1, "the copy ran in a scope (and the refusal was probed)");
  });

  test("a buffer JS knows nothing of (not counted): copied in a scope; destroyed: DISPOSED", async () => {
    await leaveInStaging(9);
    // The device's own createBuffer, past the meter's: no fact about this buffer is known in JS.
    const uncounted = (desc) => GPUDevice.prototype.createBuffer.call(device, desc);
    const buffer = await filled(device, 1024, 6, uncounted);
    const out = new Uint8Array(1024);
    const read = () => transfersFor(device).read(buffer, 0, 1024, (bytes, at) => out.set(bytes, at));
    assert.deepEqual(await scopesDuring(read), { pushed: 1, error: undefined });
    assert.deepEqual([...new Set(out)], [6]);
    buffer.destroy();
    typed((await scopesDuring(read)).error, "DISPOSED");
    assert.deepEqual([...new Set(out)], [6], "nothing was written");
  });

  test("another GPUDevice's buffer: copied in a scope, BAD_DEVICE naming both devices", async () => {
    await leaveInStaging(9);
    const foreign = await filled(other, 1024, 8);
    const out = new Uint8Array(1024);
    const { pushed, error } = await scopesDuring(() =>
      transfersFor(device).read(foreign, 0, 1024, (bytes, at) => out.set(bytes, at)),
    );
    typed(error, "BAD_DEVICE");
    assert.match(error.message, /another GPUDevice/);
    assert.ok(pushed >= 1, "the copy ran in a scope (and the refusal was probed)");
    assert.deepEqual([...new Set(out)], [0], "nothing was written");
    foreign.destroy();
  });
});
