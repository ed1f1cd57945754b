/**
 * The public shape of the page-wide context. Code outside this folder (and
 * other copies of webdlpack on the page) use the context only through this
 * interface, so a copy can use an instance another copy created.
 */
import type { WebDLPackError } from "../errors.js";
import type { CacheMode } from "./options.js";
import type { DeviceLostListener } from "./devices/registry.js";
import type { LedgerDebug, LedgerView, LeakReport } from "./ledger/entry.js";
import type { GPUPointer, GPUPointerInfo, RegisterBufferOptions } from "./pointers/pointer-format.js";
import type { AllocOptions, CacheModeOptions } from "./pointers/pointer-allocations.js";
import type { DeviceOptions } from "./devices/devices.js";
import type { MemoryPressureHandler, MemoryPressureOptions, MemoryReport } from "./memory/index.js";
import type { CopyRange, ReadbackRange, ReadbackTarget, TransferStats } from "./transfers/index.js";
import type { DeviceInfo, SetupConfig } from "./devices/setup.js";

// The option types live in their rooms; this is the whole interface, so it names them too.
export type { AllocOptions, CacheModeOptions, DeviceOptions, GPUPointerInfo, RegisterBufferOptions };

/** Per-device numbers in {@link ContextStats}. */
export interface DeviceStats {
  /** Device id. */
  deviceId: number;
  /** Whether the device was lost. */
  lost: boolean;
  /** False for a replaced device 0 or an unregistered device still holding pointers. */
  current: boolean;
  /** Live pointers on the device. */
  livePointers: number;
  /** Allocated bytes of those pointers' buffers. */
  liveBytes: number;
  /** Requested bytes of those pointers. */
  requestedBytes: number;
  /** The cache mode in force. */
  cacheMode: CacheMode;
  /** Freed buffers kept for reuse. */
  cachedBuffers: number;
  /** Their bytes. */
  cachedBytes: number;
  /** Allocations served from the cache. */
  hits: number;
  /** Allocations that created a buffer. */
  misses: number;
  /** Buffers freed in lazyRelease mode and not destroyed yet. */
  lazyReleaseBuffers: number;
  /** Their bytes. */
  lazyReleaseBytes: number;
  /** Bytes destroyed whose queue marker has not completed (the GPU process may still hold them). */
  pendingDestroyBytes: number;
  /** Largest lazyReleaseBytes + pendingDestroyBytes seen. */
  peakPendingBytes: number;
  /** Buffers destroyed through the throttle. */
  destroyed: number;
  /** Queue markers the throttle submitted. */
  destroyMarkers: number;
  /** Times an allocation waited for pending destroys. */
  throttleWaits: number;
  /** Readback staging buffers kept. */
  stagingBuffers: number;
  /** Owners holding a device guard (getWebGPUDevice(id, {owner})). */
  guardOwners: string[];
}

/** Per owner and device numbers in {@link ContextStats}. */
export interface OwnerStats {
  /** Owner label (the `owner` given at allocation; "(none)" if none). */
  owner: string;
  /** Device id. */
  deviceId: number;
  /** Live pointers of this owner on the device. */
  livePointers: number;
  /** Their allocated bytes. */
  liveBytes: number;
  /**
   * Cache hits of this owner on the device. Hit/miss history is kept for the
   * 256 (`MAX_OWNER_COUNT_ROWS`) owners that allocated most recently on
   * the device: owner labels are caller-chosen, so older rows are dropped
   * rather than growing without bound. An owner whose row was dropped but
   * still holds pointers is listed with hits and misses counted afresh from 0.
   */
  hits: number;
  /** Cache misses (same history rule as `hits`). */
  misses: number;
}

/** What {@link WebDLPackContext.stats} reports. */
export interface ContextStats {
  /** One row per device that is registered or still holds pointers, by id. */
  devices: DeviceStats[];
  /** Live pointers on all devices. */
  livePointers: number;
  /** Allocated bytes on all devices. */
  liveBytes: number;
  /** Pointer-table slots retired because their generation ran out. */
  retiredSlots: number;
  /** The tag in this context's GPU pointers (their top bits; see docs/gpu-pointers.md). */
  pointerTag: number;
  /** Cached buffers on all devices. */
  cachedBuffers: number;
  /** Cached bytes on all devices. */
  cachedBytes: number;
  /** Cache hits on all devices. */
  hits: number;
  /** Cache misses on all devices. */
  misses: number;
  /**
   * One row per (owner, device) with live pointers or counted allocations, by
   * device then owner. Rows of owners without live pointers are bounded: a
   * device remembers the hits/misses of its 256 most recently allocating
   * owners (`MAX_OWNER_COUNT_ROWS`); see {@link OwnerStats.hits}.
   */
  owners: OwnerStats[];
  /** Live ledger entries (buffers and tensors). */
  ledgerEntries: number;
  /** Leaks found so far. */
  leaks: number;
}

