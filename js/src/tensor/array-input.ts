/**
 * Checks of the array {@link Tensor.fromTypedArray} wraps (internal): that
 * its ArrayBuffer is still attached, and that a dtype given for a TypedArray
 * is one its elements are stored as (no silent reinterpretation of bytes).
 */
import { DataTypeCode, dtypeOfTypedArray, formatDType, typedArrayFor, type DType } from "../dlpack/index.js";
import { WebDLPackError } from "../errors.js";

/**
 * True if `buffer` was detached (transferred to a worker, `transfer()`ed, …).
 * Uses `ArrayBuffer.prototype.detached` where the runtime has it; else a
 * zero-length view, which only a detached buffer refuses.
 */
export function isDetached(buffer: ArrayBufferLike): boolean {
  const flag = (buffer as { detached?: unknown }).detached;
  if (typeof flag === "boolean") return flag;
  if (buffer.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** Throw INVALID_ARGUMENT (field `array`) if `buffer`, the bytes of `array`, is detached. */
export function checkAttached(buffer: ArrayBufferLike, array: ArrayBufferView | ArrayBuffer): void {
  if (!isDetached(buffer)) return;
  throw new WebDLPackError(
    "INVALID_ARGUMENT",
    "the array's ArrayBuffer is detached (transferred); its bytes are gone",
    {
      field: "array",
      value: `${array.constructor?.name ?? "an array"} over a detached ArrayBuffer`,
      expected: "a TypedArray whose ArrayBuffer is not detached/transferred",
    },
  );
}

/** The TypedArray class name a view's elements are, with Uint8ClampedArray counted as Uint8Array. */
function elementClass(array: ArrayBufferView): string {
  const name = array.constructor?.name ?? "";
  return name === "Uint8ClampedArray" ? "Uint8Array" : name;
}

/** float16 and complex32: stored as Float16Array values or Uint16Array bits, whichever the runtime has. */
function isHalfFamily(dtype: DType): boolean {
  return (
    (dtype.code === DataTypeCode.kDLFloat && dtype.bits === 16) ||
    (dtype.code === DataTypeCode.kDLComplex && dtype.bits === 32)
  );
}

/**
 * True if `dtype`'s elements are stored as `array`'s element type: the
 * TypedArray {@link typedArrayFor} gives for `dtype` (float32 and complex64 →
 * Float32Array, bool and float8 → Uint8Array, bfloat16 → Uint16Array, …;
 * float16 either Float16Array or Uint16Array). A DataView has no element type:
 * any dtype matches it.
 */
export function storesDType(array: ArrayBufferView, dtype: DType): boolean {
  if (array instanceof DataView) return true;
  const name = elementClass(array);
  if (isHalfFamily(dtype)) return name === "Uint16Array" || name === "Float16Array";
  let storedAs: string;
  try {
    storedAs = typedArrayFor(dtype).ctor.name;
  } catch {
    return false; // an opaque handle: no TypedArray holds it
  }
  return storedAs === name;
}

/**
 * Throw BAD_DTYPE (field `dtype`) if `dtype` is not stored as `array`'s
 * element type (see {@link storesDType}) and the caller did not opt in to
 * reinterpreting the bytes with `reinterpret: true`.
 */
export function checkElementType(array: ArrayBufferView, dtype: DType, reinterpret: boolean): void {
  if (reinterpret || storesDType(array, dtype)) return;
  const cls = elementClass(array);
  const own = dtypeOfTypedArray(array);
  const want = formatDType(dtype);
  throw new WebDLPackError(
    "BAD_DTYPE",
    `a ${cls} holds ${formatDType(own)}, not ${want}; its bytes are not reinterpreted unless asked`,
    {
      field: "dtype",
      value: want,
      expected: `${formatDType(own)} (or another dtype stored as ${cls}), or {reinterpret: true} to view the ${cls}'s bytes as ${want}`,
    },
  );
}
