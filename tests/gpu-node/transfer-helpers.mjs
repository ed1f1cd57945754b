// Shared by the GPU transfer tests on dawn.node (transfers*.test.mjs): the WebGPU instance, a device whose every
// buffer is recorded, and byte patterns to compare.
import assert from "node:assert/strict";
import { create, globals } from "webgpu";

Object.assign(globalThis, globals);
export const gpu = create([]);
export const MiB = 2 ** 20;

/** A new device with every buffer it creates recorded (to check that none stays mapped). */
export async function trackedDevice() {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, "a WebGPU adapter (is VK_DRIVER_FILES set? run through scripts/run-tests.sh gpu)");
  const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: 256 * MiB } });
  const created = [];
  const createBuffer = device.createBuffer.bind(device);
  device.createBuffer = (desc) => {
    const b = createBuffer(desc);
    created.push(b);
    return b;
  };
  return { device, created };
}

/** Bytes that differ per position and per seed. */
export function bytes(n, seed) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + seed * 13 + (i >> 8)) & 0xff;
  return out;
}

/** Throw unless `got` holds the bytes of `want`. */
export function sameBytes(got, want, what) {
  assert.equal(got.byteLength, want.byteLength, `${what}: length`);
  for (let i = 0; i < want.byteLength; i++)
    if (got[i] !== want[i]) assert.fail(`${what}: byte ${i} is ${got[i]}, expected ${want[i]}`);
}

/** A tracked device (see {@link trackedDevice}) set up as `ctx`'s device 0; returns it. */
export async function setUpTracked(ctx) {
  const { device } = await trackedDevice();
  await ctx.setup({ device });
  return device;
}
