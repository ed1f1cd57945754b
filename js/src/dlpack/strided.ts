/**
 * Copying a strided tensor (any strides, negative or zero included) into a
 * C-contiguous byte array.
 */
import { WebDLPackError } from "../errors.js";
import { countElements } from "./extent.js";

/**
 * Gather the elements of a strided tensor, in row-major order, into `dst`.
 *
 * @param src bytes of the memory holding the tensor
 * @param first index in `src` of element `[0, …, 0]` (i.e. data + byte_offset)
 * @param shape extents
 * @param strides strides in elements (may be negative or zero)
 * @param itemsize bytes per element (byte-aligned dtypes only)
 * @param dst destination, at least `count * itemsize` bytes
 * @throws WebDLPackError OUT_OF_BOUNDS if an element would fall outside `src`
 *   (callers validate first; this is a last guard, checked before copying)
 */
export function gatherStrided(
  src: Uint8Array,
  first: number,
  shape: readonly number[],
  strides: readonly number[],
  itemsize: number,
  dst: Uint8Array,
): void {
  const count = countElements(shape, "shape");
  if (count === 0) return;
  if (dst.length < count * itemsize) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "destination too small", {
      field: "dst",
      value: dst.length,
      expected: `>= ${count * itemsize} bytes`,
    });
  }
  let low = 0;
  let high = 0;
  for (let i = 0; i < shape.length; i++) {
    const reach = (shape[i]! - 1) * strides[i]!;
    if (reach < 0) low += reach;
    else high += reach;
  }
  if (first + low * itemsize < 0 || first + (high + 1) * itemsize > src.length) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "strided tensor reaches outside its memory", {
      field: "strides",
      value: strides.join(","),
      expected: `all bytes inside [0, ${src.length})`,
    });
  }
  const ndim = shape.length;
  if (ndim === 0) {
    dst.set(src.subarray(first, first + itemsize), 0);
    return;
  }
  const inner = shape[ndim - 1]!;
  const innerStride = strides[ndim - 1]! * itemsize;
  const index = new Array<number>(ndim - 1).fill(0);
  let out = 0;
  let rowStart = first;
  for (;;) {
    if (innerStride === itemsize) {
      dst.set(src.subarray(rowStart, rowStart + inner * itemsize), out);
      out += inner * itemsize;
    } else {
      let p = rowStart;
      for (let j = 0; j < inner; j++) {
        for (let b = 0; b < itemsize; b++) dst[out++] = src[p + b]!;
        p += innerStride;
      }
    }
    // Advance the odometer over the outer dimensions.
    let d = ndim - 2;
    while (d >= 0) {
      index[d] = index[d]! + 1;
      rowStart += strides[d]! * itemsize;
      if (index[d]! < shape[d]!) break;
      rowStart -= shape[d]! * strides[d]! * itemsize;
      index[d] = 0;
      d--;
    }
    if (d < 0) return;
  }
}
