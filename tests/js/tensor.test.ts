/** tensor.ts: views, copies, and the ownership rules of fromManaged / toManaged. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DLPackFlag,
  DeviceType,
  LAYOUT,
  readManagedTensor,
  readManagedTensorVersioned,
  writeManagedTensorVersioned,
} from "../../js/src/dlpack/index.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { Tensor, liveExportCount, setGPUPointerResolver, trimExportBlocks } from "../../js/src/tensor/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError, produce } from "./helpers.js";

const CPU = { deviceType: DeviceType.kDLCPU, deviceId: 0 };

/** Reference strided gather: element values at every index, row-major. */
function reference(src: ArrayLike<number>, shape: number[], strides: number[], first: number): number[] {
  const out: number[] = [];
  const idx = new Array(shape.length).fill(0);
  const count = shape.reduce((a, b) => a * b, 1);
  for (let n = 0; n < count; n++) {
    let off = first;
    for (let d = 0; d < shape.length; d++) off += idx[d] * strides[d]!;
    out.push(src[off]!);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]!) break;
      idx[d] = 0;
    }
  }
  return out;
}

test("fromTypedArray: a js tensor viewing the array's bytes", () => {
  const arr = new Float32Array([1, 2, 3, 4, 5, 6]);
  const t = Tensor.fromTypedArray(arr, { shape: [2, 3] });
  assert.equal(t.storage, "js");
  assert.deepEqual([...t.shape], [2, 3]);
  assert.equal(t.nbytes, 24);
  assert.equal(t.size, 6);
  assert.equal(t.isContiguous, true);
  assert.equal(t.view.buffer, arr.buffer, "no copy");
  arr[0] = 42;
  assert.equal(t.view[0], 42);
  assert.deepEqual([...Tensor.fromTypedArray(new Int32Array([7, 8])).shape], [2], "1-D by default");
  const sub = new Int16Array(new ArrayBuffer(16), 4, 4);
  sub.set([1, 2, 3, 4]);
  assert.deepEqual([...(Tensor.fromTypedArray(sub).view as Int16Array)], [1, 2, 3, 4]);
  const b = Tensor.fromTypedArray(new Uint8Array([0, 1, 1]), { dtype: "bool" });
  assert.equal(b.dtype.code, 6);
  const bytes = Tensor.fromTypedArray(new Float64Array([1, 2]).buffer, { dtype: "float64" });
  assert.deepEqual([...(bytes.view as Float64Array)], [1, 2]);
  expectError(() => Tensor.fromTypedArray(arr, { shape: [4, 2] }), "BAD_SHAPE", "shape");
  expectError(() => Tensor.fromTypedArray(new ArrayBuffer(8)), "BAD_DTYPE", "dtype");
  expectError(() => Tensor.fromTypedArray([1, 2] as unknown as Float32Array), "INVALID_ARGUMENT", "array");
  // A transferred (detached) buffer: an error, never zeros.
  const moved = new Float32Array([1, 2]);
  const mt = Tensor.fromTypedArray(moved);
  structuredClone(moved.buffer, { transfer: [moved.buffer] });
  expectError(() => mt.toArray(), "OUT_OF_BOUNDS", "tensor.data");
  expectError(() => mt.view, "OUT_OF_BOUNDS", "tensor.data");
  const big = Tensor.fromTypedArray(new BigInt64Array([1n, -2n]));
  assert.deepEqual([...(big.toArray() as BigInt64Array)], [1n, -2n]);
});

test("0-d and zero-size tensors", () => {
  const host = createTestHost();
  const p = host.malloc(8);
  new Float64Array(host.buffer, p, 1)[0] = 3.5;
  const s = Tensor.wasmView(host, { data: p, dtype: "float64", shape: [] });
  assert.equal(s.size, 1);
  assert.deepEqual([...(s.view as Float64Array)], [3.5]);
  assert.deepEqual([...(s.toArray() as Float64Array)], [3.5]);
  const z = Tensor.wasmView(host, { data: 0, dtype: "float32", shape: [3, 0] });
  assert.equal(z.size, 0);
  assert.equal(z.view.length, 0);
  assert.equal(z.toArray().length, 0);
});

