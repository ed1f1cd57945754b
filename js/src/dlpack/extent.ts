/**
 * Element counts and the byte range a strided tensor can reach, computed
 * without ever losing precision: every intermediate is checked to stay a safe
 * integer (≤ 2^53 − 1), else `SIZE_OVERFLOW`.
 */
import { WebDLPackError } from "../errors.js";
import { elementBits, isSubByte, itemsize, type DType } from "./dtype.js";

/** The size and reach of a tensor. Byte positions are relative to `data + byteOffset`. */
export interface TensorExtent {
  /** Number of elements (product of the shape; 1 for 0-d). */
  readonly count: number;
  /** Bytes the elements occupy when stored contiguously (packed for sub-byte dtypes unless padded). */
  readonly nbytes: number;
  /** Lowest byte any element touches (≤ 0 when strides are negative); 0 if count is 0. */
  readonly lowByte: number;
  /** One past the highest byte any element touches; 0 if count is 0. */
  readonly highByte: number;
  /** True if the strides (or null strides) describe C-contiguous, row-major order. */
  readonly contiguous: boolean;
}

function safe(value: number, field: string, what: string): number {
  if (!Number.isSafeInteger(value)) {
    throw new WebDLPackError("SIZE_OVERFLOW", `${what} is not exactly representable`, {
      field,
      value,
      expected: "|value| <= 2^53 - 1",
    });
  }
  return value;
}

/** C-contiguous (row-major) strides, in elements, for `shape`. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = step;
    step *= Math.max(shape[i]!, 1);
  }
  return strides;
}

/** Product of the shape, with an overflow check. Dimensions must already be non-negative safe integers. */
export function elementCount(shape: readonly number[], field = "DLTensor.shape"): number {
  let count = 1;
  for (const d of shape) if (d === 0) return 0;
  for (const d of shape) count = safe(count * d, field, "element count");
  return count;
}

/**
 * Count, contiguous byte size and reachable byte range of a tensor. Shape
 * entries must be non-negative safe integers and strides safe integers
 * (validate first); this checks every product and sum for overflow.
 * `field` prefixes the names in errors (default `"DLTensor"`).
 */
export function computeExtent(
  shape: readonly number[],
  strides: readonly number[] | null,
  dtype: DType,
  subbytePadded = false,
  field = "DLTensor",
): TensorExtent {
  const count = elementCount(shape, `${field}.shape`);
  const packed = isSubByte(dtype) && !subbytePadded;
  const nbytes = packed
    ? Math.ceil(safe(count * elementBits(dtype), `${field}.shape`, "size in bits") / 8)
    : safe(count * itemsize(dtype), `${field}.shape`, "size in bytes");
  if (count === 0) return { count, nbytes, lowByte: 0, highByte: 0, contiguous: true };

  const st = strides ?? contiguousStrides(shape);
  let low = 0; // lowest element index reached
  let high = 0; // highest element index reached
  let contiguous = true;
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    const d = shape[i]!;
    const s = st[i]!;
    const reach = safe((d - 1) * s, `${field}.strides[${i}]`, "stride × (dim − 1)");
    if (reach < 0) low = safe(low + reach, `${field}.strides`, "lowest element offset");
    else high = safe(high + reach, `${field}.strides`, "highest element offset");
    if (d !== 1 && s !== expected) contiguous = false;
    expected *= d;
  }
  let lowByte: number;
  let highByte: number;
  if (packed) {
    const bits = elementBits(dtype);
    lowByte = Math.floor(safe(low * bits, `${field}.strides`, "lowest bit offset") / 8);
    highByte = Math.ceil(safe((high + 1) * bits, `${field}.strides`, "highest bit offset") / 8);
  } else {
    const size = itemsize(dtype);
    lowByte = safe(low * size, `${field}.strides`, "lowest byte offset");
    highByte = safe((high + 1) * size, `${field}.strides`, "highest byte offset");
  }
  return { count, nbytes, lowByte, highByte, contiguous };
}
