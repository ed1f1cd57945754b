/**
 * The class behind the page-wide {@link WebDLPackContext}: ties the device
 * registry, device setup and the GPU pointer table together.
 *
 * Not exported from the package: use `getContext()`, so a page has one.
 */
import { WebDLPackError } from "../errors.js";
import { checkByteCount, checkUsage, createBufferUnchecked, createCheckedBuffer, DEFAULT_GPU_USAGE } from "./allocation.js";
import {
  checkCacheMode, DEFAULT_CACHE_LIMITS, DEFAULT_CACHE_MODE, mergeCacheLimits, type CacheLimits, type CacheMode,
} from "./buffer-cache.js";
import { DEFAULT_THROTTLE_LIMITS, type ThrottleLimits } from "./destroy-throttle.js";
import { DeviceAllocator } from "./device-allocator.js";
import { DeviceGuards, unwrapDevice } from "./device-guard.js";
import {
  DeviceRegistry, describeValue, lostError, summarizeAdapterInfo,
  type DeviceLostListener, type DeviceRecord,
} from "./devices.js";
import { Ledger, MARK_RELEASED, ownerLabel, type LeakReport, type LedgerDebug, type LedgerEntry } from "./ledger.js";
import { formatPointer, GPU_POINTER_SLOT_BITS, PointerTable, type GPUPointer, type PointerTableOptions } from "./pointer-table.js";
import { orderedRead, resolveRange, targetBytes, type ReadbackRange, type ReadbackTarget } from "./readback.js";
import { acquireDevice, checkFeatures, checkLimits, checkSetupConfig, describeDevice, type DeviceInfo, type SetupConfig } from "./setup.js";
import type {
  AllocOptions, CacheModeOptions, ContextProtocol, ContextStats, DeviceOptions, DeviceStats, GPUPointerInfo, OwnerStats,
  RegisterBufferOptions, WebDLPackContext,
} from "./types.js";

/** What the pointer table holds for each pointer. */
interface BufferEntry {
  readonly buffer: GPUBuffer;
  readonly device: DeviceRecord;
  readonly requestedSize: number;
  readonly owned: boolean;
  readonly owner: unknown;
  readonly ownerLabel: string;
  readonly onRelease: ((buffer: GPUBuffer, ptr: GPUPointer) => void) | undefined;
  /** Made by this context's allocator, so it may go back to the cache. */
  readonly pooled: boolean;
  /** The ledger entry (set right after insertion). */
  ledger: LedgerEntry | undefined;
  /** The buffer was released (destroyed / handed back / onRelease called): by free, or at device loss. */
  released: boolean;
  /** An error WebGPU reported after allocWebGPUSync returned; thrown on use. */
  asyncError: WebDLPackError | undefined;
}

/** Validated allocation arguments. */
interface AllocRequest {
  record: DeviceRecord;
  allocator: DeviceAllocator;
  requested: number;
  usage: number;
  size: number;
  label: string | undefined;
  owner: unknown;
  ownerLabel: string;
  /** Joins an open scope (AllocOptions.scoped). */
  scoped: boolean;
}

/** State of the shared setup() promise. */
interface SetupState {
  promise: Promise<DeviceInfo>;
  /** Set when the promise fulfilled. */
  record?: DeviceRecord;
  /** The config the device was made with (for later-call checks). */
  cfg: SetupConfig;
}

/** Options for constructing a context directly (tests only; pages use getContext()). */
export interface ContextOptions {
  /** Pointer table options. */
  table?: PointerTableOptions;
}

