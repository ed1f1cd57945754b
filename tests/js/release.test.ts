/**
 * The one release mechanism (js/src/release.ts, docs/ownership.md): a
 * release acts once whichever path calls it first, later calls return false;
 * a Holders count runs its producer's release once, after its last holder.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { GPUUsage } from "../../js/src/context/ground/create.js";
import { writeManagedTensorVersioned, readManagedTensorVersioned } from "../../js/src/dlpack/index.js";
import { once, Once } from "../../js/src/release.js";
import { Tensor } from "../../js/src/tensor/index.js";
import { Holders } from "../../js/src/tensor/ownership.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { asGPU, FakeBuffer, FakeGPU } from "./context-fakes.js";
import { isCode } from "./helpers.js";

test("Once runs its function on the first release only, and remembers the path", () => {
  let runs = 0;
  const r = new Once<"dispose" | "scope">(() => runs++);
  assert.equal(r.released, false);
  assert.equal(r.releasedBy, null);
  assert.equal(r.release("scope"), true);
  assert.equal(r.release(), false);
  assert.equal(runs, 1);
  assert.equal(r.releasedBy, "scope");
  assert.equal(r.cancel("dispose"), false);
});

test("Once.cancel counts as released without running; a throwing release still counts as released", () => {
  let runs = 0;
  const cancelled = new Once(() => runs++);
  assert.equal(cancelled.cancel("device-lost"), true);
  assert.equal(cancelled.release(), false);
  assert.equal(runs, 0);
  const throwing = new Once(() => {
    throw new Error("deleter failed");
  });
  assert.throws(() => throwing.release(), /deleter failed/);
  assert.equal(throwing.released, true);
  assert.equal(throwing.release(), false);
});

test("once(fn) is a Once as a plain function", () => {
  let runs = 0;
  const release = once(() => runs++);
  release();
  release();
  assert.equal(runs, 1);
});

test("Holders: each holder's release counts once; the producer's release runs after the last", () => {
  let finalized = 0;
  const h = new Holders(() => finalized++, 0);
  const a = h.hold();
  const b = h.hold();
  assert.equal(h.count, 2);
  a();
  a(); // a second call of one holder's release does not release another holder
  assert.equal(h.count, 1);
  assert.equal(finalized, 0);
  b();
  assert.equal(finalized, 1);
  assert.equal(h.released, true);
  assert.equal(h.release(), false);
  assert.equal(finalized, 1);
});

test("a GPU pointer gives its buffer back once: at device loss, and its later free only frees the pointer", async () => {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU();
  await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  const foreign = new FakeBuffer(64, GPUUsage.STORAGE, "framework-out");
  let released = 0;
  const ptr = ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign), { onRelease: () => released++ });
  const error = console.error;
  console.error = () => {};
  try {
    gpu.adapter!.devices[0]!.destroy();
    await new Promise((r) => setTimeout(r, 0));
  } finally {
    console.error = error;
  }
  assert.equal(released, 1, "device loss gave the buffer back");
  ctx.freeWebGPU(ptr);
  assert.equal(released, 1, "free after the loss does not give it back again");
  assert.throws(() => ctx.freeWebGPU(ptr), isCode("DOUBLE_FREE"));
  assert.equal(released, 1);
});

test("a struct export is released once by its deleter; a second deleter call and a reused record release nothing", () => {
  const host = createTestHost();
  const data = host.malloc(16);
  let deleted = 0;
  const producer = host.addFunction((self) => {
    deleted++;
    host.free(self);
  });
  const cpu = { deviceType: 1, deviceId: 0 };
  const t = Tensor.fromManaged(
    host,
    writeManagedTensorVersioned(host, { data, device: cpu, dtype: "int32", shape: [4], deleter: producer }),
  );
  const first = t.toManaged(host);
  const deleter = readManagedTensorVersioned(host, first).deleter;
  t.dispose();
  assert.equal(deleted, 0, "the export still holds the producer's bytes");
  host.callVoidPointer(deleter, first);
  assert.equal(deleted, 1, "the export's release was the last holder's");
  host.callVoidPointer(deleter, first); // a second deleter call: no live export at that address
  assert.equal(deleted, 1);
  const other = Tensor.fromManaged(
    host,
    writeManagedTensorVersioned(host, { data, device: cpu, dtype: "int32", shape: [4], deleter: producer }),
  );
  const again = other.toManaged(host); // reuses the released record (the address may differ)
  if (again !== first) host.callVoidPointer(deleter, first); // a stale address releases nothing
  other.dispose();
  assert.equal(deleted, 1);
  host.callVoidPointer(deleter, again);
  assert.equal(deleted, 2);
});