/** Version of the context's shared-object protocol. */
export interface ContextProtocol {
  /** Changes when a method is removed or changes meaning: copies with another major refuse. */
  readonly major: number;
  /** Changes when methods are added: any minor of the same major is accepted. */
  readonly minor: number;
}

/**
 * The page-wide webdlpack context: WebGPU devices and the GPU pointer table.
 * Get it with `getContext()`; there is one per page (per JS realm).
 */
export interface WebDLPackContext {
  /** The protocol version of the copy that created this context. */
  readonly protocol: ContextProtocol;

  /**
   * Request adapter and device once and make it device 0. Concurrent and
   * repeated calls share one result; after device 0 is lost, the next call
   * makes a new device 0 (without `cfg`: with the lost device's adapter
   * options, features and limits). Throws NO_WEBGPU, NO_ADAPTER, UNSUPPORTED (feature or
   * limit), GPU_ERROR, INVALID_ARGUMENT.
   */
  setup(cfg?: SetupConfig): Promise<DeviceInfo>;

  /**
   * The device with id `id` (0: default). With `{owner}`: that owner's guard of
   * the device, whose `destroy()` only drops the owner's hold and never destroys
   * the device (it belongs to the context; destroy the raw device to end it); see devices/guard.ts.
   * Throws UNKNOWN_DEVICE ("call setup() first" for 0), DEVICE_LOST, INVALID_ARGUMENT (owner).
   */
  getWebGPUDevice(id?: number, options?: DeviceOptions): GPUDevice;

  /** Register a device the user made; returns its id (> 0; 0 for the default device). The same device gives the same id. */
  registerWebGPUDevice(device: GPUDevice, adapterInfo?: GPUAdapterInfo | object): number;

  /** Forget device `id` (> 0). Throws INVALID_ARGUMENT while pointers on it are live, UNKNOWN_DEVICE if unknown. */
  unregisterWebGPUDevice(id: number): void;

  /** Call `listener` when a registered device is lost. Returns an unsubscribe function. */
  onDeviceLost(listener: DeviceLostListener): () => void;

  /**
   * Allocate a GPUBuffer of at least `nbytes` (rounded up to 16) and return its
   * pointer synchronously — the RFC's `allocWebGPU() -> GPUPointer`, usable by
   * callers that can not await (C through a function pointer, Python without
   * JSPI). Size, usage and device state are checked at once (INVALID_ARGUMENT,
   * UNKNOWN_DEVICE, DEVICE_LOST); a cache hit needs no GPU call. On a miss,
   * errors WebGPU reports later (out of memory) are recorded on the pointer: its
   * next `gpuPointerToBuffer` throws them, and `lastAsyncError()` returns the
   * latest. Use {@link allocWebGPUChecked} to wait for WebGPU's verdict instead.
   */
  allocWebGPU(nbytes: number, options?: AllocOptions): GPUPointer;

  /**
   * Allocate like {@link allocWebGPU}, creating a new buffer under WebGPU error
   * scopes and resolving once WebGPU accepted it: rejects with OUT_OF_MEMORY /
   * GPU_ERROR (the failed buffer destroyed, the device left working) instead of
   * recording them, and with the errors of allocWebGPU. Protocol 1.2.
   */
  allocWebGPUChecked(nbytes: number, options?: AllocOptions): Promise<GPUPointer>;

  /** Protocol 1.1's name of {@link allocWebGPU} (same function), kept for copies of webdlpack that speak 1.1. */
  allocWebGPUSync(nbytes: number, options?: AllocOptions): GPUPointer;

  /** The latest error of a synchronous allocation reported after it returned, or null. */
  lastAsyncError(): WebDLPackError | null;

  /**
   * Cache mode of every device (no deviceId) or of one device; switching to
   * disabled / lazyRelease releases what the cache holds. Throws INVALID_ARGUMENT.
   */
  setCacheMode(mode: CacheMode, options?: CacheModeOptions): void;

  /** The cache mode of device `deviceId` (default 0). */
  getCacheMode(deviceId?: number): CacheMode;

  /** Wait for the work submitted so far on one device (or all), then destroy lazy releases and confirm pending destroys. */
  flush(deviceId?: number): Promise<void>;

  /**
   * Copy bytes of `ptr`'s buffer to the CPU, ordered after all work already
   * submitted to the device queue (default range: byteOffset 0, the requested size).
   * Rejects with INVALID_POINTER / STALE_POINTER / DEVICE_LOST, INVALID_ARGUMENT (no COPY_SRC), OUT_OF_BOUNDS.
   */
  readback(ptr: GPUPointer, range?: ReadbackRange): Promise<ArrayBuffer>;

  /**
   * Like {@link readback}, writing straight into a view or wasm memory (the view re-derived per piece, so memory
   * growth meanwhile is harmless; no intermediate array). Length: range.byteLength, else the target's.
   */
  readbackInto(ptr: GPUPointer, target: ReadbackTarget, range?: ReadbackRange): Promise<void>;

