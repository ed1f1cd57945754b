/**
 * Allocation room: the cache of freed GPU buffers, size classes, and
 * destroying them without overwhelming the GPU process (creating one: ground/).
 *
 *   size-classes.ts      the size classes of the bucket cache mode
 *   buffer-cache.ts      cache modes and the per-device cache of freed buffers
 *   destroy-throttle.ts  destroys that do not overwhelm the GPU process; lazy release
 *   device-allocator.ts  per-device allocation state (mode, cache, throttle, counters)
 *   allocators.ts        per-device allocators and their cache-mode / limit settings
 */
export { DEFAULT_CACHE_MODE, DEFAULT_CACHE_LIMITS } from "./buffer-cache.js";
export type { CacheLimits } from "./buffer-cache.js";
export { DEFAULT_THROTTLE_LIMITS } from "./destroy-throttle.js";
export type { ThrottleLimits } from "./destroy-throttle.js";
export { MAX_OWNER_COUNT_ROWS } from "./device-allocator.js";
export { bucketSize, MIN_BUCKET_SIZE, FINE_BUCKET_THRESHOLD, BUCKET_STEPS } from "./size-classes.js";
