/**
 * The DLPack element type (`DLDataType`): validation, names, sizes, and the
 * TypedArray that can hold it.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { DataTypeCode, dataTypeCodeName, isDataTypeCode } from "./constants.js";

/** A `DLDataType`: type code, bits per lane and lanes per element. */
export interface DType {
  /** One of {@link DataTypeCode} (uint8 in C). */
  readonly code: number;
  /** Bits per lane (uint8 in C): 8/16/32/64, or 4/6 for the sub-byte floats. */
  readonly bits: number;
  /** Lanes per element (uint16 in C); 1 for scalars. */
  readonly lanes: number;
}

/** Any TypedArray webdlpack produces (a `Float16Array`, where the runtime has one, is typed as this too). */
export type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/** A TypedArray class (`Float32Array`, `BigInt64Array`, …) as a value. */
export interface TypedArrayConstructorLike {
  readonly BYTES_PER_ELEMENT: number;
  readonly name: string;
  new (length: number): TypedArray;
  new (buffer: ArrayBufferLike, byteOffset?: number, length?: number): TypedArray;
}

/** Bit widths accepted per type code (sub-byte floats have exactly one). */
const ALLOWED_BITS: Readonly<Record<number, readonly number[]>> = {
  [DataTypeCode.kDLInt]: [1, 2, 4, 8, 16, 32, 64],
  [DataTypeCode.kDLUInt]: [1, 2, 4, 8, 16, 32, 64],
  [DataTypeCode.kDLFloat]: [16, 32, 64],
  [DataTypeCode.kDLOpaqueHandle]: [8, 16, 32, 64],
  [DataTypeCode.kDLBfloat]: [16],
  [DataTypeCode.kDLComplex]: [32, 64, 128],
  [DataTypeCode.kDLBool]: [8],
  [DataTypeCode.kDLFloat8_e3m4]: [8],
  [DataTypeCode.kDLFloat8_e4m3]: [8],
  [DataTypeCode.kDLFloat8_e4m3b11fnuz]: [8],
  [DataTypeCode.kDLFloat8_e4m3fn]: [8],
  [DataTypeCode.kDLFloat8_e4m3fnuz]: [8],
  [DataTypeCode.kDLFloat8_e5m2]: [8],
  [DataTypeCode.kDLFloat8_e5m2fnuz]: [8],
  [DataTypeCode.kDLFloat8_e8m0fnu]: [8],
  [DataTypeCode.kDLFloat6_e2m3fn]: [6],
  [DataTypeCode.kDLFloat6_e3m2fn]: [6],
  [DataTypeCode.kDLFloat4_e2m1fn]: [4],
};

/** Names of the fixed-width codes (the others are `int8`, `float32`, `complex64`, … by bit width). */
const FIXED_NAMES: Readonly<Record<number, string>> = {
  [DataTypeCode.kDLBool]: "bool",
  [DataTypeCode.kDLBfloat]: "bfloat16",
  [DataTypeCode.kDLFloat8_e3m4]: "float8_e3m4",
  [DataTypeCode.kDLFloat8_e4m3]: "float8_e4m3",
  [DataTypeCode.kDLFloat8_e4m3b11fnuz]: "float8_e4m3b11fnuz",
  [DataTypeCode.kDLFloat8_e4m3fn]: "float8_e4m3fn",
  [DataTypeCode.kDLFloat8_e4m3fnuz]: "float8_e4m3fnuz",
  [DataTypeCode.kDLFloat8_e5m2]: "float8_e5m2",
  [DataTypeCode.kDLFloat8_e5m2fnuz]: "float8_e5m2fnuz",
  [DataTypeCode.kDLFloat8_e8m0fnu]: "float8_e8m0fnu",
  [DataTypeCode.kDLFloat6_e2m3fn]: "float6_e2m3fn",
  [DataTypeCode.kDLFloat6_e3m2fn]: "float6_e3m2fn",
  [DataTypeCode.kDLFloat4_e2m1fn]: "float4_e2m1fn",
};

/** Prefixes of the variable-width codes: `int32` is code kDLInt with bits 32. */
const PREFIXES: Readonly<Record<number, string>> = {
  [DataTypeCode.kDLInt]: "int",
  [DataTypeCode.kDLUInt]: "uint",
  [DataTypeCode.kDLFloat]: "float",
  [DataTypeCode.kDLOpaqueHandle]: "handle",
  [DataTypeCode.kDLComplex]: "complex",
};

const NAME_TO_FIXED = new Map<string, DType>(
  Object.entries(FIXED_NAMES).map(([code, name]) => {
    const c = Number(code);
    return [name, Object.freeze({ code: c, bits: ALLOWED_BITS[c]![0]!, lanes: 1 })];
  }),
);
const PREFIX_TO_CODE = new Map<string, number>(Object.entries(PREFIXES).map(([code, p]) => [p, Number(code)]));

