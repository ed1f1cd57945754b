/**
 * Read-only pointers (context/pointers/read-only.ts), against fake WebGPU: webdlpack's writes through a pointer
 * lent read-only are refused with BAD_FLAGS naming the pointer and the flag, while the pointer its owner holds keeps
 * its writes; a READ_ONLY WebGPU tensor's DLPack export names such a pointer, freed by the export's deleter.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { WebDLPackError } from "../../js/src/errors.js";
import { getContext } from "../../js/src/context/index.js";
import { formatPointer } from "../../js/src/context/pointers/pointer-format.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { Tensor, setGPUPointerResolver } from "../../js/src/tensor/index.js";
import { asGPU, FakeBuffer, FakeGPU } from "./context-fakes.js";
import { expectError } from "./helpers.js";

const FOUR = { byteLength: 16 };
const floats = (bytes: ArrayBuffer) => [...new Float32Array(bytes)];

/** The page context on a fake device (the default resolver of webgpu tensors). */
async function ready() {
  setGPUPointerResolver(null);
  const ctx = getContext();
  await ctx.setup({ gpu: asGPU<GPU>(new FakeGPU()) });
  return ctx;
}

/** The refusal of every webdlpack write through `ptr`: BAD_FLAGS, naming the pointer, the flag and a copy. */
function assertWritesRefused(ctx: Awaited<ReturnType<typeof ready>>, ptr: number, other: number): void {
  const refusals = [
    () => ctx.upload(ptr, new Float32Array([9, 9, 9, 9])),
    () => ctx.copyBuffer(other, ptr, FOUR),
    () => ctx.clearBuffer(ptr),
  ];
  for (const [i, write] of refusals.entries()) {
    const err = expectError(write, "BAD_FLAGS", "tensor.flags.readOnly");
    assert.equal(err.value, formatPointer(ptr));
    assert.match(err.message, new RegExp(`^\\[BAD_FLAGS\\] ${["upload", "copyBuffer", "clearBuffer"][i]} refused`));
    assert.match(err.message, /lent read-only.*copy the tensor first/);
  }
}

test("the owner's pointer writes; a second, read-only pointer to the same buffer reads and is refused every write", async () => {
  const ctx = await ready();
  const owner = await ctx.allocWebGPUChecked(16);
  ctx.upload(owner, new Float32Array([1, 2, 3, 4]));
  const buffer = ctx.gpuPointerToBuffer(owner);
  const lent = ctx.registerGPUBuffer(buffer, { readOnly: true });
  assert.notEqual(lent, owner);
  assert.equal(ctx.gpuPointerToBuffer(lent), buffer);
  assert.deepEqual([ctx.gpuPointerInfo(owner).readOnly, ctx.gpuPointerInfo(lent).readOnly], [false, true]);
  assert.equal(ctx.gpuPointerInfo(lent).owned, false);
  const other = await ctx.allocWebGPUChecked(16);
  assertWritesRefused(ctx, lent, other);
  assert.deepEqual(floats(await ctx.readback(lent, FOUR)), [1, 2, 3, 4], "nothing was written");
  // Reads and copies out of it work; the owner writes, and the lent pointer sees it.
  ctx.copyBuffer(lent, other, FOUR);
  assert.deepEqual(floats(await ctx.readback(other, FOUR)), [1, 2, 3, 4]);
  ctx.upload(owner, new Float32Array([5, 6, 7, 8]));
  assert.deepEqual(floats(await ctx.readback(lent, FOUR)), [5, 6, 7, 8]);
  // The buffer is still the owner's: registering it again (not read-only) names the owner's pointer.
  expectError(() => ctx.registerGPUBuffer(buffer), "INVALID_ARGUMENT", "buffer");
  expectError(
    () => ctx.registerGPUBuffer(buffer, { readOnly: true, owned: true }),
    "INVALID_ARGUMENT",
    "options.owned",
  );
  expectError(() => ctx.registerGPUBuffer(buffer, { readOnly: true, deviceId: 3 }), "BAD_DEVICE", "options.deviceId");
  // Freeing the read-only pointer forgets it only: the owner's pointer and buffer live on.
  ctx.freeWebGPU(lent);
  assert.equal((buffer as unknown as FakeBuffer).destroyed, 0);
  expectError(() => ctx.upload(lent, new Float32Array(4)), "STALE_POINTER");
  ctx.upload(owner, new Float32Array([0, 0, 0, 1]));
  assert.deepEqual(floats(await ctx.readback(owner, FOUR)), [0, 0, 0, 1]);
  expectError(() => ctx.registerGPUBuffer(buffer), "INVALID_ARGUMENT", "buffer");
  ctx.freeWebGPU(owner);
  ctx.freeWebGPU(other);
});

