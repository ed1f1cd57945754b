/** tensor.ts's ownership rules of fromManaged / toManaged: deleters exactly once, copies flagged, nothing leaked. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DLPackFlag,
  DeviceType,
  LAYOUT,
  readManagedTensor,
  readManagedTensorVersioned,
} from "../../js/src/dlpack/index.js";
import { Tensor, liveExportCount, trimExportBlocks } from "../../js/src/tensor/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError, produce } from "./helpers.js";

const CPU = { deviceType: DeviceType.kDLCPU, deviceId: 0 };

test("fromManaged + dispose: deleter exactly once; use after dispose is DISPOSED", () => {
  const host = createTestHost();
  const prod = produce(host, { device: CPU, dtype: "uint8", shape: [2, 4] }, 8);
  const t = Tensor.fromManaged(host, prod.address);
  assert.equal(t.storage, "wasm");
  assert.equal(t.data, prod.data);
  assert.deepEqual([...(t.view as Uint8Array)], [3, 10, 17, 24, 31, 38, 45, 52]);
  assert.equal(prod.calls(), 0);
  t.dispose();
  assert.equal(prod.calls(), 1);
  t.dispose();
  t[Symbol.dispose]();
  assert.equal(prod.calls(), 1, "double dispose is a no-op");
  assert.equal(t.disposed, true);
  for (const use of [
    () => t.view,
    () => t.shape,
    () => t.dtype,
    () => t.toArray(),
    () => t.toManaged(host),
    () => t.nbytes,
  ]) {
    expectError(use, "DISPOSED", "tensor");
  }
  assert.equal(host.liveAllocations, 0, "producer's deleter freed everything");
});

test("fromManaged with `using`-style Symbol.dispose, legacy structs and flags", () => {
  const host = createTestHost();
  const prod = produce(
    host,
    { device: CPU, dtype: "int16", shape: [3], flags: DLPackFlag.READ_ONLY | DLPackFlag.IS_COPIED },
    6,
  );
  {
    const t = Tensor.fromManaged(host, prod.address);
    assert.deepEqual(t.flags, { readOnly: true, isCopied: true, subbytePadded: false });
    t[Symbol.dispose]();
  }
  assert.equal(prod.calls(), 1);
  const legacy = produce(host, { device: CPU, dtype: "int16", shape: [3] }, 6, { versioned: false });
  const t = Tensor.fromManaged(host, legacy.address, { versioned: false });
  assert.equal(t.view.length, 3);
  t.dispose();
  assert.equal(legacy.calls(), 1);
  assert.equal(host.liveAllocations, 0);
});

test("fromManaged decode failure: the deleter is still called once and the error rethrown", () => {
  const host = createTestHost();
  const V = LAYOUT.DLManagedTensorVersioned;
  const corruptions: [string, (dv: DataView, a: number) => void, string][] = [
    ["VERSION_MISMATCH", (dv, a) => dv.setUint32(a + V.version, 2, true), "DLManagedTensorVersioned.version.major"],
    ["BAD_FLAGS", (dv, a) => dv.setBigUint64(a + V.flags, 0x100n, true), "DLManagedTensorVersioned.flags"],
    ["BAD_NDIM", (dv, a) => dv.setInt32(a + V.dl_tensor + LAYOUT.DLTensor.ndim, 99, true), "DLTensor.ndim"],
    ["BAD_DTYPE", (dv, a) => dv.setUint8(a + V.dl_tensor + LAYOUT.DLTensor.dtype, 200), "DLTensor.dtype.code"],
    [
      "BAD_DEVICE",
      (dv, a) => dv.setInt32(a + V.dl_tensor + LAYOUT.DLTensor.device, DeviceType.kDLCUDA, true),
      "DLTensor.device.device_type",
    ],
  ];
  for (const [code, corrupt, field] of corruptions) {
    const prod = produce(host, { device: CPU, dtype: "float32", shape: [2] }, 8);
    corrupt(new DataView(host.buffer), prod.address);
    expectError(() => Tensor.fromManaged(host, prod.address), code as never, field);
    assert.equal(prod.calls(), 1, `${code}: deleter called once`);
  }
  assert.equal(host.liveAllocations, 0);
  // An unreadable struct has no deleter to call: only the error.
  expectError(() => Tensor.fromManaged(host, 0), "NULL_POINTER", "DLManagedTensorVersioned");
  expectError(() => Tensor.fromManaged(host, host.buffer.byteLength - 8), "OUT_OF_BOUNDS", "DLManagedTensorVersioned");
});

test("toManaged of a wasm tensor: zero-copy; the host's one shared deleter frees the block once", () => {
  const host = createTestHost();
  const p = host.malloc(24);
  new Float32Array(host.buffer, p, 6).set([1, 2, 3, 4, 5, 6]);
  const t = Tensor.wasmView(host, { data: p, dtype: "float32", shape: [3, 2], strides: [1, 3], readOnly: true });
  const allocs = host.liveAllocations;
  const fns = host.liveFunctions;
  const exportsBefore = liveExportCount();
  const a = t.toManaged(host);
  const d = readManagedTensorVersioned(host, a);
  assert.equal(d.data, p, "zero-copy");
  assert.deepEqual([...d.shape], [3, 2]);
  assert.deepEqual(d.strides && [...d.strides], [1, 3]);
  assert.equal(d.flags, DLPackFlag.READ_ONLY);
  assert.equal(host.liveAllocations, allocs + 1, "one block: struct + shape + strides");
  assert.equal(host.liveFunctions, fns + 1, "the host's deleter entry, made on its first export");
  assert.equal(liveExportCount(), exportsBefore + 1);
  host.callVoidPointer(d.deleter, a);
  assert.equal(host.liveAllocations, allocs + 1, "the block kept by the host for a later export");
  assert.equal(liveExportCount(), exportsBefore);
  host.callVoidPointer(d.deleter, a); // a second call does nothing (its kept record is released)
  assert.equal(host.liveAllocations, allocs + 1);
  assert.equal(liveExportCount(), exportsBefore);
  assert.equal(trimExportBlocks(host), 1);
  assert.equal(host.liveAllocations, allocs);
  host.callVoidPointer(d.deleter, a); // nor once freed (the strict host would throw on a double free)
  assert.equal(host.liveAllocations, allocs);
  assert.equal(liveExportCount(), exportsBefore);
  // A legacy struct can not say READ_ONLY: refused (its consumer would write), as Python refuses it.
  expectError(() => t.toManaged(host, { versioned: false }), "UNSUPPORTED", "options.versioned");
  // Legacy export of a writable view, and two live exports: one shared entry, each released once.
  const l = Tensor.wasmView(host, { data: p, dtype: "float32", shape: [3, 2], strides: [1, 3] }).toManaged(host, {
    versioned: false,
  });
  const dl = readManagedTensor(host, l);
  assert.equal(dl.data, p);
  const b = t.toManaged(host);
  assert.equal(readManagedTensorVersioned(host, b).deleter, dl.deleter);
  assert.equal(dl.deleter, d.deleter);
  assert.equal(host.liveFunctions, fns + 1, "no entry per export");
  assert.equal(liveExportCount(), exportsBefore + 2);
  host.callVoidPointer(dl.deleter, l);
  host.callVoidPointer(dl.deleter, b);
  assert.equal(liveExportCount(), exportsBefore);
  assert.equal(trimExportBlocks(host), 2, "a legacy and a versioned block");
  assert.equal(host.liveAllocations, allocs);
});

test("toManaged of a js tensor copies into the heap (IS_COPIED) unless copy:false", () => {
  const host = createTestHost();
  const src = new Int32Array([10, 20, 30, 40, 50, 60]);
  // A strided js tensor: the copy is C-contiguous.
  const t = Tensor.fromTypedArray(src, { shape: [2, 3], readOnly: true });
  expectError(() => t.toManaged(host, { copy: false }), "COPY_REQUIRED", "options.copy");
  const a = t.toManaged(host);
  const d = readManagedTensorVersioned(host, a);
  assert.equal(d.flags & DLPackFlag.IS_COPIED, DLPackFlag.IS_COPIED);
  assert.equal(d.flags & DLPackFlag.READ_ONLY, 0, "the copy belongs to the consumer");
  assert.deepEqual([...new Int32Array(host.buffer, d.data, 6)], [10, 20, 30, 40, 50, 60]);
  assert.equal(host.liveAllocations, 2, "struct block + data copy");
  const back = Tensor.fromManaged(host, a);
  assert.deepEqual([...(back.view as Int32Array)], [10, 20, 30, 40, 50, 60]);
  back.dispose(); // runs our own deleter through the table
  assert.equal(host.liveAllocations, 0);
  assert.equal(host.liveFunctions, 1, "only the host's shared deleter entry");
  // A tensor in another wasm memory is copied too.
  const other = createTestHost();
  const q = other.malloc(8);
  new Uint8Array(other.buffer, q, 8).set([1, 2, 3, 4, 5, 6, 7, 8]);
  const o = Tensor.wasmView(other, { data: q, dtype: "uint8", shape: [4], strides: [-2], byteOffset: 7 });
  expectError(() => o.toManaged(host, { copy: false }), "COPY_REQUIRED", "options.copy");
  const oa = o.toManaged(host);
  const od = readManagedTensorVersioned(host, oa);
  assert.deepEqual([...new Uint8Array(host.buffer, od.data, 4)], [8, 6, 4, 2]);
  host.callVoidPointer(od.deleter, oa);
  assert.equal(host.liveAllocations, 0);
});

test("re-export of an owned tensor keeps the producer alive until both are released", () => {
  const host = createTestHost();
  for (const order of ["dispose-first", "export-first"]) {
    const prod = produce(host, { device: CPU, dtype: "float32", shape: [2] }, 8);
    const t = Tensor.fromManaged(host, prod.address);
    const a = t.toManaged(host);
    const deleter = readManagedTensorVersioned(host, a).deleter;
    if (order === "dispose-first") {
      t.dispose();
      assert.equal(prod.calls(), 0, "the export still uses the producer's bytes");
      host.callVoidPointer(deleter, a);
    } else {
      host.callVoidPointer(deleter, a);
      assert.equal(prod.calls(), 0, "the tensor still uses the producer's bytes");
      t.dispose();
    }
    assert.equal(prod.calls(), 1, order);
  }
  assert.equal(trimExportBlocks(host), 1, "the second export had the first one's block");
  assert.equal(host.liveAllocations, 0);
  assert.equal(host.liveFunctions, 3, "the two producers' own deleters and the host's one shared export deleter");
});

test("toManaged failure paths leak nothing", () => {
  const host = createTestHost();
  const t = Tensor.fromTypedArray(new Float32Array(4));
  host.failMalloc(true);
  expectError(() => t.toManaged(host), "OUT_OF_MEMORY", "malloc");
  host.failMalloc(false);
  const exportsBefore = liveExportCount();
  assert.equal(host.liveAllocations, 0);
  assert.equal(host.liveFunctions, 1, "only the host's shared deleter entry (kept for its later exports)");
  // Data copy succeeds, struct malloc fails.
  let n = 0;
  const flaky = Object.create(host) as typeof host;
  flaky.malloc = (size: number) => (++n === 2 ? 0 : host.malloc(size));
  expectError(() => t.toManaged(flaky), "OUT_OF_MEMORY", "malloc");
  assert.equal(host.liveAllocations, 0);
  assert.equal(host.liveFunctions, 2, "flaky is another host object: its own shared entry");
  assert.equal(liveExportCount(), exportsBefore);
  // Both hosts still export and release.
  for (const h of [host, flaky]) {
    const a = t.toManaged(h);
    h.callVoidPointer(readManagedTensorVersioned(h, a).deleter, a);
  }
  assert.equal(host.liveAllocations, 0);
  assert.equal(liveExportCount(), exportsBefore);
});
