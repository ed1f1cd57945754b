/**
 * Pointers room: GPU pointers (a plain unsigned 32-bit number naming a
 * GPUBuffer), their tags, and what the table holds for each pointer.
 *
 *   pointer-format.ts  what a GPU pointer is: context tag + generation + slot; describe, format
 *   pointer-table.ts   the table that issues pointers and translates them in O(1)
 *   pointer-tags.ts    which tag a context's pointers carry (unique per live context through Web Locks)
 *   buffer-table.ts    GPU pointers → buffer entries, the translation fast path, giving buffers back;
 *                      the room's calls: registerGPUBuffer, gpuPointerToBuffer, gpuPointerInfo, freeWebGPU
 *   pointer-allocations.ts  allocWebGPU(Checked), lastAsyncError, set/getCacheMode, flush: allocations as pointers
 *   register-check.ts  registerGPUBuffer's asynchronous check that a buffer is live and the device's
 */
export {
  describeGPUPointer,
  randomPointerTag,
  GPU_POINTER_TAG_BITS,
  GPU_POINTER_GENERATION_BITS,
  GPU_POINTER_SLOT_BITS,
} from "./pointer-format.js";
export type { GPUPointer, PointerParts } from "./pointer-format.js";
export { claimPointerTag, POINTER_TAG_LOCK_PREFIX, type ClaimedTag, type LockManagerLike } from "./pointer-tags.js";
