/**
 * Exported helpers and Tensor entry points refuse bad input with a typed
 * WebDLPackError naming the field, the value and what was expected — never a
 * bare TypeError or a wrong result (NaN, a negative size, a silent [1]).
 * Everything is imported from the package entry (js/src/index.ts), as users do.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  Tensor,
  type WebDLPackError,
  contiguousStrides,
  describeGPUPointer,
  elementCount,
  parseDType,
  storageBytes,
  typedArrayFor,
  type ErrorCodeName,
} from "../../js/src/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError } from "./helpers.js";

/** Assert `fn` throws a WebDLPackError with `code` and `field` that says what was expected; return it. */
function refuses(fn: () => unknown, code: ErrorCodeName, field: string): WebDLPackError {
  const err = expectError(fn, code, field);
  assert.ok(typeof err.expected === "string" && err.expected.length > 0, `says what was expected: ${err.message}`);
  return err;
}

test("typedArrayFor(non-dtype) is BAD_DTYPE naming the field", () => {
  refuses(() => typedArrayFor(null as never), "BAD_DTYPE", "dtype");
  refuses(() => typedArrayFor(undefined as never, "tensor.dtype"), "BAD_DTYPE", "tensor.dtype");
  refuses(() => typedArrayFor(7 as never), "BAD_DTYPE", "dtype");
  assert.equal(typedArrayFor(parseDType("float32")).ctor, Float32Array, "valid dtypes still map");
});

test("contiguousStrides checks the shape: not an array, NaN, negative, fractional, overflowing strides", () => {
  assert.equal(refuses(() => contiguousStrides(null as never), "BAD_SHAPE", "shape").value, null);
  assert.ok(Number.isNaN(refuses(() => contiguousStrides([NaN]), "BAD_SHAPE", "shape[0]").value as number));
  assert.equal(refuses(() => contiguousStrides([2, -3]), "BAD_SHAPE", "shape[1]").value, -3);
  refuses(() => contiguousStrides([1.5]), "BAD_SHAPE", "shape[0]");
  refuses(() => contiguousStrides(["2"] as never), "BAD_SHAPE", "shape[0]");
  refuses(() => contiguousStrides([2 ** 60]), "SIZE_OVERFLOW", "shape[0]");
  refuses(() => contiguousStrides([2 ** 30, 2 ** 30, 2 ** 30]), "SIZE_OVERFLOW", "shape[0]");
  assert.deepEqual(contiguousStrides([2, 3, 4]), [12, 4, 1]);
  assert.deepEqual(contiguousStrides([2, 0, 4]), [4, 4, 1], "a zero extent counts as 1 for the strides");
  assert.deepEqual(contiguousStrides([]), []);
});

test("elementCount checks the shape and the product", () => {
  assert.equal(refuses(() => elementCount([-1]), "BAD_SHAPE", "shape[0]").value, -1);
  refuses(() => elementCount([NaN]), "BAD_SHAPE", "shape[0]");
  refuses(() => elementCount(undefined as never), "BAD_SHAPE", "shape");
  refuses(() => elementCount([2 ** 30, 2 ** 30]), "SIZE_OVERFLOW", "shape");
  refuses(() => elementCount([-1], "tensor.shape"), "BAD_SHAPE", "tensor.shape[0]");
  assert.equal(elementCount([2, 3]), 6);
  assert.equal(elementCount([]), 1);
  assert.equal(elementCount([0, 2 ** 52]), 0);
});

test("storageBytes checks the dtype and the count", () => {
  const f32 = parseDType("float32");
  assert.equal(refuses(() => storageBytes(f32, -1, false), "INVALID_ARGUMENT", "count").value, -1);
  refuses(() => storageBytes(f32, NaN, false), "INVALID_ARGUMENT", "count");
  refuses(() => storageBytes(f32, 2.5, false), "INVALID_ARGUMENT", "count");
  refuses(() => storageBytes(f32, 2 ** 52, false), "SIZE_OVERFLOW", "count");
  refuses(() => storageBytes(null as never, 1, false), "BAD_DTYPE", "dtype");
  refuses(() => storageBytes({ code: 2, bits: 3, lanes: 1 }, 1, false), "BAD_DTYPE", "dtype.bits");
  assert.equal(storageBytes(f32, 0, false), 0);
  assert.equal(storageBytes(parseDType("float4_e2m1fn"), 3, false), 2, "packed: ceil(3 × 4 / 8)");
  assert.equal(storageBytes(parseDType("float4_e2m1fn"), 3, true), 3, "padded: a byte each");
});

