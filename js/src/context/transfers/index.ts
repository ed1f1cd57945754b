/**
 * GPU byte movement, one home (see device-transfers.ts):
 *   registry.ts          transfersFor(device): the one DeviceTransfers of each GPUDevice
 *   device-transfers.ts  DeviceTransfers: upload, readback, copy, clear of one device; the plan (measured defaults)
 *   read.ts              GPU → CPU in one submit, split into pieces copied out in order
 *   write.ts             CPU → GPU through writeBuffer or mapped MAP_WRITE staging, by size
 *   copy.ts              GPU → GPU copyBufferToBuffer and clearBuffer, checked first
 *   staging.ts           the read ring (handed out unmapped) and the write ring (handed out mapped)
 *   ring.ts              what both rings share: size classes, byte budget, what is out
 *   inflight.ts          pending transfers; a lost device rejects them all with DEVICE_LOST
 *   targets.ts           host memory of a transfer (view or wasm memory + address) and GPU byte ranges
 *   calibrate.ts         measured at setup: upload thresholds, staging made ready
 *   context-calls.ts     the room's calls: ctx.readback / readbackInto / upload / copyBuffer / clearBuffer / transferStats
 */
export {
  DEFAULT_TRANSFER_PLAN,
  DeviceTransfers,
  planFor,
  type TransferPlan,
  type TransferStats,
} from "./device-transfers.js";
export { existingTransfers, releaseTransfers, transfersFor } from "./registry.js";
export { checkCopy } from "./copy.js";
export {
  hostLength,
  hostView,
  resolveRange,
  type ByteRange,
  type CopyRange,
  type HostBytes,
  type ReadbackRange,
  type ReadbackTarget,
} from "./targets.js";
export type { ReadSink } from "./read.js";
export type { UploadPath } from "./write.js";
export type { RingStats } from "./staging.js";
