/** tensor.ts's views and copies: fromTypedArray, wasmView (and its checks), strides, 0-d, complex, memory growth. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Tensor } from "../../js/src/tensor/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError } from "./helpers.js";

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