/**
 * Check that a dtype is one DLPack 1.1 defines: known code, a bit width that
 * code allows (4 for fp4, 6 for fp6, 8 for float8/bool, 16 for bfloat16, …),
 * and 1 ≤ lanes ≤ 65535. Throws `BAD_DTYPE` naming `${field}.code|bits|lanes`
 * (or `field` if `dtype` is not an object).
 */
export function validateDType(dtype: DType, field = "DLDataType"): DType {
  if (dtype === null || typeof dtype !== "object") {
    throw new WebDLPackError("BAD_DTYPE", "dtype must be {code, bits, lanes}", {
      field,
      value: describeValue(dtype),
      expected: 'a DType such as parseDType("float32")',
    });
  }
  const { code, bits, lanes } = dtype;
  if (!Number.isInteger(code) || !isDataTypeCode(code)) {
    throw new WebDLPackError("BAD_DTYPE", "unknown DLDataType code", {
      field: `${field}.code`,
      value: code,
      expected: "a DLDataTypeCode from dlpack.h (0..17)",
    });
  }
  const allowed = ALLOWED_BITS[code]!;
  if (!Number.isInteger(bits) || !allowed.includes(bits)) {
    throw new WebDLPackError("BAD_DTYPE", `unsupported bit width for ${dataTypeCodeName(code)}`, {
      field: `${field}.bits`,
      value: bits,
      expected: `one of ${allowed.join(", ")}`,
    });
  }
  if (!Number.isInteger(lanes) || lanes < 1 || lanes > 0xffff) {
    throw new WebDLPackError("BAD_DTYPE", "lanes out of range", {
      field: `${field}.lanes`,
      value: lanes,
      expected: "1 <= lanes <= 65535",
    });
  }
  return dtype;
}

/**
 * Parse a dtype name: `int8`…`int64`, `uint8`…`uint64`, `float16|32|64`,
 * `bfloat16`, `complex32|64|128`, `bool`, `handle32|64`, every float8/6/4
 * name (`float8_e4m3fn`, `float6_e2m3fn`, `float4_e2m1fn`, …), with an
 * optional lane suffix `x<lanes>` (`float32x4`). Throws `BAD_DTYPE` otherwise.
 */
export function parseDType(name: string, field = "dtype"): DType {
  const bad = (): WebDLPackError =>
    new WebDLPackError("BAD_DTYPE", "unknown dtype name", {
      field,
      value: name,
      expected: 'a name such as "float32", "int8", "bool", "bfloat16", "complex64", "float8_e4m3fn", "float32x4"',
    });
  if (typeof name !== "string") throw bad();
  const parseBase = (base: string, lanes: number): DType | undefined => {
    const fixed = NAME_TO_FIXED.get(base);
    if (fixed !== undefined) return { code: fixed.code, bits: fixed.bits, lanes };
    const m = /^([a-z]+)([0-9]+)$/.exec(base);
    const code = m === null ? undefined : PREFIX_TO_CODE.get(m[1]!);
    return code === undefined ? undefined : { code, bits: Number(m![2]), lanes };
  };
  // The whole name first ("complex64" contains an "x"), then "<base>x<lanes>".
  let result = parseBase(name, 1);
  if (result === undefined) {
    const split = /^(.+)x([0-9]+)$/.exec(name);
    if (split !== null) result = parseBase(split[1]!, Number(split[2]));
  }
  if (result === undefined) throw bad();
  try {
    return Object.freeze(validateDType(result, field));
  } catch (err) {
    throw new WebDLPackError("BAD_DTYPE", "dtype name names no valid DLPack type", {
      field,
      value: name,
      expected: "a valid bit width and 1 <= lanes <= 65535",
      cause: err,
    });
  }
}

/** The name of a (valid) dtype, e.g. `"float32"`, `"bfloat16"`, `"float8_e5m2"`, `"int8x4"`. */
export function formatDType(dtype: DType): string {
  validateDType(dtype);
  const base = FIXED_NAMES[dtype.code] ?? `${PREFIXES[dtype.code]!}${dtype.bits}`;
  return dtype.lanes === 1 ? base : `${base}x${dtype.lanes}`;
}

/** Accept a dtype object or name; return a validated, frozen {@link DType}. */
export function toDType(dtype: DType | string, field = "dtype"): DType {
  if (typeof dtype === "string") return parseDType(dtype, field);
  if (dtype === null || typeof dtype !== "object") {
    throw new WebDLPackError("BAD_DTYPE", "dtype must be a name or {code, bits, lanes}", {
      field,
      value: describeValue(dtype),
      expected: 'a dtype name such as "float32", or {code, bits, lanes}',
    });
  }
  const { code, bits, lanes } = dtype;
  const small = (code & 0xff) === code && (bits & 0xff) === bits && (lanes & 0xffff) === lanes;
  const key = small ? code + bits * 0x100 + lanes * 0x10000 : -1;
  const known = small ? canonicalDTypes.get(key) : undefined;
  if (known !== undefined) return known;
  const checked = Object.freeze({ ...validateDType({ code, bits, lanes }, field) });
  if (small && canonicalDTypes.size < 1024) canonicalDTypes.set(key, checked);
  return checked;
}