test("toArray handles strides: F-order, negative, broadcast, misaligned; view refuses them", () => {
  const host = createTestHost();
  const p = host.malloc(4 * 64);
  const mem = new Int32Array(host.buffer, p, 64);
  for (let i = 0; i < 64; i++) mem[i] = i * 10;
  const cases: [number[], number[], number][] = [
    [[3, 4], [1, 3], 0],
    [[4], [-1], 3],
    [[3, 4], [-4, 1], 8],
    [[3, 4], [4, -1], 3],
    [[2, 3, 2], [-12, 1, -3], 20],
    [[3, 4], [0, 1], 0],
    [[2, 2], [8, 2], 5],
    [[5, 1], [2, 99], 0],
  ];
  for (const [shape, strides, first] of cases) {
    const t = Tensor.wasmView(host, { data: p, dtype: "int32", shape, strides, byteOffset: first * 4 });
    assert.deepEqual(
      [...(t.toArray() as Int32Array)],
      reference(mem, shape, strides, first),
      JSON.stringify([shape, strides]),
    );
    if (!t.isContiguous) expectError(() => t.view, "BAD_STRIDES", "tensor.strides");
  }
  // [5,1] with stride 2 on dim 0 is strided; [1,4] with any stride on dim 0 is contiguous.
  assert.equal(Tensor.wasmView(host, { data: p, dtype: "int32", shape: [1, 4], strides: [77, 1] }).isContiguous, true);
  // Misaligned start: no Int32Array view, but toArray copies.
  const m = Tensor.wasmView(host, { data: p + 2, dtype: "int32", shape: [2] });
  expectError(() => m.view, "UNSUPPORTED", "tensor.data + byteOffset");
  const bytes = new Uint8Array(host.buffer, p + 2, 8);
  assert.deepEqual([...new Uint8Array((m.toArray() as Int32Array).buffer)], [...bytes]);
  // Reaching outside memory is refused at construction.
  expectError(
    () => Tensor.wasmView(host, { data: p, dtype: "int32", shape: [4], strides: [-(2 ** 30)] }),
    "OUT_OF_BOUNDS",
    "tensor.strides",
  );
  expectError(
    () => Tensor.wasmView(host, { data: p, dtype: "int32", shape: [4], strides: [2 ** 30] }),
    "OUT_OF_BOUNDS",
    "tensor.data",
  );
});

test("complex and multi-lane views are interleaved TypedArrays", () => {
  const c = Tensor.fromTypedArray(new Float32Array([1, -1, 2, -2]), { dtype: "complex64", shape: [2] });
  assert.equal(c.view.constructor, Float32Array);
  assert.equal(c.view.length, 4);
  assert.deepEqual([...(c.toArray() as Float32Array)], [1, -1, 2, -2]);
  const v = Tensor.fromTypedArray(new Float32Array(8), { dtype: "float32x4", shape: [2] });
  assert.equal(v.view.length, 8);
});

test("view is re-derived after memory growth; the old one is detached", () => {
  const host = createTestHost(1, 8);
  const p = host.malloc(16);
  const t = Tensor.wasmView(host, { data: p, dtype: "float32", shape: [4] });
  const v1 = t.view as Float32Array;
  v1.set([1, 2, 3, 4]);
  assert.equal(t.view, v1, "cached while the buffer is unchanged");
  host.memory.grow(2);
  assert.equal(v1.length, 0, "old view detached by growth");
  const v2 = t.view as Float32Array;
  assert.notEqual(v2, v1);
  assert.deepEqual([...v2], [1, 2, 3, 4]);
  assert.equal(v2.buffer, host.buffer);
  // Growth through malloc works the same way.
  host.malloc(4 * 65536);
  assert.deepEqual([...(t.view as Float32Array)], [1, 2, 3, 4]);
});

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
  // Legacy export, and two live exports: one shared entry, each released once.
  const l = t.toManaged(host, { versioned: false });
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