/** The context implementation. One per page via `getContext()`. */
export class PageContext implements WebDLPackContext {
  readonly protocol: ContextProtocol;
  readonly ledger = new Ledger();
  readonly #devices = new DeviceRegistry((record) => this.#deviceLost(record));
  readonly #table: PointerTable<BufferEntry>;
  /** Buffers in the table, to refuse adopting one twice. */
  readonly #byBuffer = new WeakMap<GPUBuffer, GPUPointer>();
  /** Ledger entries that stand for this context's own pointers. */
  readonly #ownEntries = new WeakSet<LedgerEntry>();
  readonly #allocators = new Map<DeviceRecord, DeviceAllocator>();
  readonly #guards = new Map<DeviceRecord, DeviceGuards>();
  #defaultMode: CacheMode = DEFAULT_CACHE_MODE;
  readonly #modeById = new Map<number, CacheMode>();
  #cacheLimits: CacheLimits = { ...DEFAULT_CACHE_LIMITS };
  readonly #cacheLimitsById = new Map<number, CacheLimits>();
  #throttleLimits: ThrottleLimits = { ...DEFAULT_THROTTLE_LIMITS };
  readonly #throttleLimitsById = new Map<number, ThrottleLimits>();
  #lastAsyncError: WebDLPackError | null = null;
  #setup: SetupState | undefined;
  /**
   * Translation fast path: for slot s, `#fast[2s]` is the live pointer whose
   * buffer can be handed out as is (-1: go the slow way — freed, lost device,
   * async error) and `#fast[2s + 1]` that buffer; one array, so one cache line.
   * Kept in step with the table by #insert, freeWebGPU, #deviceLost and the
   * sync-allocation error path. (Measured: bench/allocator.mjs.)
   */
  #fast: unknown[] = emptyFastPath(64);

  /** Make a context speaking `protocol`. */
  constructor(protocol: ContextProtocol, options: ContextOptions = {}) {
    this.protocol = Object.freeze({ major: protocol.major, minor: protocol.minor });
    this.#table = new PointerTable<BufferEntry>(options.table);
  }

  /** Debug switches: `ctx.debug.captureStacks = true` records where each ledger entry was made. */
  get debug(): LedgerDebug {
    return this.ledger.debug;
  }

  setup(cfg?: SetupConfig): Promise<DeviceInfo> {
    let config: SetupConfig;
    try {
      config = checkSetupConfig(cfg);
      if (config.device !== undefined) config = { ...config, device: unwrapDevice(config.device) };
    } catch (err) {
      return Promise.reject(err);
    }
    const state = this.#setup;
    if (state !== undefined) {
      if (state.record === undefined) return state.promise; // in flight: share it
      if (!state.record.lost) {
        try {
          this.#checkLaterSetup(state.record, config);
        } catch (err) {
          return Promise.reject(err);
        }
        return state.promise;
      }
      // Device 0 was lost: make a new one, by default as the lost one was asked for.
      if (cfg === undefined) config = withoutDevice(state.cfg);
    }
    const fresh = { cfg: config } as SetupState;
    fresh.promise = acquireDevice(config).then(
      ({ device, adapterInfo }) => {
        const record = this.#devices.setDefault(device, adapterInfo);
        fresh.record = record;
        if (config.cacheMode !== undefined) this.#modeById.set(0, config.cacheMode);
        return describeDevice(0, device, adapterInfo);
      },
      (err: unknown) => {
        // A failed setup may be retried; after a loss the lost state is kept so a
        // retry without cfg still uses the lost device's config.
        if (this.#setup === fresh) this.#setup = state;
        throw err;
      },
    );
    this.#setup = fresh;
    return fresh.promise;
  }

  /** A setup() call after success must not ask for something device 0 lacks. */
  #checkLaterSetup(record: DeviceRecord, cfg: SetupConfig): void {
    if (cfg.device !== undefined && cfg.device !== record.device) {
      throw new WebDLPackError("INVALID_ARGUMENT", "setup() already made device 0 from another device", {
        field: "cfg.device", value: describeValue(cfg.device), expected: "no device, or the device 0 already in use" });
    }
    checkFeatures(cfg.requiredFeatures, record.device.features as ReadonlySet<string>, "existing device 0");
    checkLimits(cfg.requiredLimits, record.device.limits, "existing device 0");
  }

