/**
 * Element counts and the byte range a strided tensor can reach, computed
 * without ever losing precision: every intermediate is checked to stay a safe
 * integer (≤ 2^53 − 1), else `SIZE_OVERFLOW`.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { MAX_NDIM } from "./constants.js";
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

/**
 * Throw unless `shape` is an array (BAD_SHAPE naming `shapeField`) of at most
 * MAX_NDIM entries (BAD_NDIM naming `ndimField`). Its entries are checked by
 * {@link checkShapeDims}, which callers run when their other fields are checked.
 */
export function checkShapeArray(
  shape: unknown,
  shapeField: string,
  ndimField: string,
): asserts shape is readonly unknown[] {
  if (!Array.isArray(shape)) {
    throw new WebDLPackError("BAD_SHAPE", "shape must be an array of integers", {
      field: shapeField,
      value: describeValue(shape),
      expected: "an array of integers >= 0",
    });
  }
  if (shape.length > MAX_NDIM) {
    throw new WebDLPackError("BAD_NDIM", "too many dimensions", {
      field: ndimField,
      value: shape.length,
      expected: `0 <= ndim <= ${MAX_NDIM}`,
    });
  }
}

/**
 * Throw unless every entry of `shape` is a non-negative safe integer:
 * BAD_SHAPE (not an integer, or negative) or SIZE_OVERFLOW (above 2^53 − 1),
 * naming `${field}[i]`. `shape` must already be an array.
 */
export function checkShapeDims(shape: readonly unknown[], field: string): void {
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (typeof d !== "number" || !Number.isInteger(d) || d < 0) {
      throw new WebDLPackError("BAD_SHAPE", "dimension must be a non-negative integer", {
        field: `${field}[${i}]`,
        value: d,
        expected: ">= 0",
      });
    }
    if (!Number.isSafeInteger(d)) {
      throw new WebDLPackError("SIZE_OVERFLOW", "dimension too large", {
        field: `${field}[${i}]`,
        value: d,
        expected: "<= 2^53 - 1",
      });
    }
  }
}

/** BAD_SHAPE naming `field` unless `shape` is an array of non-negative safe integers (see {@link checkShapeDims}). */
function checkShape(shape: unknown, field: string): asserts shape is readonly number[] {
  if (!Array.isArray(shape)) {
    throw new WebDLPackError("BAD_SHAPE", "shape must be an array of integers", {
      field,
      value: describeValue(shape),
      expected: "an array of non-negative integers",
    });
  }
  checkShapeDims(shape, field);
}

/**
 * C-contiguous (row-major) strides, in elements, for `shape`. Checks its
 * input: BAD_SHAPE if `shape` is not an array of non-negative integers,
 * SIZE_OVERFLOW if a stride is not exactly representable.
 */
export function contiguousStrides(shape: readonly number[], field = "shape"): number[] {
  checkShape(shape, field);
  const strides = rowMajorStrides(shape);
  for (let i = 0; i < strides.length; i++) safe(strides[i]!, `${field}[${i}]`, "stride");
  return strides;
}

/**
 * {@link contiguousStrides} without the input checks, for the codec's hot
 * paths: `shape` must already be validated (non-negative safe integers
 * whose product is safe). Internal: not re-exported by the package.
 */
export function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = step;
    step *= Math.max(shape[i]!, 1);
  }
  return strides;
}

/**
 * Product of the shape (1 for `[]`). Checks its input: BAD_SHAPE if `shape`
 * is not an array of non-negative integers, SIZE_OVERFLOW if the product is
 * not exactly representable. `field` names the shape in errors.
 */
export function elementCount(shape: readonly number[], field = "shape"): number {
  checkShape(shape, field);
  return countElements(shape, field);
}

/**
 * {@link elementCount} without the input checks (the product is still
 * checked for overflow), for the codec's hot paths: dimensions must already
 * be non-negative safe integers. Internal: not re-exported by the package.
 */
export function countElements(shape: readonly number[], field = "DLTensor.shape"): number {
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
  const count = countElements(shape, `${field}.shape`);
  const packed = isSubByte(dtype) && !subbytePadded;
  const nbytes = packed
    ? Math.ceil(safe(count * elementBits(dtype), `${field}.shape`, "size in bits") / 8)
    : safe(count * itemsize(dtype), `${field}.shape`, "size in bytes");
  if (count === 0) return { count, nbytes, lowByte: 0, highByte: 0, contiguous: true };

  const st = strides ?? rowMajorStrides(shape);
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
