/**
 * The allocation room's calls (allocWebGPU, allocWebGPUChecked, lastAsyncError,
 * setCacheMode, getCacheMode, flush): check the arguments, take a cached buffer
 * or create one (under error scopes when checked), and give it a GPU pointer; a
 * sync allocation WebGPU later refuses poisons whatever holds that buffer then.
 */
import { checkOptions } from "../../arguments.js";
import { WebDLPackError } from "../../errors.js";
import type { DeviceRecord, DeviceRegistry } from "../devices/registry.js";
import { lostError } from "../devices/registry.js";
import { ownerLabel } from "../ledger/entry.js";
import { ALLOC_OPTION_RULES, CACHE_MODE_OPTION_RULES } from "../options.js";
import type { BufferTable } from "./buffer-table.js";
import { formatPointer, type GPUPointer } from "./pointer-format.js";
import type { Allocators } from "../allocation/allocators.js";
import { checkCacheMode, type CacheMode } from "../options.js";
import {
  checkByteCount,
  checkUsage,
  createBufferUnchecked,
  createCheckedBuffer,
  DEFAULT_GPU_USAGE,
} from "../ground/create.js";
import type { DeviceAllocator } from "../allocation/device-allocator.js";
import { WEBDLPACK_OWNER } from "../ground/meter.js";
import { createWithRoom, type ContextMemory } from "../memory/index.js";
import type { CacheLimits } from "../allocation/buffer-cache.js";
import type { ThrottleLimits } from "../allocation/destroy-throttle.js";

/** Options of {@link WebDLPackContext.allocWebGPU}. */
export interface AllocOptions {
  /** Device id (default 0, the `setup()` device). */
  deviceId?: number;
  /** GPUBufferUsage flags (default STORAGE | COPY_SRC | COPY_DST). */
  usage?: number;
  /** Debug label for the GPUBuffer. */
  label?: string;
  /** Who holds the allocation: a framework name such as "onnxruntime" (reported by gpuPointerInfo, the ledger, stats). */
  owner?: string;
  /**
   * allocWebGPU only: called once if WebGPU reports, after the pointer was
   * returned, that the buffer could not be made (the same error the pointer
   * then throws on use, also kept as `lastAsyncError()`). Errors it throws are logged.
   */
  onAsyncError?: (error: WebDLPackError, ptr: GPUPointer) => void;
  /**
   * false: the pointer never joins an open `ctx.scope()` — for memory another runtime frees (C's
   * wdl_webgpu_free, a Python tensor), which a JS scope must not free behind its back. Default true.
   */
  scoped?: boolean;
}

/** Options of {@link WebDLPackContext.setCacheMode}. */
export interface CacheModeOptions {
  /** Only this device (else: the default of every device without its own mode). */
  deviceId?: number;
  /** Cache caps (merged over the defaults or the previous ones). */
  cacheLimits?: Partial<CacheLimits>;
  /** Destroy-throttle budgets. */
  throttleLimits?: Partial<ThrottleLimits>;
}

/** Validated allocation arguments. */
interface AllocRequest {
  record: DeviceRecord;
  allocator: DeviceAllocator;
  requested: number;
  usage: number;
  size: number;
  label: string | undefined;
  owner: string | undefined;
  ownerLabel: string;
  /** Joins an open scope (AllocOptions.scoped). */
  scoped: boolean;
}

/** Allocating GPU buffers behind pointers, for one context. */
export class PointerAllocations {
  /** The last error WebGPU reported late for a sync allocation (ctx.lastAsyncError()). */
  lastAsyncError: WebDLPackError | null = null;
  readonly #devices: DeviceRegistry;
  readonly #allocators: Allocators;
  readonly #table: BufferTable;
  /** The memory room: budget checks, room made before crossing it or after a device out-of-memory error. */
  readonly #memory: ContextMemory;

  constructor(devices: DeviceRegistry, allocators: Allocators, table: BufferTable, memory: ContextMemory) {
    this.#devices = devices;
    this.#allocators = allocators;
    this.#table = table;
    this.#memory = memory;
  }

  /** The per-device allocators (their caches, modes and counters). */
  get allocators(): Allocators {
    return this.#allocators;
  }

