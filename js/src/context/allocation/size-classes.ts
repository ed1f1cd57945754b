/**
 * Size classes of the `bucket` cache mode: the buffer size a request of
 * `nbytes` gets, so freed buffers can serve later requests of nearby sizes.
 *
 * ```text
 *   nbytes              class size
 *   0 .. 256            256                         (one class)
 *   257 .. 16 KiB       next power of two           512, 1 KiB, 2 KiB, … 16 KiB
 *   above 16 KiB        2^k · {1, 1.25, 1.5, 1.75}  20 KiB, 24 KiB, 28 KiB, 32 KiB, 40 KiB, …
 * ```
 *
 * - 256 bytes is WebGPU's `minStorageBufferOffsetAlignment` on most devices,
 *   and every class is a multiple of it (so of 16, the allocation alignment).
 * - Above 16 KiB a class wastes less than 25 % (four classes per doubling),
 *   below it less than half of at most 16 KiB.
 * - A class above the device's `maxBufferSize` is not used: the request then
 *   gets its exact 16-byte-rounded size (see `allocationSize`).
 */

/** Smallest bucket class, bytes. */
export const MIN_BUCKET_SIZE = 256;
/** Up to this size classes are powers of two; above it, four classes per power of two. */
export const FINE_BUCKET_THRESHOLD = 16 * 1024;
/** Classes per doubling above {@link FINE_BUCKET_THRESHOLD}. */
export const BUCKET_STEPS = 4;

/**
 * The bucket class size for `nbytes` (a safe integer >= 0). Always >= nbytes,
 * a multiple of 256, and the same for every nbytes of one class.
 */
export function bucketSize(nbytes: number): number {
  if (nbytes <= MIN_BUCKET_SIZE) return MIN_BUCKET_SIZE;
  // k with 2^k < nbytes <= 2^(k+1); log2 is only a first guess (rounding near powers of two).
  let k = Math.floor(Math.log2(nbytes - 1));
  while (2 ** k >= nbytes) k -= 1;
  while (2 ** (k + 1) < nbytes) k += 1;
  if (nbytes <= FINE_BUCKET_THRESHOLD) return 2 ** (k + 1);
  // Steps of 2^k / 4 between 2^k and 2^(k+1).
  const step = 2 ** k / BUCKET_STEPS;
  return 2 ** k + Math.ceil((nbytes - 2 ** k) / step) * step;
}
