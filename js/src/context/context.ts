/**
 * The class behind the page-wide {@link WebDLPackContext}: ties the device
 * registry, device setup, the per-device allocators and the GPU buffer
 * table together. Its parts: pointers/buffer-table.ts (pointers → buffers),
 * stats.ts (`stats()`), devices/setup.ts, allocation/device-allocator.ts, transfers/context-calls.ts, ledger/ledger.ts.
 *
 * Not exported from the package: use `getContext()`, so a page has one.
 */
import { describeValue } from "../describe-value.js";
import { checkOptionKeys, requireObject } from "../arguments.js";
import { WebDLPackError } from "../errors.js";
import { checkByteCount, checkUsage, createBufferUnchecked, createCheckedBuffer, DEFAULT_GPU_USAGE, isGPUBuffer } from "./allocation/create.js";
import { Allocators } from "./allocation/allocators.js";
import { checkCacheMode, type CacheMode } from "./allocation/buffer-cache.js";
import { BufferTable, type BufferEntry } from "./pointers/buffer-table.js";
import { DefaultDeviceSetup } from "./devices/default-device.js";
import type { DeviceAllocator } from "./allocation/device-allocator.js";
import { DeviceGuards, unwrapDevice } from "./devices/guard.js";
import { DeviceRegistry, lostError, summarizeAdapterInfo, type DeviceLostListener, type DeviceRecord } from "./devices/registry.js";
import { ownerLabel, type LeakReport, type LedgerDebug } from "./ledger/entry.js";
import { Ledger } from "./ledger/ledger.js";
import { formatPointer, type GPUPointer, type PointerTableOptions } from "./pointers/pointer-table.js";
import { checkRegisteredBuffer } from "./pointers/register-check.js";
import { clearEntry, copyEntries, readbackEntry, readbackEntryInto, uploadEntry } from "./transfers/context-calls.js";
import { releaseTransfers, transfersFor, type CopyRange, type ReadbackRange, type ReadbackTarget, type TransferStats } from "./transfers/index.js";
import type { DeviceInfo, SetupConfig } from "./devices/setup.js";
import { collectStats } from "./stats.js";
import type {
  AllocOptions, CacheModeOptions, ContextProtocol, ContextStats, DeviceOptions, GPUPointerInfo, RegisterBufferOptions, WebDLPackContext,
} from "./types.js";

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
  readonly #table: BufferTable;
  readonly #allocators = new Allocators();
  readonly #guards = new Map<DeviceRecord, DeviceGuards>();
  #lastAsyncError: WebDLPackError | null = null;
  readonly #setup = new DefaultDeviceSetup((device, adapterInfo, config) => {
    const record = this.#devices.setDefault(device, adapterInfo);
    if (config.cacheMode !== undefined) this.#allocators.setDeviceMode(0, config.cacheMode);
    return record;
  });

  /** Make a context speaking `protocol`. */
  constructor(protocol: ContextProtocol, options: ContextOptions = {}) {
    this.protocol = Object.freeze({ major: protocol.major, minor: protocol.minor });
    this.#table = new BufferTable(this.ledger, this.#allocators, options.table);
  }

  /** Debug switches: `ctx.debug.captureStacks = true` records where each ledger entry was made. */
  get debug(): LedgerDebug {
    return this.ledger.debug;
  }

  setup(cfg?: SetupConfig): Promise<DeviceInfo> {
    // The pointer tag is settled before device 0 (and so the first pointer) exists.
    return this.#table.claimUniqueTag().then(() => this.#setup.run(cfg));
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
    const live = this.#table.livePointersOn(record);
    if (live > 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", `device ${id} still has ${live} live GPU pointer(s)`, {
        field: "deviceId", value: id, expected: "a device whose pointers were all freed with freeWebGPU" });
    }
    this.#devices.unregister(id);
    this.#allocators.forget(record)?.drain();
    releaseTransfers(record.device);
    this.#guards.delete(record);
  }

  onDeviceLost(listener: DeviceLostListener): () => void {
    return this.#devices.onDeviceLost(listener);
  }

  async allocWebGPUChecked(nbytes: number, options: AllocOptions = {}): Promise<GPUPointer> {
    const req = this.#request(nbytes, options, "allocWebGPUChecked");
    const { record, allocator } = req;
    const cached = allocator.take(req.size, req.usage, req.ownerLabel);
    if (cached !== undefined) return this.#insertAllocated(req, cached);
    if (allocator.throttle.overBudget) await allocator.throttle.relieve();
    const buffer = await createCheckedBuffer(record.device, {
      size: req.size, usage: req.usage, deviceId: record.id, ...(req.label !== undefined ? { label: req.label } : {}) });
    if (record.lost) {
      buffer.destroy();
      throw lostError(record, "allocWebGPUChecked");
    }
    if (!record.current) {
      // Unregistered (or replaced by a new setup) while the buffer was being created: nothing may point into it.
      buffer.destroy();
      throw new WebDLPackError("UNKNOWN_DEVICE", `device ${record.id} was unregistered while allocWebGPUChecked waited`, {
        field: "options.deviceId", value: record.id, expected: "a device that stays registered until its allocations finish" });
    }
    return this.#insertAllocated(req, buffer);
  }

  allocWebGPU(nbytes: number, options: AllocOptions = {}): GPUPointer {
    const req = this.#request(nbytes, options, "allocWebGPU");
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

  /** Protocol 1.1's name of {@link allocWebGPU}, kept for copies of webdlpack that speak 1.1 (docs/spec.md P1). */
  allocWebGPUSync(nbytes: number, options: AllocOptions = {}): GPUPointer {
    return this.allocWebGPU(nbytes, options);
  }

  /**
   * WebGPU reported that `buffer` (from allocWebGPU as `first`) was never
   * created. Whoever holds it now gets the error on use: the pointer that
   * names it (the first one, or a later one if it was freed and reused from
   * the cache); if it sits in the cache, it is taken out and destroyed.
   * Returns the error as the pointer reports it.
   */
  #poison(buffer: GPUBuffer, allocator: DeviceAllocator, error: WebDLPackError, first: GPUPointer): WebDLPackError {
    const current = this.#table.pointerOf(buffer);
    const ptr = current ?? first;
    const shown = formatPointer(ptr);
    const late = new WebDLPackError(error.code, `allocWebGPU: GPU pointer ${shown} has no usable buffer: ${error.message}`, {
      field: "ptr", value: ptr, expected: "a pointer whose buffer WebGPU created (check ctx.lastAsyncError() after sync allocations)",
      cause: error });
    this.#lastAsyncError = late;
    if (current !== undefined && this.#table.get(current).buffer === buffer) {
      this.#table.poison(current, late);
      return late;
    }
    if (allocator.cache.remove(buffer)) allocator.discard(buffer);
    return late;
  }

  lastAsyncError(): WebDLPackError | null {
    return this.#lastAsyncError;
  }

  /** Check allocation arguments (all synchronous checks) and pick the size. */
  #request(nbytes: number, options: AllocOptions, fn: string): AllocRequest {
    const opts = checkOptions(options, fn, ALLOC_OPTION_KEYS);
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
    const allocator = this.#allocators.get(record);
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
    return this.#table.insert(entry, req.scoped);
  }

  setCacheMode(mode: CacheMode, options: CacheModeOptions = {}): void {
    const opts = checkOptions(options, "setCacheMode");
    const checked = checkCacheMode(mode, "mode");
    const deviceId = opts.deviceId;
    if (deviceId !== undefined) this.#devices.record(deviceId); // UNKNOWN_DEVICE for a bad id
    this.#allocators.apply({ mode: checked, deviceId, cacheLimits: opts.cacheLimits, throttleLimits: opts.throttleLimits });
  }

  getCacheMode(deviceId = 0): CacheMode {
    return this.#allocators.modeOf(deviceId);
  }

  async flush(deviceId?: number): Promise<void> {
    const targets = deviceId === undefined
      ? [...this.#allocators.byDevice.values()]
      : [this.#allocators.get(this.#devices.record(deviceId))];
    await Promise.all(targets.map((a) => a.throttle.flush()));
  }

  async readback(ptr: GPUPointer, range?: ReadbackRange): Promise<ArrayBuffer> {
    return readbackEntry(this.#table.usable(ptr, "readback"), range);
  }

  async readbackInto(ptr: GPUPointer, target: ReadbackTarget, range?: ReadbackRange): Promise<void> {
    return readbackEntryInto(this.#table.usable(ptr, "readbackInto"), target, range);
  }

  upload(ptr: GPUPointer, source: ReadbackTarget, range?: Pick<ReadbackRange, "byteOffset">): void {
    uploadEntry(this.#table.usable(ptr, "upload"), source, range);
  }

  copyBuffer(src: GPUPointer, dst: GPUPointer, range?: CopyRange): void {
    copyEntries(this.#table.usable(src, "copyBuffer"), this.#table.usable(dst, "copyBuffer"), range);
  }

  clearBuffer(ptr: GPUPointer, range?: ReadbackRange): void {
    clearEntry(this.#table.usable(ptr, "clearBuffer"), range);
  }

  transferStats(deviceId = 0): TransferStats {
    const record = this.#devices.record(deviceId);
    return transfersFor(record.device, record.adapterInfo).stats();
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
    const opts = checkOptions(options, "registerGPUBuffer", REGISTER_OPTION_KEYS);
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
    if (opts.tracked !== undefined && typeof opts.tracked !== "boolean") {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad registerGPUBuffer option", {
        field: "options.tracked", value: describeValue(opts.tracked), expected: "true or false" });
    }
    const existing = this.#table.pointerOf(buffer);
    if (existing !== undefined) {
      throw new WebDLPackError("INVALID_ARGUMENT", `this GPUBuffer is already in the pointer table as ${formatPointer(existing)}`, {
        field: "buffer", value: existing, expected: "a buffer not yet registered (reuse the existing pointer)" });
    }
    const ptr = this.#table.insert({
      buffer, device: record, requestedSize: buffer.size, owned: opts.owned ?? false, owner: opts.owner,
      ownerLabel: ownerLabel(opts.owner), onRelease: opts.onRelease, pooled: false, ledger: undefined, released: false, asyncError: undefined,
    }, true, opts.tracked ?? true);
    // Destroyed, or another GPUDevice's: WebGPU says so asynchronously; the pointer then refuses every use.
    // A buffer already verified on this device (frameworks reuse theirs) costs no GPU call (register-check.ts).
    void checkRegisteredBuffer(record.device, buffer, ptr, record.id)?.then((refusal) => {
      if (refusal !== null && this.#table.pointerOf(buffer) === ptr) this.#table.poison(ptr, refusal);
    });
    return ptr;
  }

  gpuPointerToBuffer(ptr: GPUPointer): GPUBuffer {
    if (typeof ptr !== "number") checkPointerType(ptr, "gpuPointerToBuffer");
    return this.#table.translate(ptr);
  }

  gpuPointerInfo(ptr: GPUPointer): GPUPointerInfo {
    checkPointerType(ptr, "gpuPointerInfo");
    return this.#table.info(ptr);
  }

  freeWebGPU(ptr: GPUPointer): void {
    checkPointerType(ptr, "freeWebGPU");
    this.#table.free(ptr);
  }

  /**
   * Device loss: release every ledger entry of the device (tensors first, so
   * their own release code runs), then release this context's buffers on it,
   * keeping their pointers in the table so they keep failing with DEVICE_LOST
   * until freed; drop the cache, staging buffers and guards.
   */
  #deviceLost(record: DeviceRecord): void {
    if (record.current) this.ledger.releaseDevice(record.id, (e) => this.#table.isOwnEntry(e));
    this.#table.loseDevice(record);
    this.#allocators.forget(record)?.lose();
    transfersFor(record.device, record.adapterInfo).lose(record.lostReason);
    this.#guards.delete(record);
  }

  stats(): ContextStats {
    return collectStats({
      devices: this.#devices.list(), allocators: this.#allocators.byDevice, guards: this.#guards, table: this.#table, ledger: this.ledger,
      modeOf: (record) => this.#allocators.modeOf(record.id),
    });
  }
}


/** `options` after checking it is an object (and, given `known`, has no other keys); INVALID_ARGUMENT otherwise. */
function checkOptions<T extends object>(options: T, fn: string, known?: readonly string[]): T {
  requireObject(options, "options", "an object or undefined", `bad ${fn} options`);
  if (known !== undefined && !hasOnlyKnownKeys(options, known)) checkOptionKeys(options, fn, known);
  return options;
}

/** True when every own key of `options` is in `known` (the hot path: no key array allocated; checkOptionKeys reports). */
function hasOnlyKnownKeys(options: object, known: readonly string[]): boolean {
  for (const key in options) {
    if (!known.includes(key) && Object.hasOwn(options, key)) return false;
  }
  return true;
}

/** The option keys allocWebGPU / allocWebGPUChecked know (AllocOptions); any other is INVALID_ARGUMENT. */
const ALLOC_OPTION_KEYS: readonly string[] = ["deviceId", "usage", "label", "owner", "onAsyncError", "scoped"];
/** The option keys registerGPUBuffer knows (RegisterBufferOptions). */
const REGISTER_OPTION_KEYS: readonly string[] = ["deviceId", "owned", "owner", "onRelease", "tracked"];

/** INVALID_POINTER unless `ptr` is a number (a BigInt, string... never reaches the table's bit arithmetic). */
function checkPointerType(ptr: unknown, fn: string): void {
  if (typeof ptr !== "number") {
    throw new WebDLPackError("INVALID_POINTER", `${fn}: not a GPU pointer`, {
      field: "ptr", value: describeValue(ptr), expected: "a GPU pointer: a nonzero unsigned 32-bit number (not a BigInt)" });
  }
}
