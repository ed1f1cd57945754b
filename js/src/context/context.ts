/**
 * The class behind the page-wide {@link WebDLPackContext}: ties the device
 * registry, device setup, the per-device allocators and the GPU buffer
 * table together. Its parts: pointers/buffer-table.ts (pointers → buffers),
 * stats.ts (`stats()`), devices/setup.ts, allocation/device-allocator.ts, transfers/context-calls.ts, ledger/ledger.ts.
 *
 * Not exported from the package: use `getContext()`, so a page has one.
 */
import { describeValue } from "../describe-value.js";
import { checkOptions } from "../arguments.js";
import { WebDLPackError } from "../errors.js";
import { isGPUBuffer } from "./allocation/create.js";
import { PointerAllocations } from "./allocation/pointer-allocations.js";
import { Allocators } from "./allocation/allocators.js";
import { checkCacheMode, type CacheMode } from "./allocation/buffer-cache.js";
import { BufferTable, type BufferEntry } from "./pointers/buffer-table.js";
import { DefaultDeviceSetup } from "./devices/default-device.js";
import { DeviceGuards, unwrapDevice } from "./devices/guard.js";
import {
  DeviceRegistry,
  summarizeAdapterInfo,
  type DeviceLostListener,
  type DeviceRecord,
} from "./devices/registry.js";
import { ownerLabel, type LeakReport, type LedgerDebug } from "./ledger/entry.js";
import { Ledger } from "./ledger/ledger.js";
import { formatPointer, type GPUPointer, type PointerTableOptions } from "./pointers/pointer-format.js";
import { checkRegisteredBuffer, pendingBufferCheck } from "./pointers/register-check.js";
import { clearEntry, copyEntries, readbackEntry, readbackEntryInto, uploadEntry } from "./transfers/context-calls.js";
import {
  releaseTransfers,
  transfersFor,
  type CopyRange,
  type ReadbackRange,
  type ReadbackTarget,
  type TransferStats,
} from "./transfers/index.js";
import { checkMemoryBudget, type DeviceInfo, type SetupConfig } from "./devices/setup.js";
import {
  checkPressureArguments,
  ContextMemory,
  ownCachesOf,
  type MemoryPressureHandler,
  type MemoryPressureOptions,
  type MemoryReport,
} from "./memory/index.js";
import { CACHE_MODE_OPTION_RULES, checkPointerType, DEVICE_OPTION_RULES, REGISTER_OPTION_RULES } from "./options.js";
import { collectStats } from "./stats.js";
import type {
  AllocOptions,
  CacheModeOptions,
  ContextProtocol,
  ContextStats,
  DeviceOptions,
  GPUPointerInfo,
  RegisterBufferOptions,
  WebDLPackContext,
} from "./types.js";

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
  readonly #alloc: PointerAllocations;
  readonly #memory = new ContextMemory();
  readonly #setup = new DefaultDeviceSetup(
    (device, adapterInfo, config) => {
      const record = this.#devices.setDefault(device, adapterInfo);
      if (config.cacheMode !== undefined) this.#allocators.setDeviceMode(0, config.cacheMode);
      if (config.memoryBudget !== undefined) this.#memory.setBudget(0, config.memoryBudget);
      if (config.memoryAccounting !== false) this.#memory.attach(0, device, ownCachesOf(this.#allocators, record));
      else this.#memory.detach(device);
      return record;
    },
    // setup() resolves once the transfers are measured on the device and their staging is ready (calibrate.ts).
    (device, adapterInfo) => transfersFor(device, adapterInfo).calibrate(),
  );

  /** Make a context speaking `protocol`. */
  constructor(protocol: ContextProtocol, options: ContextOptions = {}) {
    this.protocol = Object.freeze({ major: protocol.major, minor: protocol.minor });
    this.#table = new BufferTable(this.ledger, this.#allocators, options.table);
    this.#alloc = new PointerAllocations(this.#devices, this.#allocators, this.#table, this.#memory);
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
    const opts = checkOptions(options, "getWebGPUDevice", DEVICE_OPTION_RULES);
    if (opts.owner === undefined) return record.device;
    let guards = this.#guards.get(record);
    if (guards === undefined) {
      guards = new DeviceGuards(record.device);
      this.#guards.set(record, guards);
    }
    return guards.acquire(opts.owner);
  }

  registerWebGPUDevice(device: GPUDevice, adapterInfo?: GPUAdapterInfo | object): number {
    const real = unwrapDevice(device);
    const info =
      summarizeAdapterInfo((real as { adapterInfo?: unknown } | null)?.adapterInfo) ??
      summarizeAdapterInfo(adapterInfo);
    const id = this.#devices.register(real, info);
    const record = this.#devices.record(id);
    this.#memory.attach(id, record.device, ownCachesOf(this.#allocators, record)); // no-op when attached
    return id;
  }

  unregisterWebGPUDevice(id: number): void {
    const record = this.#devices.record(id);
    const live = this.#table.livePointersOn(record);
    if (live > 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", `device ${id} still has ${live} live GPU pointer(s)`, {
        field: "deviceId",
        value: id,
        expected: "a device whose pointers were all freed with freeWebGPU",
      });
    }
    this.#devices.unregister(id);
    this.#allocators.forget(record)?.drain();
    this.#memory.detach(record.device);
    releaseTransfers(record.device);
    this.#guards.delete(record);
  }

  onDeviceLost(listener: DeviceLostListener): () => void {
    return this.#devices.onDeviceLost(listener);
  }

  allocWebGPUChecked(nbytes: number, options: AllocOptions = {}): Promise<GPUPointer> {
    return this.#alloc.checked(nbytes, options);
  }

  allocWebGPU(nbytes: number, options: AllocOptions = {}): GPUPointer {
    return this.#alloc.sync(nbytes, options);
  }

  /** Protocol 1.1's name of {@link allocWebGPU}, kept for copies of webdlpack that speak 1.1 (docs/spec.md P1). */
  allocWebGPUSync(nbytes: number, options: AllocOptions = {}): GPUPointer {
    return this.#alloc.sync(nbytes, options);
  }

  lastAsyncError(): WebDLPackError | null {
    return this.#alloc.lastAsyncError;
  }

  setCacheMode(mode: CacheMode, options: CacheModeOptions = {}): void {
    const opts = checkOptions(options, "setCacheMode", CACHE_MODE_OPTION_RULES);
    const checked = checkCacheMode(mode, "mode");
    const deviceId = opts.deviceId;
    if (deviceId !== undefined) this.#devices.record(deviceId); // UNKNOWN_DEVICE for a bad id
    this.#allocators.apply({
      mode: checked,
      deviceId,
      cacheLimits: opts.cacheLimits,
      throttleLimits: opts.throttleLimits,
    });
  }

  getCacheMode(deviceId = 0): CacheMode {
    return this.#allocators.modeOf(deviceId);
  }

  async flush(deviceId?: number): Promise<void> {
    const targets =
      deviceId === undefined
        ? [...this.#allocators.byDevice.values()]
        : [this.#allocators.get(this.#devices.record(deviceId))];
    await Promise.all(targets.map((a) => a.throttle.flush()));
  }

  async readback(ptr: GPUPointer, range?: ReadbackRange): Promise<ArrayBuffer> {
    const entry = this.#table.usable(ptr, "readback");
    const wait = pendingBufferCheck(entry.buffer, ptr, entry.device.id);
    if (wait === null) return readbackEntry(entry, range);
    return this.#afterCheck(wait, ptr, "readback").then((checked) => readbackEntry(checked, range));
  }

  async readbackInto(ptr: GPUPointer, target: ReadbackTarget, range?: ReadbackRange): Promise<void> {
    const entry = this.#table.usable(ptr, "readbackInto");
    const wait = pendingBufferCheck(entry.buffer, ptr, entry.device.id);
    if (wait === null) return readbackEntryInto(entry, target, range);
    return this.#afterCheck(wait, ptr, "readbackInto").then((checked) => readbackEntryInto(checked, target, range));
  }

  /** `ptr`'s entry once its buffer's register check (still running when the read was asked for) let it through. */
  async #afterCheck(wait: Promise<WebDLPackError | null>, ptr: GPUPointer, operation: string): Promise<BufferEntry> {
    const refused = await wait;
    if (refused !== null) throw refused;
    return this.#table.usable(ptr, operation);
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
    const opts = checkOptions(options, "registerGPUBuffer", REGISTER_OPTION_RULES);
    if (!isGPUBuffer(buffer)) {
      throw new WebDLPackError("INVALID_ARGUMENT", "registerGPUBuffer needs a GPUBuffer", {
        field: "buffer",
        value: describeValue(buffer),
        expected: "a GPUBuffer (size, usage, destroy)",
      });
    }
    const deviceId = opts.deviceId ?? 0;
    const record = this.#devices.live(deviceId, "registerGPUBuffer");
    const existing = this.#table.pointerOf(buffer);
    if (existing !== undefined) {
      throw new WebDLPackError(
        "INVALID_ARGUMENT",
        `this GPUBuffer is already in the pointer table as ${formatPointer(existing)}`,
        {
          field: "buffer",
          value: existing,
          expected: "a buffer not yet registered (reuse the existing pointer)",
        },
      );
    }
    const ptr = this.#table.insert(
      {
        buffer,
        device: record,
        requestedSize: buffer.size,
        owned: opts.owned ?? false,
        owner: opts.owner,
        ownerLabel: ownerLabel(opts.owner),
        onRelease: opts.onRelease,
        pooled: false,
      },
      true,
      opts.tracked ?? true,
    );
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
    this.#memory.lose(record.device);
    transfersFor(record.device, record.adapterInfo).lose(record.lostReason);
    this.#guards.delete(record);
  }

  memory(deviceId = 0): MemoryReport {
    return this.#memory.report(deviceId, this.#devices.record(deviceId).device);
  }

  setMemoryBudget(bytes: number | null, deviceId = 0): void {
    const checked = checkMemoryBudget(bytes, "bytes");
    this.#memory.setBudget(deviceId, checked, this.#devices.record(deviceId).device); // UNKNOWN_DEVICE for a bad id
  }

  trimMemory(deviceId = 0): Promise<number> {
    return this.#memory.trim(this.#devices.record(deviceId).device);
  }

  onMemoryPressure(handler: MemoryPressureHandler | null, options?: MemoryPressureOptions): () => void {
    return this.#memory.handlers.add(handler, checkPressureArguments(handler, options));
  }

  stats(): ContextStats {
    return collectStats({
      devices: this.#devices.list(),
      allocators: this.#allocators.byDevice,
      guards: this.#guards,
      table: this.#table,
      ledger: this.ledger,
      modeOf: (record) => this.#allocators.modeOf(record.id),
    });
  }
}
