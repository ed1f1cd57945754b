/**
 * Tensor.fromTypedArray never reinterprets bytes silently (a dtype the array's
 * elements are not stored as needs `{reinterpret: true}`), and refuses a
 * detached (transferred) ArrayBuffer with a typed error.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Tensor } from "../../js/src/index.js";
import { expectError } from "./helpers.js";

/** Detach `buffer` the way postMessage(…, [buffer]) does. */
function detach(buffer: ArrayBuffer): void {
  structuredClone(buffer, { transfer: [buffer] });
  assert.equal(buffer.byteLength, 0, "detached");
}

test("a dtype of another element type is BAD_DTYPE naming both dtypes and the opt-in", () => {
  const err = expectError(() => Tensor.fromTypedArray(new Float32Array(4), { dtype: "float64" }), "BAD_DTYPE", "dtype");
  assert.equal(err.value, "float64");
  assert.match(err.message, /Float32Array holds float32, not float64/);
  assert.match(err.expected ?? "", /reinterpret: true/);
  expectError(() => Tensor.fromTypedArray(new Int32Array(2), { dtype: "float32" }), "BAD_DTYPE", "dtype");
  expectError(() => Tensor.fromTypedArray(new Int8Array(3), { dtype: "bool" }), "BAD_DTYPE", "dtype");
  expectError(() => Tensor.fromTypedArray(new Uint8Array(4), { dtype: "int8" }), "BAD_DTYPE", "dtype");
  expectError(() => Tensor.fromTypedArray(new Float64Array(1), { dtype: "complex64" }), "BAD_DTYPE", "dtype");
  expectError(() => Tensor.fromTypedArray(new Float32Array(1), { dtype: "float16x2" }), "BAD_DTYPE", "dtype");
  expectError(() => Tensor.fromTypedArray(new Float32Array(4), { dtype: "int32" }), "BAD_DTYPE", "dtype");
  expectError(
    () => Tensor.fromTypedArray(new Float32Array(4), { dtype: "float64", reinterpret: "yes" as never }),
    "BAD_DTYPE",
    "dtype",
  );
});

test("{reinterpret: true} views the same bytes as the dtype asked for", () => {
  const f32 = new Float32Array([1, 2, 3, 4]);
  const t = Tensor.fromTypedArray(f32, { dtype: "float64", reinterpret: true });
  assert.equal(t.dtype.bits, 64);
  assert.deepEqual([...t.shape], [2]);
  assert.ok(t.view instanceof Float64Array);
  assert.equal(t.view.buffer, f32.buffer, "no copy");
  const bits = Tensor.fromTypedArray(new Float32Array([1]), { dtype: "int32", reinterpret: true });
  assert.equal((bits.view as Int32Array)[0], 0x3f800000, "int32 bit patterns of a float32");
});

test("dtypes stored as the array's elements need no opt-in", () => {
  const ok: [ArrayBufferView, string, number[]][] = [
    [new Float32Array(4), "float32", [4]],
    [new Float32Array(4), "complex64", [2]],
    [new Float32Array(8), "float32x4", [2]],
    [new Float64Array(2), "complex128", [1]],
    [new Uint8Array(3), "bool", [3]],
    [new Uint8Array(3), "float8_e4m3fn", [3]],
    [new Uint8Array(2), "int4", [4]],
    [new Uint8ClampedArray(3), "uint8", [3]],
    [new Uint16Array(3), "float16", [3]],
    [new Uint16Array(3), "bfloat16", [3]],
    [new Uint16Array(4), "complex32", [2]],
    [new BigInt64Array(2), "int64", [2]],
    [new DataView(new ArrayBuffer(8)), "float64", [1]],
  ];
  for (const [array, dtype, shape] of ok) {
    const t = Tensor.fromTypedArray(array, { dtype });
    assert.deepEqual([...t.shape], shape, `${array.constructor.name} as ${dtype}`);
  }
  assert.equal(
    Tensor.fromTypedArray(new Float64Array(2).buffer, { dtype: "int32" }).size,
    4,
    "an ArrayBuffer has no element type",
  );
});

test("a detached ArrayBuffer is INVALID_ARGUMENT naming `array`", () => {
  const expected = "a TypedArray whose ArrayBuffer is not detached/transferred";
  const f32 = new Float32Array(4);
  detach(f32.buffer as ArrayBuffer);
  for (const make of [
    () => Tensor.fromTypedArray(f32),
    () => Tensor.fromTypedArray(f32, { shape: [4] }),
    () => Tensor.fromTypedArray(f32, { dtype: "float32" }),
  ]) {
    const err = expectError(make, "INVALID_ARGUMENT", "array");
    assert.equal(err.expected, expected);
    assert.match(err.message, /detached/);
  }
  const buffer = new ArrayBuffer(8);
  detach(buffer);
  assert.equal(
    expectError(() => Tensor.fromTypedArray(buffer, { dtype: "float32" }), "INVALID_ARGUMENT", "array").expected,
    expected,
  );
  const backing = new ArrayBuffer(8);
  const view = new DataView(backing, 4);
  detach(backing);
  expectError(() => Tensor.fromTypedArray(view, { dtype: "float32" }), "INVALID_ARGUMENT", "array");
  // An empty, attached array is fine.
  assert.equal(Tensor.fromTypedArray(new Float32Array(0)).size, 0);
  assert.equal(Tensor.fromTypedArray(new ArrayBuffer(0), { dtype: "uint8" }).size, 0);
});

test("fromTypedArray options must be an object", () => {
  expectError(() => Tensor.fromTypedArray(new Float32Array(1), null as never), "INVALID_ARGUMENT", "options");
});