test("createTestHost checks its page counts and options", () => {
  for (const bad of [-1, NaN, 1e9, 1.5]) refuses(() => createTestHost(bad), "INVALID_ARGUMENT", "initialPages");
  refuses(() => createTestHost(1, 70000), "INVALID_ARGUMENT", "maxPages");
  refuses(() => createTestHost(4, 2), "INVALID_ARGUMENT", "maxPages");
  refuses(() => createTestHost(1, 2, null as never), "INVALID_ARGUMENT", "options");
  const host = createTestHost(0, 1);
  assert.equal(host.buffer.byteLength, 0);
  assert.notEqual(host.malloc(16), 0, "a 0-page host grows on malloc");
});

test("describeGPUPointer checks the pointer and the bit format", () => {
  assert.ok(Number.isNaN(refuses(() => describeGPUPointer(NaN), "INVALID_POINTER", "ptr").value as number));
  refuses(() => describeGPUPointer(1.5), "INVALID_POINTER", "ptr");
  refuses(() => describeGPUPointer(2 ** 32), "INVALID_POINTER", "ptr");
  refuses(() => describeGPUPointer("5" as never), "INVALID_POINTER", "ptr");
  refuses(() => describeGPUPointer(5, 0), "INVALID_ARGUMENT", "generationBits");
  refuses(() => describeGPUPointer(5, 17), "INVALID_ARGUMENT", "generationBits");
  refuses(() => describeGPUPointer(5, 10, 9), "INVALID_ARGUMENT", "tagBits");
  assert.deepEqual(describeGPUPointer(0x1004002a), { slot: 0x2a, generation: 1, tag: 1 });
  assert.deepEqual(
    describeGPUPointer(-1),
    { slot: 0x3ffff, generation: 0x3ff, tag: 0xf },
    "a signed i32 from C reads as unsigned",
  );
  assert.deepEqual(describeGPUPointer(0x00030005, 16, 0), { slot: 5, generation: 3, tag: 0 });
});

test("tensor.toManaged(non-host) is INVALID_ARGUMENT naming `host` and the missing member", () => {
  const t = Tensor.fromTypedArray(new Float32Array(4));
  assert.equal(refuses(() => t.toManaged(null as never), "INVALID_ARGUMENT", "host").value, null);
  assert.match(refuses(() => t.toManaged({} as never), "INVALID_ARGUMENT", "host").message, /buffer/);
  const host = createTestHost();
  const noMalloc = { ...host, buffer: host.buffer, malloc: undefined };
  assert.equal(
    refuses(() => t.toManaged(noMalloc as never), "INVALID_ARGUMENT", "host").value,
    "an object whose malloc is undefined",
  );
  refuses(() => t.toManaged(host, null as never), "INVALID_ARGUMENT", "options");
  const address = t.toManaged(host);
  assert.ok(address > 0, "a real host still works");
  assert.equal(host.liveAllocations, 2, "struct and copy");
});

test("Tensor.fromManaged / wasmView / webgpu refuse a non-object host or input", () => {
  refuses(() => Tensor.fromManaged(null as never, 1024), "INVALID_ARGUMENT", "host");
  refuses(() => Tensor.fromManaged({ buffer: new ArrayBuffer(8) } as never, 8), "INVALID_ARGUMENT", "host");
  refuses(
    () => Tensor.wasmView(undefined as never, { data: 0, dtype: "uint8", shape: [0] }),
    "INVALID_ARGUMENT",
    "host",
  );
  refuses(() => Tensor.wasmView(createTestHost(), null as never), "INVALID_ARGUMENT", "input");
  assert.equal(refuses(() => Tensor.webgpu(null as never), "INVALID_ARGUMENT", "input").value, null);
  refuses(() => Tensor.webgpu("ptr" as never), "INVALID_ARGUMENT", "input");
});