  getWebGPUDevice(id = 0, options?: DeviceOptions): GPUDevice {
    const record = this.#devices.live(id, "getWebGPUDevice");
    if (options === undefined) return record.device;
    const opts = checkOptions(options, "getWebGPUDevice");
    if (opts.owner === undefined) return record.device;
    if (typeof opts.owner !== "string" || opts.owner === "") {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad getWebGPUDevice option", {
        field: "options.owner", value: describeValue(opts.owner), expected: "a framework name (non-empty string)" });
    }
    let guards = this.#guards.get(record);
    if (guards === undefined) {
      guards = new DeviceGuards(record.device);
      this.#guards.set(record, guards);
    }
    return guards.acquire(opts.owner);
  }

  registerWebGPUDevice(device: GPUDevice, adapterInfo?: GPUAdapterInfo | object): number {
    const real = unwrapDevice(device);
    const info = summarizeAdapterInfo((real as { adapterInfo?: unknown } | null)?.adapterInfo) ?? summarizeAdapterInfo(adapterInfo);
    return this.#devices.register(real, info);
  }

  unregisterWebGPUDevice(id: number): void {
    const record = this.#devices.record(id);
    const live = this.#livePointersOn(record);
    if (live > 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", `device ${id} still has ${live} live GPU pointer(s)`, {
        field: "deviceId", value: id, expected: "a device whose pointers were all freed with freeWebGPU" });
    }
    this.#devices.unregister(id);
    this.#allocators.get(record)?.drain();
    this.#allocators.delete(record);
    this.#guards.delete(record);
  }

  onDeviceLost(listener: DeviceLostListener): () => void {
    return this.#devices.onDeviceLost(listener);
  }

  async allocWebGPU(nbytes: number, options: AllocOptions = {}): Promise<GPUPointer> {
    const req = this.#request(nbytes, options, "allocWebGPU");
    const { record, allocator } = req;
    const cached = allocator.take(req.size, req.usage, req.ownerLabel);
    if (cached !== undefined) return this.#insertAllocated(req, cached);
    if (allocator.throttle.overBudget) await allocator.throttle.relieve();
    const buffer = await createCheckedBuffer(record.device, {
      size: req.size, usage: req.usage, deviceId: record.id, ...(req.label !== undefined ? { label: req.label } : {}) });
    if (record.lost) {
      buffer.destroy();
      throw lostError(record, "allocWebGPU");
    }
    if (!record.current) {
      // Unregistered (or replaced by a new setup) while the buffer was being created: nothing may point into it.
      buffer.destroy();
      throw new WebDLPackError("UNKNOWN_DEVICE", `device ${record.id} was unregistered while allocWebGPU waited`, {
        field: "options.deviceId", value: record.id, expected: "a device that stays registered until its allocations finish" });
    }
    return this.#insertAllocated(req, buffer);
  }

  allocWebGPUSync(nbytes: number, options: AllocOptions = {}): GPUPointer {
    const req = this.#request(nbytes, options, "allocWebGPUSync");
    const { record, allocator } = req;
    const cached = allocator.take(req.size, req.usage, req.ownerLabel);
    if (cached !== undefined) return this.#insertAllocated(req, cached);
    // Over the destroy budget a sync caller can not wait: the throttle's markers
    // are already submitted, so the GPU process can reclaim; allocate anyway.
    const { buffer, verdict } = createBufferUnchecked(record.device, {
      size: req.size, usage: req.usage, deviceId: record.id, ...(req.label !== undefined ? { label: req.label } : {}) });
    const ptr = this.#insertAllocated(req, buffer);
    const notify = options.onAsyncError;
    void verdict.then((error) => {
      if (error === null) return;
      const late = this.#poison(buffer, allocator, error, ptr);
      try {
        notify?.(late, ptr);
      } catch (err) {
        console.error("webdlpack: an onAsyncError callback threw", err);
      }
    });
    return ptr;
  }

  /**
   * WebGPU reported that `buffer` (from allocWebGPUSync as `first`) was never
   * created. Whoever holds it now gets the error on use: the pointer that
   * names it (the first one, or a later one if it was freed and reused from
   * the cache); if it sits in the cache, it is taken out and destroyed.
   * Returns the error as the pointer reports it.
   */
  #poison(buffer: GPUBuffer, allocator: DeviceAllocator, error: WebDLPackError, first: GPUPointer): WebDLPackError {
    const current = this.#byBuffer.get(buffer);
    const ptr = current !== undefined && this.#table.has(current) ? current : first;
    const shown = formatPointer(ptr);
    const late = new WebDLPackError(error.code, `allocWebGPUSync: GPU pointer ${shown} has no usable buffer: ${error.message}`, {
      field: "ptr", value: ptr, expected: "a pointer whose buffer WebGPU created (check ctx.lastAsyncError() after sync allocations)",
      cause: error });
    this.#lastAsyncError = late;
    if (current !== undefined && this.#table.has(current)) {
      const entry = this.#table.get(current);
      if (entry.buffer === buffer) {
        entry.asyncError = late;
        this.#clearFast(current);
        return late;
      }
    }
    if (allocator.cache.remove(buffer)) allocator.discard(buffer);
    return late;
  }

  lastAsyncError(): WebDLPackError | null {
    return this.#lastAsyncError;
  }

  /** Check allocation arguments (all synchronous checks) and pick the size. */
  #request(nbytes: number, options: AllocOptions, fn: string): AllocRequest {
    const opts = checkOptions(options, fn);
    const deviceId = opts.deviceId ?? 0;
    const record = this.#devices.live(deviceId, fn);
    const requested = checkByteCount(nbytes, record.device.limits.maxBufferSize, deviceId);
    const usage = checkUsage(opts.usage ?? DEFAULT_GPU_USAGE);
    if (opts.label !== undefined && typeof opts.label !== "string") {
      throw new WebDLPackError("INVALID_ARGUMENT", `bad ${fn} option`, {
        field: "options.label", value: describeValue(opts.label), expected: "a string" });
    }
    if (opts.onAsyncError !== undefined && typeof opts.onAsyncError !== "function") {
      throw new WebDLPackError("INVALID_ARGUMENT", `bad ${fn} option`, {
        field: "options.onAsyncError", value: describeValue(opts.onAsyncError), expected: "a function (error, ptr) => void" });
    }
    if (opts.scoped !== undefined && typeof opts.scoped !== "boolean") {
      throw new WebDLPackError("INVALID_ARGUMENT", `bad ${fn} option`, {
        field: "options.scoped", value: describeValue(opts.scoped), expected: "a boolean" });
    }
    const allocator = this.#allocator(record);
    return {
      record, allocator, requested, usage, size: allocator.sizeFor(requested, usage), label: opts.label,
      owner: opts.owner, ownerLabel: ownerLabel(opts.owner), scoped: opts.scoped !== false,
    };
  }

  #insertAllocated(req: AllocRequest, buffer: GPUBuffer): GPUPointer {
    if (req.label !== undefined && buffer.label !== req.label) buffer.label = req.label;
    const entry: BufferEntry = {
      buffer, device: req.record, requestedSize: req.requested, owned: true, owner: req.owner, ownerLabel: req.ownerLabel,
      onRelease: undefined, pooled: true, ledger: undefined, released: false, asyncError: undefined,
    };
    return this.#insert(entry, req.scoped);
  }

  /** The allocation state of `record`, made on first use with the configured mode and limits. */
  #allocator(record: DeviceRecord): DeviceAllocator {
    let allocator = this.#allocators.get(record);
    if (allocator === undefined) {
      allocator = new DeviceAllocator(record, this.#modeById.get(record.id) ?? this.#defaultMode,
        this.#cacheLimitsById.get(record.id) ?? this.#cacheLimits, this.#throttleLimitsById.get(record.id) ?? this.#throttleLimits);
      this.#allocators.set(record, allocator);
    }
    return allocator;
  }

  setCacheMode(mode: CacheMode, options: CacheModeOptions = {}): void {
    const opts = checkOptions(options, "setCacheMode");
    const checked = checkCacheMode(mode, "mode");
    const deviceId = opts.deviceId;
    if (deviceId !== undefined) this.#devices.record(deviceId); // UNKNOWN_DEVICE for a bad id
    const baseCache = deviceId === undefined ? this.#cacheLimits : this.#cacheLimitsById.get(deviceId) ?? this.#cacheLimits;
    const cacheLimits = mergeCacheLimits(baseCache, opts.cacheLimits, "options.cacheLimits");
    const baseThrottle = deviceId === undefined ? this.#throttleLimits : this.#throttleLimitsById.get(deviceId) ?? this.#throttleLimits;
    const throttleLimits = mergeThrottleLimits(baseThrottle, opts.throttleLimits);
    if (deviceId === undefined) {
      this.#defaultMode = checked;
      this.#cacheLimits = cacheLimits;
      this.#throttleLimits = throttleLimits;
    } else {
      this.#modeById.set(deviceId, checked);
      this.#cacheLimitsById.set(deviceId, cacheLimits);
      this.#throttleLimitsById.set(deviceId, throttleLimits);
    }
    for (const [record, allocator] of this.#allocators) {
      if (record.lost || !record.current) continue;
      if (deviceId !== undefined ? record.id !== deviceId : this.#modeById.has(record.id)) continue;
      allocator.setMode(checked);
      allocator.setCacheLimits(cacheLimits);
      allocator.throttle.setLimits(throttleLimits);
    }
  }

  getCacheMode(deviceId = 0): CacheMode {
    return this.#modeById.get(deviceId) ?? this.#defaultMode;
  }

  async flush(deviceId?: number): Promise<void> {
    const targets = deviceId === undefined
      ? [...this.#allocators.values()]
      : [this.#allocator(this.#devices.record(deviceId))];
    await Promise.all(targets.map((a) => a.throttle.flush()));
  }

  async readback(ptr: GPUPointer, range?: ReadbackRange): Promise<ArrayBuffer> {
    const entry = this.#usable(ptr, "readback");
    const { offset, length } = resolveRange(range, entry.buffer.size, defaultLength(entry, range));
    const out = new Uint8Array(length);
    await orderedRead(entry.device.device, this.#allocator(entry.device).staging, entry.buffer, offset, length, (bytes) => out.set(bytes));
    return out.buffer;
  }

  async readbackInto(ptr: GPUPointer, target: ReadbackTarget, range?: ReadbackRange): Promise<void> {
    const entry = this.#usable(ptr, "readbackInto");
    const length = range?.byteLength ?? targetLength(target);
    const { offset } = resolveRange({ ...(range ?? {}), byteLength: length }, entry.buffer.size, length);
    targetBytes(target, length); // refuse a bad target before queueing work
    await orderedRead(entry.device.device, this.#allocator(entry.device).staging, entry.buffer, offset, length,
      (bytes) => targetBytes(target, length).set(bytes));
  }

  scope<T>(fn: () => T): T {
    return this.ledger.scope(fn);
  }

  keep<T>(x: T): T {
    return this.ledger.keep(x);
  }

  dispose(x: unknown): boolean {
    return this.ledger.dispose(x);
  }

  leaks(): LeakReport[] {
    return this.ledger.leaks();
  }

  registerGPUBuffer(buffer: GPUBuffer, options: RegisterBufferOptions = {}): GPUPointer {
    const opts = checkOptions(options, "registerGPUBuffer");
    if (!isGPUBuffer(buffer)) {
      throw new WebDLPackError("INVALID_ARGUMENT", "registerGPUBuffer needs a GPUBuffer", {
        field: "buffer", value: describeValue(buffer), expected: "a GPUBuffer (size, usage, destroy)" });
    }
    const deviceId = opts.deviceId ?? 0;
    const record = this.#devices.live(deviceId, "registerGPUBuffer");
    if (opts.owned !== undefined && typeof opts.owned !== "boolean") {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad registerGPUBuffer option", {
        field: "options.owned", value: describeValue(opts.owned), expected: "true or false" });
    }
    if (opts.onRelease !== undefined && typeof opts.onRelease !== "function") {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad registerGPUBuffer option", {
        field: "options.onRelease", value: describeValue(opts.onRelease), expected: "a function (buffer, ptr) => void" });
    }
    const existing = this.#byBuffer.get(buffer);
    if (existing !== undefined && this.#table.has(existing)) {
      throw new WebDLPackError("INVALID_ARGUMENT", `this GPUBuffer is already in the pointer table as ${formatPointer(existing)}`, {
        field: "buffer", value: existing, expected: "a buffer not yet registered (reuse the existing pointer)" });
    }
    return this.#insert({
      buffer, device: record, requestedSize: buffer.size, owned: opts.owned ?? false, owner: opts.owner,
      ownerLabel: ownerLabel(opts.owner), onRelease: opts.onRelease, pooled: false, ledger: undefined, released: false, asyncError: undefined,
    });
  }

  /** The single place entries enter the table: the pointer, then its ledger entry. */
  #insert(entry: BufferEntry, scoped = true): GPUPointer {
    let ptr: GPUPointer;
    try {
      ptr = this.#table.insert(entry);
    } catch (err) {
      if (entry.owned) this.#allocator(entry.device).discard(entry.buffer);
      throw err;
    }
    this.#byBuffer.set(entry.buffer, ptr);
    this.#setFast(ptr, entry.buffer);
    const ledgerEntry = this.ledger.track({
      kind: "gpu-buffer", owner: entry.ownerLabel, deviceId: entry.device.id, bytes: entry.buffer.size, pointer: ptr, scoped,
      release: () => {
        if (this.#table.has(ptr)) this.freeWebGPU(ptr);
      },
    });
    this.#ownEntries.add(ledgerEntry);
    entry.ledger = ledgerEntry;
    return ptr;
  }

  gpuPointerToBuffer(ptr: GPUPointer): GPUBuffer {
    const at = 2 * (ptr & FAST_SLOT_MASK);
    const fast = this.#fast;
    return fast[at] === ptr ? fast[at + 1] as GPUBuffer : this.#translateSlow(ptr);
  }

  /** Translation with full checks and exact errors (pointers not on the fast path). */
  #translateSlow(ptr: GPUPointer): GPUBuffer {
    const entry = this.#table.get(ptr);
    if (entry.device.lost) throw lostError(entry.device, "gpuPointerToBuffer", formatPointer(ptr));
    if (entry.asyncError !== undefined) throw entry.asyncError;
    return entry.buffer;
  }

  /** Put a live pointer on the translation fast path. */
  #setFast(ptr: GPUPointer, buffer: GPUBuffer): void {
    const at = 2 * (ptr & FAST_SLOT_MASK);
    if (at >= this.#fast.length) {
      let slots = this.#fast.length / 2;
      while (2 * slots <= at) slots *= 2;
      const grown = emptyFastPath(slots);
      for (let i = 0; i < this.#fast.length; i++) grown[i] = this.#fast[i];
      this.#fast = grown;
    }
    this.#fast[at] = ptr;
    this.#fast[at + 1] = buffer;
  }

  /** Take `ptr` off the fast path (it then goes through the checks of #translateSlow). */
  #clearFast(ptr: GPUPointer): void {
    const at = 2 * (ptr & FAST_SLOT_MASK);
    if (at < this.#fast.length && this.#fast[at] === ptr) {
      this.#fast[at] = -1;
      this.#fast[at + 1] = undefined;
    }
  }

  /** A live entry whose buffer can be used (not lost, no async error). */
  #usable(ptr: GPUPointer, operation: string): BufferEntry {
    const entry = this.#table.get(ptr);
    if (entry.device.lost) throw lostError(entry.device, operation, formatPointer(ptr));
    if (entry.asyncError !== undefined) throw entry.asyncError;
    return entry;
  }

  gpuPointerInfo(ptr: GPUPointer): GPUPointerInfo {
    const entry = this.#table.get(ptr);
    return {
      ptr,
      deviceId: entry.device.id,
      size: entry.buffer.size,
      requestedSize: entry.requestedSize,
      usage: entry.buffer.usage,
      label: entry.buffer.label ?? "",
      owner: entry.owner,
      owned: entry.owned,
      deviceLost: entry.device.lost,
    };
  }

  freeWebGPU(ptr: GPUPointer): void {
    const entry = this.#table.remove(ptr);
    this.#byBuffer.delete(entry.buffer);
    this.#clearFast(ptr);
    entry.ledger?.[MARK_RELEASED]("dispose");
    this.#releaseBuffer(entry, ptr);
  }

  /** Live pointers on `record` (a scan; for unregisterWebGPUDevice). */
  #livePointersOn(record: DeviceRecord): number {
    let live = 0;
    this.#table.forEach((entry) => {
      if (entry.device === record) live += 1;
    });
    return live;
  }


  /** Give the buffer back (cache, lazy or throttled destroy) and call onRelease; once per entry. */
  #releaseBuffer(entry: BufferEntry, ptr: GPUPointer): void {
    if (entry.released) return;
    entry.released = true;
    if (entry.owned) {
      const allocator = this.#allocators.get(entry.device);
      if (allocator === undefined || entry.device.lost) entry.buffer.destroy();
      else if (entry.pooled && entry.asyncError === undefined) allocator.recycle(entry.buffer);
      else allocator.discard(entry.buffer);
    }
    // The slot is released before user code runs, so a throwing onRelease leaks nothing.
    entry.onRelease?.(entry.buffer, ptr);
  }

  /**
   * Device loss: release every ledger entry of the device (tensors first, so
   * their own release code runs), then release this context's buffers on it,
   * keeping their pointers in the table so they keep failing with DEVICE_LOST
   * until freed; drop the cache, staging buffers and guards.
   */
  #deviceLost(record: DeviceRecord): void {
    if (record.current) this.ledger.releaseDevice(record.id, (e) => this.#ownEntries.has(e));
    const victims: [BufferEntry, GPUPointer][] = [];
    this.#table.forEach((entry, ptr) => {
      if (entry.device === record) this.#clearFast(ptr);
      if (entry.device === record && !entry.released) victims.push([entry, ptr]);
    });
    for (const [entry, ptr] of victims) {
      entry.ledger?.[MARK_RELEASED]("device-lost");
      try {
        this.#releaseBuffer(entry, ptr);
      } catch (err) {
        console.error("webdlpack: onRelease threw during device loss", err);
      }
    }
    this.#allocators.get(record)?.lose();
    this.#allocators.delete(record);
    this.#guards.delete(record);
  }

  stats(): ContextStats {
    const rows = new Map<DeviceRecord, DeviceStats>();
    const row = (record: DeviceRecord): DeviceStats => {
      let r = rows.get(record);
      if (!r) {
        const a = this.#allocators.get(record);
        const t = a?.throttle.stats();
        r = {
          deviceId: record.id, lost: record.lost, current: record.current, livePointers: 0, liveBytes: 0, requestedBytes: 0,
          cacheMode: a?.mode ?? this.#modeById.get(record.id) ?? this.#defaultMode,
          cachedBuffers: a?.cache.buffers ?? 0, cachedBytes: a?.cache.bytes ?? 0, hits: a?.hits ?? 0, misses: a?.misses ?? 0,
          lazyReleaseBuffers: t?.lazyBuffers ?? 0, lazyReleaseBytes: t?.lazyBytes ?? 0, pendingDestroyBytes: t?.unconfirmedBytes ?? 0,
          peakPendingBytes: t?.peakPendingBytes ?? 0, destroyed: t?.destroyed ?? 0, destroyMarkers: t?.markers ?? 0,
          throttleWaits: t?.waits ?? 0, stagingBuffers: a?.staging.cached ?? 0, guardOwners: this.#guards.get(record)?.owners ?? [],
        };
        rows.set(record, r);
      }
      return r;
    };
    for (const record of this.#devices.list()) row(record);
    const owners = new Map<string, OwnerStats>();
    const ownerRow = (owner: string, deviceId: number): OwnerStats => {
      const key = `${deviceId}\u0000${owner}`;
      let r = owners.get(key);
      if (!r) {
        r = { owner, deviceId, livePointers: 0, liveBytes: 0, hits: 0, misses: 0 };
        owners.set(key, r);
      }
      return r;
    };
    for (const [record, allocator] of this.#allocators) {
      for (const [owner, counts] of allocator.counts) {
        const r = ownerRow(owner, record.id);
        r.hits += counts.hits;
        r.misses += counts.misses;
      }
    }
    let livePointers = 0;
    let liveBytes = 0;
    this.#table.forEach((entry) => {
      const r = row(entry.device);
      r.livePointers += 1;
      r.liveBytes += entry.buffer.size;
      r.requestedBytes += entry.requestedSize;
      const o = ownerRow(entry.ownerLabel, entry.device.id);
      o.livePointers += 1;
      o.liveBytes += entry.buffer.size;
      livePointers += 1;
      liveBytes += entry.buffer.size;
    });
    const devices = [...rows.values()].sort((a, b) => a.deviceId - b.deviceId || Number(b.current) - Number(a.current));
    const sum = (key: "cachedBuffers" | "cachedBytes" | "hits" | "misses"): number => devices.reduce((n, d) => n + d[key], 0);
    return {
      devices, livePointers, liveBytes, retiredSlots: this.#table.retiredSlots,
      cachedBuffers: sum("cachedBuffers"), cachedBytes: sum("cachedBytes"), hits: sum("hits"), misses: sum("misses"),
      owners: [...owners.values()].sort((a, b) => a.deviceId - b.deviceId || (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0)),
      ledgerEntries: this.ledger.size, leaks: this.ledger.leaks().length,
    };
  }
}

