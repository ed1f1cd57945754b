/**
 * The class behind the page-wide {@link WebDLPackContext}: ties the device
 * registry, device setup and the GPU pointer table together.
 *
 * Not exported from the package: use `getContext()`, so a page has one.
 */
import { WebDLPackError } from "../errors.js";
import { allocationSize, checkByteCount, checkUsage, createCheckedBuffer, DEFAULT_GPU_USAGE } from "./allocation.js";
import {
  DeviceRegistry, describeValue, lostError, summarizeAdapterInfo,
  type DeviceLostListener, type DeviceRecord,
} from "./devices.js";
import { formatPointer, PointerTable, type GPUPointer, type PointerTableOptions } from "./pointer-table.js";
import { acquireDevice, checkFeatures, checkLimits, checkSetupConfig, describeDevice, type DeviceInfo, type SetupConfig } from "./setup.js";
import type {
  AllocOptions, ContextProtocol, ContextStats, DeviceStats, GPUPointerInfo, RegisterBufferOptions, WebDLPackContext,
} from "./types.js";

/** What the pointer table holds for each pointer. */
interface BufferEntry {
  readonly buffer: GPUBuffer;
  readonly device: DeviceRecord;
  readonly requestedSize: number;
  readonly owned: boolean;
  readonly owner: unknown;
  readonly onRelease: ((buffer: GPUBuffer, ptr: GPUPointer) => void) | undefined;
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
  readonly #devices = new DeviceRegistry();
  readonly #table: PointerTable<BufferEntry>;
  /** Buffers in the table, to refuse adopting one twice. */
  readonly #byBuffer = new WeakMap<GPUBuffer, GPUPointer>();
  #setup: SetupState | undefined;

  /** Make a context speaking `protocol`. */
  constructor(protocol: ContextProtocol, options: ContextOptions = {}) {
    this.protocol = Object.freeze({ major: protocol.major, minor: protocol.minor });
    this.#table = new PointerTable<BufferEntry>(options.table);
  }

  setup(cfg?: SetupConfig): Promise<DeviceInfo> {
    let config: SetupConfig;
    try {
      config = checkSetupConfig(cfg);
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

  getWebGPUDevice(id = 0): GPUDevice {
    return this.#devices.live(id, "getWebGPUDevice").device;
  }

  registerWebGPUDevice(device: GPUDevice, adapterInfo?: GPUAdapterInfo | object): number {
    const info = summarizeAdapterInfo((device as { adapterInfo?: unknown } | null)?.adapterInfo) ?? summarizeAdapterInfo(adapterInfo);
    return this.#devices.register(device, info);
  }

  unregisterWebGPUDevice(id: number): void {
    const record = this.#devices.record(id);
    let live = 0;
    this.#table.forEach((entry) => {
      if (entry.device === record) live += 1;
    });
    if (live > 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", `device ${id} still has ${live} live GPU pointer(s)`, {
        field: "deviceId", value: id, expected: "a device whose pointers were all freed with freeWebGPU" });
    }
    this.#devices.unregister(id);
  }

  onDeviceLost(listener: DeviceLostListener): () => void {
    return this.#devices.onDeviceLost(listener);
  }

  async allocWebGPU(nbytes: number, options: AllocOptions = {}): Promise<GPUPointer> {
    const opts = checkOptions(options, "allocWebGPU");
    const deviceId = opts.deviceId ?? 0;
    const record = this.#devices.live(deviceId, "allocWebGPU");
    const limit = record.device.limits.maxBufferSize;
    const requested = checkByteCount(nbytes, limit, deviceId);
    const usage = checkUsage(opts.usage ?? DEFAULT_GPU_USAGE);
    if (opts.label !== undefined && typeof opts.label !== "string") {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad allocWebGPU option", {
        field: "options.label", value: describeValue(opts.label), expected: "a string" });
    }
    const request = { size: allocationSize(requested, limit), usage, deviceId, ...(opts.label !== undefined ? { label: opts.label } : {}) };
    const buffer = await createCheckedBuffer(record.device, request);
    if (record.lost) {
      buffer.destroy();
      throw lostError(record, "allocWebGPU");
    }
    return this.#insert({ buffer, device: record, requestedSize: requested, owned: true, owner: opts.owner, onRelease: undefined });
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
      buffer, device: record, requestedSize: buffer.size, owned: opts.owned ?? false, owner: opts.owner, onRelease: opts.onRelease,
    });
  }

  /** The single place entries enter the table (a pool or ledger hooks in here). */
  #insert(entry: BufferEntry): GPUPointer {
    let ptr: GPUPointer;
    try {
      ptr = this.#table.insert(entry);
    } catch (err) {
      if (entry.owned) entry.buffer.destroy();
      throw err;
    }
    this.#byBuffer.set(entry.buffer, ptr);
    return ptr;
  }

  gpuPointerToBuffer(ptr: GPUPointer): GPUBuffer {
    const entry = this.#table.get(ptr);
    if (entry.device.lost) throw lostError(entry.device, "gpuPointerToBuffer", formatPointer(ptr));
    return entry.buffer;
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
    if (entry.owned) {
      entry.buffer.destroy();
    }
    // The slot is released before user code runs, so a throwing onRelease leaks nothing.
    entry.onRelease?.(entry.buffer, ptr);
  }

  stats(): ContextStats {
    const rows = new Map<DeviceRecord, DeviceStats>();
    const row = (record: DeviceRecord): DeviceStats => {
      let r = rows.get(record);
      if (!r) {
        r = { deviceId: record.id, lost: record.lost, current: record.current, livePointers: 0, liveBytes: 0, requestedBytes: 0 };
        rows.set(record, r);
      }
      return r;
    };
    for (const record of this.#devices.list()) row(record);
    let livePointers = 0;
    let liveBytes = 0;
    this.#table.forEach((entry) => {
      const r = row(entry.device);
      r.livePointers += 1;
      r.liveBytes += entry.buffer.size;
      r.requestedBytes += entry.requestedSize;
      livePointers += 1;
      liveBytes += entry.buffer.size;
    });
    const devices = [...rows.values()].sort((a, b) => a.deviceId - b.deviceId || Number(b.current) - Number(a.current));
    return { devices, livePointers, liveBytes, retiredSlots: this.#table.retiredSlots };
  }
}

/** A config for re-requesting after loss: same adapter options, minus the (lost) user device. */
function withoutDevice(cfg: SetupConfig): SetupConfig {
  const { device: _device, adapterInfo: _info, ...rest } = cfg;
  return rest;
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
