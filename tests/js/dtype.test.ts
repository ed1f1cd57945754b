/** dtype.ts: names, sizes, TypedArray mapping and rejection of invalid dtypes. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DataTypeCode as C,
  Float16ArrayCtor,
  dtypeEquals,
  dtypeOfTypedArray,
  formatDType,
  isSubByte,
  itemsize,
  parseDType,
  storageBytes,
  toDType,
  typedArrayFor,
  validateDType,
} from "../../js/src/dlpack/index.js";
import { expectError } from "./helpers.js";

// name, code, bits, lanes, itemsize, TypedArray name, TypedArray elements per element
const TABLE: [string, number, number, number, number, string, number][] = [
  ["int8", C.kDLInt, 8, 1, 1, "Int8Array", 1],
  ["int16", C.kDLInt, 16, 1, 2, "Int16Array", 1],
  ["int32", C.kDLInt, 32, 1, 4, "Int32Array", 1],
  ["int64", C.kDLInt, 64, 1, 8, "BigInt64Array", 1],
  ["uint8", C.kDLUInt, 8, 1, 1, "Uint8Array", 1],
  ["uint16", C.kDLUInt, 16, 1, 2, "Uint16Array", 1],
  ["uint32", C.kDLUInt, 32, 1, 4, "Uint32Array", 1],
  ["uint64", C.kDLUInt, 64, 1, 8, "BigUint64Array", 1],
  ["float16", C.kDLFloat, 16, 1, 2, Float16ArrayCtor ? "Float16Array" : "Uint16Array", 1],
  ["float32", C.kDLFloat, 32, 1, 4, "Float32Array", 1],
  ["float64", C.kDLFloat, 64, 1, 8, "Float64Array", 1],
  ["bfloat16", C.kDLBfloat, 16, 1, 2, "Uint16Array", 1],
  ["complex32", C.kDLComplex, 32, 1, 4, Float16ArrayCtor ? "Float16Array" : "Uint16Array", 2],
  ["complex64", C.kDLComplex, 64, 1, 8, "Float32Array", 2],
  ["complex128", C.kDLComplex, 128, 1, 16, "Float64Array", 2],
  ["bool", C.kDLBool, 8, 1, 1, "Uint8Array", 1],
  ["float8_e3m4", C.kDLFloat8_e3m4, 8, 1, 1, "Uint8Array", 1],
  ["float8_e4m3", C.kDLFloat8_e4m3, 8, 1, 1, "Uint8Array", 1],
  ["float8_e4m3b11fnuz", C.kDLFloat8_e4m3b11fnuz, 8, 1, 1, "Uint8Array", 1],
  ["float8_e4m3fn", C.kDLFloat8_e4m3fn, 8, 1, 1, "Uint8Array", 1],
  ["float8_e4m3fnuz", C.kDLFloat8_e4m3fnuz, 8, 1, 1, "Uint8Array", 1],
  ["float8_e5m2", C.kDLFloat8_e5m2, 8, 1, 1, "Uint8Array", 1],
  ["float8_e5m2fnuz", C.kDLFloat8_e5m2fnuz, 8, 1, 1, "Uint8Array", 1],
  ["float8_e8m0fnu", C.kDLFloat8_e8m0fnu, 8, 1, 1, "Uint8Array", 1],
  ["float6_e2m3fn", C.kDLFloat6_e2m3fn, 6, 1, 1, "Uint8Array", 1],
  ["float6_e3m2fn", C.kDLFloat6_e3m2fn, 6, 1, 1, "Uint8Array", 1],
  ["float4_e2m1fn", C.kDLFloat4_e2m1fn, 4, 1, 1, "Uint8Array", 1],
  ["float32x4", C.kDLFloat, 32, 4, 16, "Float32Array", 4],
  ["int8x4", C.kDLInt, 8, 4, 4, "Int8Array", 4],
  ["complex64x2", C.kDLComplex, 64, 2, 16, "Float32Array", 4],
  ["int4", C.kDLInt, 4, 1, 1, "Uint8Array", 1],
  ["uint4x2", C.kDLUInt, 4, 2, 1, "Uint8Array", 1],
  ["handle64", C.kDLOpaqueHandle, 64, 1, 8, "", 0],
];

for (const [name, code, bits, lanes, size, arrayName, per] of TABLE) {
  test(`dtype ${name}`, () => {
    const dt = parseDType(name);
    assert.deepEqual({ ...dt }, { code, bits, lanes });
    assert.equal(formatDType(dt), name);
    assert.equal(itemsize(dt), size);
    assert.equal(itemsize(dt), (bits * lanes + 7) >> 3);
    if (arrayName === "") {
      expectError(() => typedArrayFor(dt), "BAD_DTYPE", "dtype");
    } else {
      const info = typedArrayFor(dt);
      assert.equal(info.ctor.name, arrayName);
      assert.equal(info.perElement, per);
      if (!isSubByte(dt)) assert.equal(info.ctor.BYTES_PER_ELEMENT * info.perElement, size);
    }
  });
}

test("float16 representation says whether Float16Array was used", () => {
  const info = typedArrayFor(parseDType("float16"));
  assert.equal(info.representation, Float16ArrayCtor ? "value" : "bits");
  assert.equal(typedArrayFor(parseDType("bfloat16")).representation, "bits");
  assert.equal(typedArrayFor(parseDType("float32")).representation, "value");
});

test("sub-byte storage is packed unless padded", () => {
  const fp4 = parseDType("float4_e2m1fn");
  const fp6 = parseDType("float6_e2m3fn");
  assert.equal(isSubByte(fp4), true);
  assert.equal(isSubByte(parseDType("float8_e5m2")), false);
  assert.equal(storageBytes(fp4, 5, false), 3);
  assert.equal(storageBytes(fp4, 5, true), 5);
  assert.equal(storageBytes(fp6, 4, false), 3);
  assert.equal(storageBytes(parseDType("float32"), 5, false), 20);
});

test("invalid dtypes are BAD_DTYPE naming the field", () => {
  expectError(() => validateDType({ code: 18, bits: 8, lanes: 1 }), "BAD_DTYPE", "DLDataType.code");
  expectError(() => validateDType({ code: C.kDLFloat, bits: 0, lanes: 1 }), "BAD_DTYPE", "DLDataType.bits");
  expectError(() => validateDType({ code: C.kDLFloat, bits: 32, lanes: 0 }), "BAD_DTYPE", "DLDataType.lanes");
  expectError(() => validateDType({ code: C.kDLFloat4_e2m1fn, bits: 8, lanes: 1 }), "BAD_DTYPE", "DLDataType.bits");
  expectError(() => validateDType({ code: C.kDLFloat6_e3m2fn, bits: 4, lanes: 1 }), "BAD_DTYPE", "DLDataType.bits");
  expectError(() => validateDType({ code: C.kDLFloat8_e5m2, bits: 16, lanes: 1 }), "BAD_DTYPE", "DLDataType.bits");
  expectError(() => validateDType({ code: C.kDLBool, bits: 1, lanes: 1 }), "BAD_DTYPE", "DLDataType.bits");
  expectError(() => validateDType({ code: C.kDLFloat, bits: 24, lanes: 1 }, "x.dtype"), "BAD_DTYPE", "x.dtype.bits");
  for (const bad of [
    "float",
    "float33",
    "int7",
    "complex16",
    "bfloat32",
    "float8",
    "bool16",
    "float32x0",
    "Float32",
    "",
    "float32x70000",
  ]) {
    const err = expectError(() => parseDType(bad), "BAD_DTYPE", "dtype");
    assert.equal(err.value, bad);
  }
  expectError(() => toDType(42 as unknown as string), "BAD_DTYPE", "dtype");
});

test("toDType accepts objects and names; dtypeEquals", () => {
  const a = toDType("float32");
  const b = toDType({ code: 2, bits: 32, lanes: 1 });
  assert.ok(dtypeEquals(a, b));
  assert.ok(!dtypeEquals(a, toDType("float64")));
  assert.ok(Object.isFrozen(b));
});

test("dtypeOfTypedArray infers from the array class", () => {
  assert.equal(formatDType(dtypeOfTypedArray(new Float32Array(1))), "float32");
  assert.equal(formatDType(dtypeOfTypedArray(new BigInt64Array(1))), "int64");
  assert.equal(formatDType(dtypeOfTypedArray(new Uint8ClampedArray(1))), "uint8");
  assert.equal(formatDType(dtypeOfTypedArray(new Uint16Array(1))), "uint16");
  expectError(() => dtypeOfTypedArray(new DataView(new ArrayBuffer(4))), "BAD_DTYPE", "array");
});
