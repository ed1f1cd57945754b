/**
 * The page-wide WebDLPackContext: WebGPU devices, the GPU pointer table, the
 * caching allocator and the lifetime ledger; and the page-wide list of Python
 * bridges (python-handoff.ts) behind `tensor.toPython()`.
 *
 *   global.ts            the singleton at globalThis[Symbol.for("webdlpack.context")], version check
 *   get-context.ts       getContext(), the protocol version
 *   protocol.ts          the members each protocol minor requires (docs/spec.md C1, G4)
 *   context.ts           the class behind the context
 *   default-device.ts    setup(): device 0, made once, again after loss
 *   buffer-table.ts      GPU pointers → buffer entries, the translation fast path, giving buffers back
 *   allocators.ts        per-device allocators and their cache-mode / limit settings
 *   stats.ts             ctx.stats(): rows per device and per owner
 *   devices.ts           device ids, registration, device loss
 *   device-guard.ts      per-owner device guards (a framework's destroy() drops only its reference)
 *   setup.ts             adapter/device request and the setup config
 *   allocation.ts        buffer creation under error scopes, usage, size rounding
 *   size-classes.ts      the size classes of the bucket cache mode
 *   buffer-cache.ts      cache modes and the per-device cache of freed buffers
 *   destroy-throttle.ts  destroys that do not overwhelm the GPU process; lazy release
 *   device-allocator.ts  per-device allocation state (mode, cache, throttle, counters)
 *   transfer-calls.ts    ctx.readback / readbackInto / upload / copyBuffer / clearBuffer / transferStats
 *   transfers/           GPU byte movement, one home: upload, readback, GPU copy, clear; staging rings; loss
 *   ledger.ts            lifetime ledger: tracking, scopes, leak reports
 *   ledger-entry.ts      one ledger entry (exactly-once release) and the report shapes
 *   pointer-table.ts     GPU pointers: context tag + generation + slot, O(1) translation
 *   pointer-tags.ts      which tag a context's pointers carry (unique per live context through Web Locks)
 *   register-check.ts    registerGPUBuffer's asynchronous check that a buffer is live and the device's
 *   types.ts             the public interface and option types
 *   track-tensor.ts      owning WebGPU tensors in the ledger
 *   python-handoff.ts    the page-wide list of Python bridges (tensor.toPython())
 */
export { getContext, CONTEXT_PROTOCOL } from "./get-context.js";
export { CONTEXT_GLOBAL_KEY } from "./global.js";
export { CONTEXT_MEMBERS_ADDED, contextMembers, missingContextMembers } from "./protocol.js";
export type { SharedContextRecord } from "./global.js";
export type {
  WebDLPackContext,
  AllocOptions,
  RegisterBufferOptions,
  GPUPointerInfo,
  ContextStats,
  DeviceStats,
  OwnerStats,
  ContextProtocol,
  CacheModeOptions,
  DeviceOptions,
} from "./types.js";
export type { SetupConfig, DeviceInfo, LimitsSummary } from "./setup.js";
export { ML_LIMITS, ML_FEATURES } from "./setup.js";
export type { AdapterInfoSummary, DeviceLostEvent, DeviceLostListener } from "./devices.js";
export { GPUUsage, DEFAULT_GPU_USAGE, GPU_ALLOCATION_ALIGNMENT } from "./allocation.js";
export { CACHE_MODES, DEFAULT_CACHE_MODE, DEFAULT_CACHE_LIMITS } from "./buffer-cache.js";
export type { CacheMode, CacheLimits } from "./buffer-cache.js";
export { DEFAULT_THROTTLE_LIMITS } from "./destroy-throttle.js";
export { MAX_OWNER_COUNT_ROWS } from "./device-allocator.js";
export type { ThrottleLimits } from "./destroy-throttle.js";
export { bucketSize, MIN_BUCKET_SIZE, FINE_BUCKET_THRESHOLD, BUCKET_STEPS } from "./size-classes.js";
export { unwrapDevice, DEVICE_GUARD_TARGET } from "./device-guard.js";
export { LedgerEntry, ownerLabel } from "./ledger-entry.js";
export type {
  LedgerKind,
  ReleaseReason,
  TrackOptions,
  LedgerEntryInfo,
  LedgerEntrySummary,
  LeakReport,
  LedgerDebug,
} from "./ledger-entry.js";
export type { Ledger } from "./ledger.js";
export {
  transfersFor,
  type CopyRange,
  type ReadbackRange,
  type ReadbackTarget,
  type TransferPlan,
  type TransferStats,
  type UploadPath,
} from "./transfers/index.js";
export {
  describeGPUPointer,
  randomPointerTag,
  GPU_POINTER_TAG_BITS,
  GPU_POINTER_GENERATION_BITS,
  GPU_POINTER_SLOT_BITS,
} from "./pointer-table.js";
export { claimPointerTag, POINTER_TAG_LOCK_PREFIX, type ClaimedTag, type LockManagerLike } from "./pointer-tags.js";
export type { GPUPointer, PointerParts } from "./pointer-table.js";
export {
  findPythonHandoff,
  registerPythonHandoff,
  unregisterPythonHandoff,
  PYTHON_HANDOFFS_KEY,
  type PythonHandoff,
} from "./python-handoff.js";
