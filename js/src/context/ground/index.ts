/**
 * Ground room: what every other room stands on — creating a GPU buffer, with
 * its metering by owner, and the facts of a buffer read once. It imports no
 * other room.
 *
 *   meter.ts         counting one device's buffers by owner (its createBuffer, GPUBuffer destroy)
 *   create.ts        buffer creation under error scopes, usage flags, size rounding, argument checks
 *   buffer-facts.ts  a GPUBuffer's size and usage, read once (the binding's getters cost µs per transfer)
 */
export {
  createBufferAs,
  createBufferFor,
  countedAlive,
  meterOf,
  DeviceMeter,
  PAGE_OWNER,
  WEBDLPACK_OWNER,
  type OwnerBytes,
} from "./meter.js";
export { GPUUsage, DEFAULT_GPU_USAGE, GPU_ALLOCATION_ALIGNMENT, isGPUBuffer } from "./create.js";
export { bufferFacts, type KnownBuffer } from "./buffer-facts.js";