/** Validated dtypes by `code | bits << 8 | lanes << 16`, so decoding a struct does not re-check a known dtype. */
const canonicalDTypes = new Map<number, DType>();

/** True if two dtypes are the same code, bits and lanes. */
export function dtypeEquals(a: DType, b: DType): boolean {
  return a.code === b.code && a.bits === b.bits && a.lanes === b.lanes;
}

/** Bits one element takes: `bits * lanes`. */
export function elementBits(dtype: DType): number {
  return dtype.bits * dtype.lanes;
}

/** Bytes one element takes when each element is byte-aligned: `(bits * lanes + 7) >> 3`. */
export function itemsize(dtype: DType): number {
  return (dtype.bits * dtype.lanes + 7) >> 3;
}

/**
 * True if elements of this dtype are smaller than / not a whole number of
 * bytes (fp4, fp6, int4, …). Such tensors are bit-packed unless the
 * `IS_SUBBYTE_TYPE_PADDED` flag says each element takes {@link itemsize} bytes.
 */
export function isSubByte(dtype: DType): boolean {
  return (dtype.bits * dtype.lanes) % 8 !== 0;
}

/**
 * Bytes that `count` contiguous elements occupy: `count * itemsize` when
 * byte-aligned or padded, else the packed size `ceil(count * bits * lanes / 8)`.
 * Throws BAD_DTYPE for an invalid dtype, INVALID_ARGUMENT (field `count`) unless
 * `count` is a non-negative safe integer, SIZE_OVERFLOW if the size is not.
 */
export function storageBytes(dtype: DType, count: number, subbytePadded: boolean): number {
  validateDType(dtype, "dtype");
  if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "element count must be a non-negative integer", {
      field: "count",
      value: count,
      expected: "an integer 0 <= count <= 2^53 - 1",
    });
  }
  const packed = isSubByte(dtype) && subbytePadded !== true;
  const per = packed ? elementBits(dtype) : itemsize(dtype);
  const total = count * per; // bits when packed, else bytes
  if (!Number.isSafeInteger(total)) {
    throw new WebDLPackError("SIZE_OVERFLOW", `size in ${packed ? "bits" : "bytes"} is not exactly representable`, {
      field: "count",
      value: count,
      expected: `count × ${per} <= 2^53 - 1`,
    });
  }
  return packed ? Math.ceil(total / 8) : total;
}

/** How a dtype maps onto a TypedArray. */
export interface TypedArrayInfo {
  /** The TypedArray class. */
  readonly ctor: TypedArrayConstructorLike;
  /** TypedArray elements per tensor element (2 × lanes for complex, lanes otherwise). */
  readonly perElement: number;
  /**
   * `"value"`: each TypedArray element is the number itself (complex: real,
   * imaginary interleaved). `"bits"`: the raw bit pattern (bfloat16, float8,
   * float16 without `Float16Array`, bool as 0/1 bytes is `"value"`).
   */
  readonly representation: "value" | "bits";
}

/** The runtime's `Float16Array` class, or undefined (Node 20 has none; recent Chromium has it). */
export const Float16ArrayCtor: TypedArrayConstructorLike | undefined = (
  globalThis as unknown as { Float16Array?: TypedArrayConstructorLike }
).Float16Array;

/**
 * The TypedArray for a dtype. Table (per lane; lanes multiply `perElement`):
 *
 * - int8/16/32 → Int8Array/Int16Array/Int32Array; int64 → BigInt64Array
 * - uint8/16/32 → Uint8Array/Uint16Array/Uint32Array; uint64 → BigUint64Array
 * - float32/64 → Float32Array/Float64Array
 * - float16 → `Float16Array` if the runtime has one (values), else Uint16Array (raw bits)
 * - bfloat16 → Uint16Array (raw bits; no runtime has a bfloat16 array)
 * - complex64/128 → Float32Array/Float64Array with 2 entries per element (re, im);
 *   complex32 → as float16, 2 entries per element
 * - bool → Uint8Array (0 or 1)
 * - float8_* → Uint8Array (raw bits)
 * - lanes narrower than a byte (fp4, fp6, int4, …) → Uint8Array over the raw
 *   storage bytes; if one element is not a whole number of bytes (packed
 *   storage) `perElement` is 1 and only meaningful when padded
 *
 * Opaque handles have no TypedArray: `BAD_DTYPE`.
 */