  /** allocWebGPUChecked: a buffer WebGPU confirmed, or the typed error. */
  async checked(nbytes: number, options: AllocOptions): Promise<GPUPointer> {
    const req = this.#request(nbytes, options, "allocWebGPUChecked");
    const { record, allocator } = req;
    const cached = allocator.take(req.size, req.usage, req.ownerLabel);
    if (cached !== undefined) return this.#insert(req, cached);
    if (allocator.throttle.overBudget) await allocator.throttle.relieve();
    const request = {
      size: req.size,
      usage: req.usage,
      deviceId: record.id,
      ...(req.label !== undefined ? { label: req.label } : {}),
    };
    // Room is made first when the budget would be crossed; one device out-of-memory error is retried.
    const buffer = await createWithRoom(this.#memory, record.device, req.size, () =>
      createCheckedBuffer(record.device, request),
    );
    if (record.lost) {
      buffer.destroy();
      throw lostError(record, "allocWebGPUChecked");
    }
    if (!record.current) {
      // Unregistered (or replaced by a new setup) while the buffer was being created: nothing may point into it.
      buffer.destroy();
      throw new WebDLPackError(
        "UNKNOWN_DEVICE",
        `device ${record.id} was unregistered while allocWebGPUChecked waited`,
        {
          field: "options.deviceId",
          value: record.id,
          expected: "a device that stays registered until its allocations finish",
        },
      );
    }
    return this.#insert(req, buffer);
  }

  /** allocWebGPU: a pointer now; WebGPU's verdict on the buffer comes later (options.onAsyncError). */
  sync(nbytes: number, options: AllocOptions): GPUPointer {
    const req = this.#request(nbytes, options, "allocWebGPU");
    const { record, allocator } = req;
    const cached = allocator.take(req.size, req.usage, req.ownerLabel);
    if (cached !== undefined) return this.#insert(req, cached);
    // Over the destroy budget a sync caller can not wait: the throttle's markers
    // are already submitted, so the GPU process can reclaim; allocate anyway.
    const { buffer, verdict } = createBufferUnchecked(record.device, {
      size: req.size,
      usage: req.usage,
      deviceId: record.id,
      ...(req.label !== undefined ? { label: req.label } : {}),
    });
    const ptr = this.#insert(req, buffer);
    const notify = options.onAsyncError;
    void verdict.then((error) => {
      if (error === null) return;
      if (error.code === "OUT_OF_MEMORY")
        void this.#memory.makeRoom(record.device, req.size, WEBDLPACK_OWNER, "out-of-memory"); // for the next one
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
    const late = new WebDLPackError(
      error.code,
      `allocWebGPU: GPU pointer ${shown} has no usable buffer: ${error.message}`,
      {
        field: "ptr",
        value: ptr,
        expected: "a pointer whose buffer WebGPU created (check ctx.lastAsyncError() after sync allocations)",
        cause: error,
      },
    );
    this.lastAsyncError = late;
    if (current !== undefined && this.#table.get(current).buffer === buffer) {
      this.#table.poison(current, late);
      return late;
    }
    if (allocator.cache.remove(buffer)) allocator.discard(buffer);
    return late;
  }

  /** `ctx.setCacheMode(mode, options)`: every device's default mode, or one device's. */
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

  /** `ctx.getCacheMode(deviceId)`. */
  getCacheMode(deviceId = 0): CacheMode {
    return this.#allocators.modeOf(deviceId);
  }

  /** `ctx.flush(deviceId)`: lazy releases destroyed and pending destroys confirmed, on one device or all. */
  async flush(deviceId?: number): Promise<void> {
    const targets =
      deviceId === undefined
        ? [...this.#allocators.byDevice.values()]
        : [this.#allocators.get(this.#devices.record(deviceId))];
    await Promise.all(targets.map((a) => a.throttle.flush()));
  }

  /** Check allocation arguments (all synchronous checks) and pick the size. */
  #request(nbytes: number, options: AllocOptions, fn: string): AllocRequest {
    const opts = checkOptions(options, fn, ALLOC_OPTION_RULES);
    const deviceId = opts.deviceId ?? 0;
    const record = this.#devices.live(deviceId, fn);
    const requested = checkByteCount(nbytes, record.device.limits.maxBufferSize, deviceId);
    const usage = checkUsage(opts.usage ?? DEFAULT_GPU_USAGE);
    const allocator = this.#allocators.get(record);
    return {
      record,
      allocator,
      requested,
      usage,
      size: allocator.sizeFor(requested, usage),
      label: opts.label,
      owner: opts.owner,
      ownerLabel: ownerLabel(opts.owner),
      scoped: opts.scoped !== false,
    };
  }

  #insert(req: AllocRequest, buffer: GPUBuffer): GPUPointer {
    if (req.label !== undefined && buffer.label !== req.label) buffer.label = req.label;
    return this.#table.insert(
      {
        buffer,
        device: req.record,
        requestedSize: req.requested,
        owned: true,
        owner: req.owner,
        ownerLabel: req.ownerLabel,
        onRelease: undefined,
        pooled: true,
        size: req.size,
        usage: req.usage,
      },
      req.scoped,
    );
  }
}