/** A config for re-requesting after loss: same adapter options, minus the (lost) user device. */
function withoutDevice(cfg: SetupConfig): SetupConfig {
  const { device: _device, adapterInfo: _info, ...rest } = cfg;
  return rest;
}

/**
 * Fast-path index mask: the default slot bits. With other table options two
 * live pointers may share a fast-path position; the later one wins and the
 * other takes the slow (checked) path, so results never change.
 */
const FAST_SLOT_MASK = 2 ** GPU_POINTER_SLOT_BITS - 1;

/** A fast-path array for `slots` slots, all empty (pointer -1 never matches: pointers are >= 2^20). */
function emptyFastPath(slots: number): unknown[] {
  const fast = new Array<unknown>(2 * slots);
  for (let i = 0; i < fast.length; i += 2) {
    fast[i] = -1;
    fast[i + 1] = undefined;
  }
  return fast;
}

/** Default readback length: the requested size for allocations, else to the end of the buffer. */
function defaultLength(entry: BufferEntry, range: ReadbackRange | undefined): number | undefined {
  if (range?.byteLength !== undefined) return undefined;
  const offset = typeof range?.byteOffset === "number" ? range.byteOffset : 0;
  return Math.max(0, entry.requestedSize - offset);
}

/** Bytes a readbackInto target holds. */
function targetLength(target: ReadbackTarget): number {
  if (ArrayBuffer.isView(target)) return target.byteLength;
  const n = (target as { byteLength?: unknown } | null)?.byteLength;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad readbackInto target", {
      field: "target.byteLength", value: describeValue(n), expected: "a TypedArray/DataView, or {memory, address, byteLength} with byteLength a safe integer >= 0" });
  }
  return n;
}