export function typedArrayFor(dtype: DType, field = "dtype"): TypedArrayInfo {
  if (dtype === null || typeof dtype !== "object") validateDType(dtype, field); // throws BAD_DTYPE naming `field`
  const { code, bits, lanes } = dtype;
  const key = code + bits * 0x100 + lanes * 0x10000;
  const known = typedArrayInfos.get(key);
  if (known !== undefined && known.code === code && known.bits === bits && known.lanes === lanes) return known.info;
  const info = Object.freeze(typedArrayInfoOf(dtype, field));
  if (typedArrayInfos.size < 1024) typedArrayInfos.set(key, { code, bits, lanes, info });
  return info;
}

/** {@link typedArrayFor} results by `code | bits << 8 | lanes << 16` (the triple is kept to reject odd inputs). */
const typedArrayInfos = new Map<number, { code: number; bits: number; lanes: number; info: TypedArrayInfo }>();

function typedArrayInfoOf(dtype: DType, field: string): TypedArrayInfo {
  validateDType(dtype, field);
  const { code, bits, lanes } = dtype;
  const ints: Record<number, TypedArrayConstructorLike> = {
    8: Int8Array,
    16: Int16Array,
    32: Int32Array,
    64: BigInt64Array,
  };
  const uints: Record<number, TypedArrayConstructorLike> = {
    8: Uint8Array,
    16: Uint16Array,
    32: Uint32Array,
    64: BigUint64Array,
  };
  const floats: Record<number, TypedArrayConstructorLike> = { 32: Float32Array, 64: Float64Array };
  const half = (per: number): TypedArrayInfo =>
    Float16ArrayCtor !== undefined
      ? { ctor: Float16ArrayCtor, perElement: per, representation: "value" }
      : { ctor: Uint16Array, perElement: per, representation: "bits" };
  if (code !== DataTypeCode.kDLOpaqueHandle && (bits < 8 || isSubByte(dtype))) {
    // Narrow lanes: raw storage bytes. Packed sub-byte tensors have no whole byte per element.
    return { ctor: Uint8Array, perElement: isSubByte(dtype) ? 1 : (bits * lanes) / 8, representation: "bits" };
  }
  switch (code) {
    case DataTypeCode.kDLInt:
      if (ints[bits]) return { ctor: ints[bits]!, perElement: lanes, representation: "value" };
      break;
    case DataTypeCode.kDLUInt:
      if (uints[bits]) return { ctor: uints[bits]!, perElement: lanes, representation: "value" };
      break;
    case DataTypeCode.kDLFloat:
      if (bits === 16) return half(lanes);
      return { ctor: floats[bits]!, perElement: lanes, representation: "value" };
    case DataTypeCode.kDLBfloat:
      return { ctor: Uint16Array, perElement: lanes, representation: "bits" };
    case DataTypeCode.kDLComplex:
      if (bits === 32) return half(2 * lanes);
      return { ctor: floats[bits / 2]!, perElement: 2 * lanes, representation: "value" };
    case DataTypeCode.kDLBool:
      return { ctor: Uint8Array, perElement: lanes, representation: "value" };
    case DataTypeCode.kDLOpaqueHandle:
      break;
    default:
      // Every float8 code: one raw byte per lane.
      return { ctor: Uint8Array, perElement: lanes, representation: "bits" };
  }
  throw new WebDLPackError("BAD_DTYPE", "this dtype has no TypedArray", {
    field,
    value: formatDType(dtype),
    expected: "a numeric, bool or float8/6/4 dtype (not an opaque handle or a sub-byte int with whole lanes)",
  });
}

/**
 * The dtype a TypedArray holds: Float32Array → float32, Int32Array → int32,
 * BigInt64Array → int64, Uint8Array/Uint8ClampedArray → uint8,
 * Float16Array → float16, … Throws `BAD_DTYPE` for DataView or other views.
 */
export function dtypeOfTypedArray(array: ArrayBufferView, field = "array"): DType {
  const name = array?.constructor?.name;
  const table: Record<string, string> = {
    Int8Array: "int8",
    Uint8Array: "uint8",
    Uint8ClampedArray: "uint8",
    Int16Array: "int16",
    Uint16Array: "uint16",
    Int32Array: "int32",
    Uint32Array: "uint32",
    Float16Array: "float16",
    Float32Array: "float32",
    Float64Array: "float64",
    BigInt64Array: "int64",
    BigUint64Array: "uint64",
  };
  const dt = name === undefined ? undefined : table[name];
  if (dt === undefined) {
    throw new WebDLPackError("BAD_DTYPE", "cannot infer a dtype from this view; pass dtype", {
      field,
      value: name ?? typeof array,
      expected: "a TypedArray (Float32Array, Int32Array, …) or an explicit dtype",
    });
  }
  return parseDType(dt);
}