test("webgpu tensors: lazy GPUBuffer via the resolver; no CPU view", () => {
  const host = createTestHost();
  const t = Tensor.webgpu({ pointer: 0x90000010, deviceId: 2, dtype: "float16", shape: [8, 8] });
  assert.equal(t.storage, "webgpu");
  assert.deepEqual(t.device, { deviceType: DeviceType.kDLWebGPU, deviceId: 2 });
  expectError(() => t.view, "UNSUPPORTED", "tensor.storage");
  expectError(() => t.toArray(), "UNSUPPORTED", "tensor.storage");
  // Default resolver: the page context's pointer table, which does not know this pointer.
  assert.throws(
    () => t.gpuBuffer,
    (err: unknown) => err instanceof WebDLPackError && err.code !== "UNSUPPORTED",
  );
  const fake = { label: "fake" } as unknown as GPUBuffer;
  const seen: number[][] = [];
  setGPUPointerResolver((ptr, dev) => {
    seen.push([ptr, dev]);
    return fake;
  });
  assert.equal(t.gpuBuffer, fake);
  assert.deepEqual(seen, [[0x90000010, 2]]);
  setGPUPointerResolver(null);
  expectError(() => Tensor.fromTypedArray(new Uint8Array(1)).gpuBuffer, "UNSUPPORTED", "tensor.storage");
  expectError(
    () => Tensor.webgpu({ pointer: 0, deviceId: 0, dtype: "float32", shape: [1] }),
    "NULL_POINTER",
    "pointer",
  );
  expectError(
    () => Tensor.webgpu({ pointer: 16, deviceId: -1, dtype: "float32", shape: [1] }),
    "BAD_DEVICE",
    "tensor.device.device_id",
  );
  // Export and re-import: zero-copy, same pointer.
  const a = t.toManaged(host, { copy: false });
  const back = Tensor.fromManaged(host, a);
  assert.equal(back.storage, "webgpu");
  assert.equal(back.data, 0x90000010);
  assert.deepEqual([...back.shape], [8, 8]);
  back.dispose();
  assert.equal(trimExportBlocks(host), 1);
  assert.equal(host.liveAllocations, 0);
  // A producer's WebGPU struct.
  const g = writeManagedTensorVersioned(host, {
    data: 0x20,
    device: { deviceType: DeviceType.kDLWebGPU, deviceId: 0 },
    dtype: "int8",
    shape: [4],
  });
  const gt = Tensor.fromManaged(host, g);
  assert.equal(gt.data, 0x20);
  gt.dispose(); // deleter NULL: nothing to call
  host.free(g);
});

test("wasmView validates like the codec", () => {
  const host = createTestHost(1, 1);
  const end = host.buffer.byteLength;
  expectError(
    () => Tensor.wasmView(host, { data: end - 4, dtype: "float32", shape: [2] }),
    "OUT_OF_BOUNDS",
    "tensor.data",
  );
  expectError(() => Tensor.wasmView(host, { data: 0, dtype: "float32", shape: [2] }), "NULL_POINTER", "tensor.data");
  expectError(() => Tensor.wasmView(host, { data: 64, dtype: "nope", shape: [2] }), "BAD_DTYPE", "tensor.dtype");
  expectError(() => Tensor.wasmView(host, { data: 64, dtype: "int8", shape: [2, -2] }), "BAD_SHAPE", "tensor.shape[1]");
  expectError(() => Tensor.wasmView(host, { data: 64.5, dtype: "int8", shape: [2] }), "INVALID_ARGUMENT", "data");
});