/** Throttle limits merged over `base`. Throws INVALID_ARGUMENT naming the field. */
function mergeThrottleLimits(base: Readonly<ThrottleLimits>, limits: unknown): ThrottleLimits {
  const out = { ...base };
  if (limits === undefined) return out;
  const field = "options.throttleLimits";
  if (limits === null || typeof limits !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad throttle limits", {
      field, value: describeValue(limits), expected: "an object {maxPendingBytes?, markerBytes?}" });
  }
  for (const [key, value] of Object.entries(limits)) {
    if (key !== "maxPendingBytes" && key !== "markerBytes") {
      throw new WebDLPackError("INVALID_ARGUMENT", `unknown throttle limit "${key}"`, {
        field: `${field}.${key}`, value: describeValue(value), expected: "maxPendingBytes or markerBytes" });
    }
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad throttle limit", {
        field: `${field}.${key}`, value: describeValue(value), expected: "a safe integer >= 0" });
    }
    out[key] = value;
  }
  return out;
}

function checkOptions<T extends object>(options: T, fn: string): T {
  if (options === null || typeof options !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", `bad ${fn} options`, {
      field: "options", value: describeValue(options), expected: "an object or undefined" });
  }
  return options;
}

function isGPUBuffer(value: unknown): value is GPUBuffer {
  if (value === null || typeof value !== "object") return false;
  const b = value as Record<string, unknown>;
  return typeof b["size"] === "number" && typeof b["usage"] === "number" && typeof b["destroy"] === "function";
}