  /**
   * Copy the bytes of `source` (a view, or wasm memory + address + byteLength) into `ptr`'s buffer at
   * `range.byteOffset` (a multiple of 4; default 0), ordered after all submitted work. Synchronous: the bytes are
   * taken before it returns. Large uploads go through mapped staging buffers, small ones through writeBuffer
   * (measured per adapter: bench/gpu). A length that is not a multiple of 4 is padded with zeros, which must fit.
   * Throws INVALID_POINTER / STALE_POINTER / DEVICE_LOST, UNSUPPORTED (no COPY_DST, unaligned offset), OUT_OF_BOUNDS.
   */
  upload(ptr: GPUPointer, source: ReadbackTarget, range?: Pick<ReadbackRange, "byteOffset">): void;

  /**
   * GPU → GPU copy between two pointers of one device (offsets and length multiples of 4; default: the source's
   * requested size), submitted now. Throws BAD_DEVICE, UNSUPPORTED (usage, alignment), OUT_OF_BOUNDS, INVALID_ARGUMENT.
   */
  copyBuffer(src: GPUPointer, dst: GPUPointer, range?: CopyRange): void;

  /** Zero a byte range of `ptr`'s buffer (default: all of it), submitted now. */
  clearBuffer(ptr: GPUPointer, range?: ReadbackRange): void;

  /** Transfers of device `deviceId` (default 0): pending transfers, staging kept and reused, the last upload path. */
  transferStats(deviceId?: number): TransferStats;

  /** The lifetime ledger, read-mostly: every live GPU allocation and tracked tensor (docs/gpu-pointers.md). */
  readonly ledger: LedgerView;

  /** Debug switches (`captureStacks`). */
  readonly debug: LedgerDebug;

  /** Run `fn` (sync or async) and release what was tracked inside, except kept or returned values. */
  scope<T>(fn: () => T): T;

  /** Keep `x` (entry, pointer, watched object) from being released by any scope. Returns `x`. */
  keep<T>(x: T): T;

  /** Release what `x` (entry, pointer, watched object) names, now. */
  dispose(x: unknown): boolean;

  /** Leaks found by the garbage-collection safety net. */
  leaks(): LeakReport[];

  /** Adopt a buffer another framework made; returns a pointer. Throws INVALID_ARGUMENT (not a buffer, already in the table). */
  registerGPUBuffer(buffer: GPUBuffer, options?: RegisterBufferOptions): GPUPointer;

  /** The buffer `ptr` names. O(1). Throws INVALID_POINTER, STALE_POINTER, DEVICE_LOST. */
  gpuPointerToBuffer(ptr: GPUPointer): GPUBuffer;

  /** Facts about a live pointer (also on a lost device). Throws INVALID_POINTER, STALE_POINTER. */
  gpuPointerInfo(ptr: GPUPointer): GPUPointerInfo;

  /**
   * Release `ptr`: destroy the buffer if owned, else forget it and call onRelease.
   * Works on lost devices too. Throws INVALID_POINTER, DOUBLE_FREE.
   */
  freeWebGPU(ptr: GPUPointer): void;

  /**
   * Live pointers and bytes per device and per owner, cache hits and misses.
   * Per-owner hit/miss history is bounded: each device keeps it for the 256
   * (`MAX_OWNER_COUNT_ROWS`) owners that allocated most recently, dropping the
   * least recent row beyond that (owners with live pointers are always listed).
   */
  stats(): ContextStats;

  /**
   * GPU memory of device `deviceId` (default 0) by owner: every buffer created on it — by webdlpack,
   * by each framework through its device guard, by the page — with its bytes, and of those the bytes the
   * owner keeps cached where it can tell; the budget and how often room was made (docs/memory.md).
   * Throws UNKNOWN_DEVICE.
   */
  memory(deviceId?: number): MemoryReport;

  /**
   * Set (bytes) or remove (null) the GPU memory budget of device `deviceId` (default 0), as
   * `setup({memoryBudget})` does. Throws INVALID_ARGUMENT, UNKNOWN_DEVICE.
   */
  setMemoryBudget(bytes: number | null, deviceId?: number): void;

  /**
   * Call `handler` when GPU memory must be given back: an allocation would cross the budget, or the
   * device ran out of memory. It should destroy what `options.owner` keeps cached; a returned promise is
   * awaited on asynchronous paths. `options.cachedBytes` reports the owner's cached bytes for
   * `memory()` (`handler` may then be null). Returns the function that unregisters. Throws INVALID_ARGUMENT.
   */
  onMemoryPressure(handler: MemoryPressureHandler | null, options?: MemoryPressureOptions): () => void;

  /**
   * Give back now what every owner caches on device `deviceId` (default 0): webdlpack's caches, then
   * every pressure handler (reason "request"). Resolves to the bytes given back. Throws UNKNOWN_DEVICE.
   */
  trimMemory(deviceId?: number): Promise<number>;
}