test("a buffer registered read-only (nothing holds it writable): every write refused; an option typo is refused", async () => {
  const ctx = await ready();
  const source = await ctx.allocWebGPUChecked(16);
  const foreign = new FakeBuffer(16, 0x80 | 0x4 | 0x8, "a framework's output");
  const ptr = ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign), { readOnly: true, owner: "framework" });
  assert.equal(ctx.gpuPointerInfo(ptr).readOnly, true);
  assertWritesRefused(ctx, ptr, source);
  expectError(
    () => ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign), { readOnly: "yes" as unknown as boolean }),
    "INVALID_ARGUMENT",
    "options.readOnly",
  );
  ctx.freeWebGPU(ptr);
  ctx.freeWebGPU(source);
});

test("a READ_ONLY WebGPU tensor's export names a read-only pointer, freed by its deleter; a writable one its own", async () => {
  const ctx = await ready();
  const ptr = await ctx.allocWebGPUChecked(16);
  ctx.upload(ptr, new Float32Array([1, 2, 3, 4]));
  const host = createTestHost();
  const ro = Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4], readOnly: true });
  assert.equal(ro.data, ptr, "the JS tensor is its maker's view: its own pointer");
  const pointersBefore = ctx.stats().livePointers;
  // The consumer (here JS importing the struct; Python and C read the same struct) gets a read-only pointer.
  const imported = Tensor.fromManaged(host, ro.toManaged(host));
  assert.notEqual(imported.data, ptr);
  assert.equal(imported.flags.readOnly, true);
  assert.equal(imported.gpuBuffer, ro.gpuBuffer, "the very same buffer");
  assert.equal(ctx.stats().livePointers, pointersBefore + 1);
  assert.throws(
    () => ctx.upload(imported.data, new Float32Array(4)),
    (e: unknown) => {
      return e instanceof WebDLPackError && e.code === "BAD_FLAGS" && e.value === formatPointer(imported.data);
    },
  );
  assert.deepEqual(floats(await ctx.readback(imported.data, FOUR)), [1, 2, 3, 4]);
  // The maker still writes through its pointer; the consumer reads what it wrote.
  ctx.upload(ptr, new Float32Array([4, 3, 2, 1]));
  assert.deepEqual(floats(await ctx.readback(imported.data, FOUR)), [4, 3, 2, 1]);
  // Re-exported by the consumer: its pointer is read-only already, no other is made.
  const again = Tensor.fromManaged(host, imported.toManaged(host));
  assert.equal(again.data, imported.data);
  assert.equal(ctx.stats().livePointers, pointersBefore + 1);
  again.dispose();
  const lent = imported.data;
  imported.dispose(); // the deleter: the read-only pointer goes
  assert.equal(ctx.stats().livePointers, pointersBefore);
  expectError(() => ctx.gpuPointerInfo(lent), "STALE_POINTER");
  // A writable tensor's export names its own pointer, as before.
  const rw = Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4] });
  const rwImported = Tensor.fromManaged(host, rw.toManaged(host));
  assert.equal(rwImported.data, ptr);
  rwImported.dispose();
  ctx.freeWebGPU(ptr);
});
