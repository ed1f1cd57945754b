/**
 * The class behind the page-wide {@link WebDLPackContext}: a thin façade over
 * the context's rooms (rooms.ts). Each public method is one call into the
 * room that does the job: devices/ (devices.ts), pointers/ (buffer-table.ts),
 * allocation/ (pointer-allocations.ts), transfers/ (context-calls.ts),
 * ledger/ (ledger.ts), memory/ (context-memory.ts); stats.ts reads them all.
 *
 * Not exported from the package: use `getContext()`, so a page has one.
 */
import type { WebDLPackError } from "../errors.js";
import type { CacheMode } from "./options.js";
import type { DeviceLostListener } from "./devices/registry.js";
import type { DeviceInfo, SetupConfig } from "./devices/setup.js";
import type { LeakReport, LedgerDebug, LedgerView } from "./ledger/entry.js";
import type { Ledger } from "./ledger/ledger.js";
import type { MemoryPressureHandler, MemoryPressureOptions, MemoryReport } from "./memory/index.js";
import type { GPUPointer, PointerTableOptions } from "./pointers/pointer-format.js";
import { makeRooms, type Rooms } from "./rooms.js";
import { collectStats } from "./stats.js";
import type { CopyRange, ReadbackRange, ReadbackTarget, TransferStats } from "./transfers/index.js";
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
  /** The ledger's public view; the object is the context's Ledger (other copies of webdlpack track through it). */
  readonly ledger: LedgerView;
  readonly #rooms: Rooms;
  readonly #ledger: Ledger;
  // Each room in a field of its own: one property load less per call (gpuPointerToBuffer is a few ns).
  readonly #devices: Rooms["devices"];
  readonly #pointers: Rooms["pointers"];
  readonly #allocation: Rooms["allocation"];
  readonly #transfers: Rooms["transfers"];
  readonly #memory: Rooms["memory"];

  /** Make a context speaking `protocol`. */
  constructor(protocol: ContextProtocol, options: ContextOptions = {}) {
    this.protocol = Object.freeze({ major: protocol.major, minor: protocol.minor });
    const rooms = makeRooms(options.table);
    this.#rooms = rooms;
    this.#ledger = rooms.ledger;
    this.ledger = rooms.ledger;
    this.#devices = rooms.devices;
    this.#pointers = rooms.pointers;
    this.#allocation = rooms.allocation;
    this.#transfers = rooms.transfers;
    this.#memory = rooms.memory;
  }

  /** Debug switches: `ctx.debug.captureStacks = true` records where each ledger entry was made. */
  get debug(): LedgerDebug {
    return this.#ledger.debug;
  }

  // ---- devices/
  setup(cfg?: SetupConfig): Promise<DeviceInfo> {
    return this.#devices.setup(cfg);
  }

  getWebGPUDevice(id?: number, options?: DeviceOptions): GPUDevice {
    return this.#devices.getWebGPUDevice(id, options);
  }

  registerWebGPUDevice(device: GPUDevice, adapterInfo?: GPUAdapterInfo | object): number {
    return this.#devices.registerWebGPUDevice(device, adapterInfo);
  }

  unregisterWebGPUDevice(id: number): void {
    this.#devices.unregisterWebGPUDevice(id);
  }

  onDeviceLost(listener: DeviceLostListener): () => void {
    return this.#devices.onDeviceLost(listener);
  }

  // ---- allocation/
  allocWebGPUChecked(nbytes: number, options: AllocOptions = {}): Promise<GPUPointer> {
    return this.#allocation.checked(nbytes, options);
  }

  allocWebGPU(nbytes: number, options: AllocOptions = {}): GPUPointer {
    return this.#allocation.sync(nbytes, options);
  }

  /** Protocol 1.1's name of {@link allocWebGPU}, kept for copies of webdlpack that speak 1.1 (docs/spec.md P1). */
  allocWebGPUSync(nbytes: number, options: AllocOptions = {}): GPUPointer {
    return this.#allocation.sync(nbytes, options);
  }

  lastAsyncError(): WebDLPackError | null {
    return this.#allocation.lastAsyncError;
  }

  setCacheMode(mode: CacheMode, options?: CacheModeOptions): void {
    this.#allocation.setCacheMode(mode, options);
  }

  getCacheMode(deviceId?: number): CacheMode {
    return this.#allocation.getCacheMode(deviceId);
  }

  flush(deviceId?: number): Promise<void> {
    return this.#allocation.flush(deviceId);
  }

  // ---- transfers/
  readback(ptr: GPUPointer, range?: ReadbackRange): Promise<ArrayBuffer> {
    return this.#transfers.readback(ptr, range);
  }

  readbackInto(ptr: GPUPointer, target: ReadbackTarget, range?: ReadbackRange): Promise<void> {
    return this.#transfers.readbackInto(ptr, target, range);
  }

  upload(ptr: GPUPointer, source: ReadbackTarget, range?: Pick<ReadbackRange, "byteOffset">): void {
    this.#transfers.upload(ptr, source, range);
  }

  copyBuffer(src: GPUPointer, dst: GPUPointer, range?: CopyRange): void {
    this.#transfers.copyBuffer(src, dst, range);
  }

  clearBuffer(ptr: GPUPointer, range?: ReadbackRange): void {
    this.#transfers.clearBuffer(ptr, range);
  }

  transferStats(deviceId?: number): TransferStats {
    return this.#transfers.transferStats(deviceId);
  }

  // ---- ledger/
  scope<T>(fn: () => T): T {
    return this.#ledger.scope(fn);
  }

  keep<T>(x: T): T {
    return this.#ledger.keep(x);
  }

  dispose(x: unknown): boolean {
    return this.#ledger.dispose(x);
  }

  leaks(): LeakReport[] {
    return this.#ledger.leaks();
  }

  // ---- pointers/
  registerGPUBuffer(buffer: GPUBuffer, options?: RegisterBufferOptions): GPUPointer {
    return this.#pointers.register(buffer, options);
  }

  gpuPointerToBuffer(ptr: GPUPointer): GPUBuffer {
    return this.#pointers.translate(ptr);
  }

  gpuPointerInfo(ptr: GPUPointer): GPUPointerInfo {
    return this.#pointers.info(ptr);
  }

  freeWebGPU(ptr: GPUPointer): void {
    this.#pointers.free(ptr);
  }

  // ---- memory/
  memory(deviceId?: number): MemoryReport {
    return this.#memory.memory(deviceId);
  }

  setMemoryBudget(bytes: number | null, deviceId?: number): void {
    this.#memory.setMemoryBudget(bytes, deviceId);
  }

  trimMemory(deviceId?: number): Promise<number> {
    return this.#memory.trimMemory(deviceId);
  }

  onMemoryPressure(handler: MemoryPressureHandler | null, options?: MemoryPressureOptions): () => void {
    return this.#memory.onMemoryPressure(handler, options);
  }

  // ---- stats.ts
  stats(): ContextStats {
    return collectStats(this.#rooms);
  }
}
