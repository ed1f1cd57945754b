/**
 * The context's memory room: one {@link DeviceMeter} per device it owns, the
 * budgets, making room (webdlpack's caches first, then the pressure handlers,
 * then one retry) and the OUT_OF_MEMORY error that names the budget, the
 * request and the bytes by owner. Its calls: `ctx.memory()`, `setMemoryBudget`,
 * `trimMemory`, `onMemoryPressure`.
 */
import { WebDLPackError } from "../../errors.js";
import { checkMemoryBudget } from "../devices/setup.js";
import { DeviceMeter, WEBDLPACK_OWNER } from "../ground/meter.js";
import {
  checkPressureArguments,
  PressureHandlers,
  type MemoryPressure,
  type MemoryPressureHandler,
  type MemoryPressureOptions,
  type PressureReason,
} from "./pressure.js";

/** webdlpack's own caches on one device, as the memory room sees them. */
export interface OwnCaches {
  /** Give back every cached buffer now (bucket cache, kept staging buffers). */
  trim(): void;
  /** Bytes held in those caches now. */
  cachedBytes(): number;
}

/** One owner's row of `ctx.memory()`. */
export interface MemoryOwnerReport {
  /** "webdlpack", a framework's owner name (its device guard), or "page". */
  readonly owner: string;
  /** Bytes of the owner's buffers alive on the device (sum of `buffer.size`). */
  readonly bytes: number;
  /** How many buffers. */
  readonly buffers: number;
  /** Largest `bytes` seen. */
  readonly peakBytes: number;
  /** Of `bytes`, kept free for reuse by the owner's cache (null: the owner can not tell). */
  readonly cachedBytes: number | null;
  /** `bytes - cachedBytes` (null when cachedBytes is). */
  readonly liveBytes: number | null;
}

/** What `ctx.memory(deviceId)` returns. */
export interface MemoryReport {
  readonly deviceId: number;
  /** The budget in bytes, or null (none). */
  readonly budget: number | null;
  /** Bytes of every buffer counted on the device (the sum of the owners' bytes). */
  readonly totalBytes: number;
  readonly totalBuffers: number;
  /** Largest totalBytes seen. */
  readonly peakBytes: number;
  /** Rows by owner, in the order owners first allocated. */
  readonly owners: readonly MemoryOwnerReport[];
  /** Times room was made (budget crossed, or a device out-of-memory error). */
  readonly pressureEvents: number;
  /** Bytes given back while making room. */
  readonly trimmedBytes: number;
  /** OUT_OF_MEMORY errors thrown because room could not be made (webdlpack's own allocations only). */
  readonly outOfMemoryErrors: number;
  /**
   * Creations by a framework (its device guard) or the page that crossed the budget after room was made
   * and went ahead: WebGPU's `createBuffer` never throws, so neither does webdlpack's on their behalf.
   */
  readonly budgetOverruns: number;
  /** Out-of-memory errors the device reported (caught by webdlpack's scopes or uncaptured). */
  readonly deviceOutOfMemory: number;
  /** False when the device refused instrumentation: only webdlpack's and the guards' buffers are counted. */
  readonly instrumented: boolean;
}

/** The memory state of one device. */
interface DeviceMemory {
  readonly deviceId: number;
  readonly meter: DeviceMeter;
  readonly own: OwnCaches;
  readonly instrumented: boolean;
  readonly onError: (event: Event) => void;
  pressureEvents: number;
  trimmedBytes: number;
  outOfMemoryErrors: number;
  budgetOverruns: number;
  /** Owners already warned of an overrun (one console warning each). */
  readonly warned: Set<string>;
  deviceOutOfMemory: number;
  relieving: boolean;
}

/** Memory accounting and budgets of one context. */
export class ContextMemory {
  /** `ctx.onMemoryPressure` registrations. */
  readonly handlers = new PressureHandlers();
  readonly #devices = new Map<GPUDevice, DeviceMemory>();
  readonly #budgets = new Map<number, number | null>();
  /** The GPUDevice of a webdlpack device id (UNKNOWN_DEVICE for a bad one). */
  readonly #deviceOf: (deviceId: number) => GPUDevice;

  constructor(deviceOf: (deviceId: number) => GPUDevice) {
    this.#deviceOf = deviceOf;
  }

  /** `ctx.memory(deviceId)`. */
  memory(deviceId = 0): MemoryReport {
    return this.report(deviceId, this.#deviceOf(deviceId));
  }

  /** `ctx.setMemoryBudget(bytes, deviceId)`. */
  setMemoryBudget(bytes: number | null, deviceId = 0): void {
    const checked = checkMemoryBudget(bytes, "bytes");
    this.setBudget(deviceId, checked, this.#deviceOf(deviceId));
  }

  /** `ctx.trimMemory(deviceId)`. */
  trimMemory(deviceId = 0): Promise<number> {
    return this.trim(this.#deviceOf(deviceId));
  }

  /** `ctx.onMemoryPressure(handler, options)`. */
  onMemoryPressure(handler: MemoryPressureHandler | null, options?: MemoryPressureOptions): () => void {
    return this.handlers.add(handler, checkPressureArguments(handler, options));
  }

  /** Count every buffer of `device` (webdlpack id `deviceId`) from now on. */
  attach(deviceId: number, device: GPUDevice, own: OwnCaches): void {
    if (this.#devices.get(device)?.deviceId === deviceId) return;
    this.detach(device);
    const meter = new DeviceMeter(device);
    const instrumented = meter.install();
    const onError = (event: Event): void => {
      const error = (event as Event & { error?: unknown }).error;
      if ((error as { constructor?: { name?: string } } | undefined)?.constructor?.name !== "GPUOutOfMemoryError")
        return;
      dm.deviceOutOfMemory += 1;
      void this.makeRoom(device, 0, "unknown", "out-of-memory");
    };
    const dm: DeviceMemory = {
      deviceId,
      meter,
      own,
      instrumented,
      onError,
      pressureEvents: 0,
      trimmedBytes: 0,
      outOfMemoryErrors: 0,
      budgetOverruns: 0,
      warned: new Set(),
      deviceOutOfMemory: 0,
      relieving: false,
    };
    meter.budget = this.#budgets.get(deviceId) ?? null;
    meter.overBudget = (_meter, requested, owner, refusable) => this.#overBudget(dm, requested, owner, refusable);
    (device as Partial<EventTarget>).addEventListener?.("uncapturederror", onError);
    this.#devices.set(device, dm);
  }

  /** Stop counting on `device` (unregistered): its createBuffer is its own again. */
  detach(device: GPUDevice): void {
    const dm = this.#devices.get(device);
    if (dm === undefined) return;
    dm.meter.uninstall();
    (device as Partial<EventTarget>).removeEventListener?.("uncapturederror", dm.onError);
    this.#devices.delete(device);
  }

  /** `device` was lost: nothing is held on it any more. */
  lose(device: GPUDevice): void {
    this.#devices.get(device)?.meter.lose();
  }

  /**
   * The budget of device `deviceId` (also for a device attached later); null removes it. Given the
   * device, UNSUPPORTED when it is not counted (`setup({memoryAccounting: false})`).
   */
  setBudget(deviceId: number, bytes: number | null, device?: GPUDevice): void {
    if (device !== undefined && bytes !== null && !this.#devices.has(device)) {
      throw new WebDLPackError(
        "UNSUPPORTED",
        `webgpu:${deviceId}'s buffers are not counted: a budget needs the accounting`,
        {
          field: "cfg.memoryAccounting",
          value: false,
          expected: "setup() without memoryAccounting: false",
        },
      );
    }
    this.#budgets.set(deviceId, bytes);
    for (const dm of this.#devices.values()) if (dm.deviceId === deviceId) dm.meter.budget = bytes;
  }

  /** The budget of device `deviceId`, or null. */
  budgetOf(deviceId: number): number | null {
    return this.#budgets.get(deviceId) ?? null;
  }

  /** Whether `requested` more bytes fit the budget of `device` (true without a budget or meter). */
  fits(device: GPUDevice, requested: number): boolean {
    const m = this.#devices.get(device)?.meter;
    return m === undefined || m.budget === null || m.totalBytes + requested <= m.budget;
  }

  /**
   * Make room on `device` for `requested` bytes, waiting for handlers that return promises:
   * for "budget" until the request fits, for "out-of-memory" everything every owner gives back.
   */
  async makeRoom(device: GPUDevice, requested: number, owner: string, reason: PressureReason): Promise<void> {
    const dm = this.#devices.get(device);
    if (dm === undefined) return;
    if (reason === "out-of-memory" && owner !== "unknown") dm.deviceOutOfMemory += 1;
    const pending = this.#relieve(dm, requested, owner, reason);
    if (pending.length > 0) await Promise.all(pending);
  }

  /** `ctx.trimMemory()`: every owner gives back what it caches on `device`; resolves to the bytes given back. */
  async trim(device: GPUDevice): Promise<number> {
    const dm = this.#devices.get(device);
    if (dm === undefined) return 0;
    const before = dm.meter.totalBytes;
    const pending = this.#relieve(dm, 0, "page", "request");
    if (pending.length > 0) await Promise.all(pending);
    return Math.max(0, before - dm.meter.totalBytes);
  }

  /** OUT_OF_MEMORY for a request room could not be made for (counted), naming the budget, the request and the bytes by owner. */
  outOfMemory(
    device: GPUDevice,
    requested: number,
    owner: string,
    reason: PressureReason,
    cause?: unknown,
  ): WebDLPackError {
    const dm = this.#devices.get(device);
    if (dm !== undefined && reason === "out-of-memory") dm.deviceOutOfMemory += 1;
    if (dm === undefined) {
      return new WebDLPackError("OUT_OF_MEMORY", `out of GPU memory allocating ${requested} bytes for ${owner}`, {
        field: "nbytes",
        value: requested,
        expected: "a size the device can allocate now",
        cause,
      });
    }
    return this.#error(dm, requested, owner, reason, cause);
  }

  /** The report of `device` (webdlpack id `deviceId`). */
  report(deviceId: number, device: GPUDevice): MemoryReport {
    const dm = this.#devices.get(device);
    const budget = this.budgetOf(deviceId);
    if (dm === undefined) {
      return Object.freeze({
        deviceId,
        budget,
        totalBytes: 0,
        totalBuffers: 0,
        peakBytes: 0,
        owners: Object.freeze([]),
        pressureEvents: 0,
        trimmedBytes: 0,
        outOfMemoryErrors: 0,
        budgetOverruns: 0,
        deviceOutOfMemory: 0,
        instrumented: false,
      });
    }
    const m = dm.meter;
    const owners = [...m.rows.values()].map((r) => {
      const cached = r.owner === WEBDLPACK_OWNER ? dm.own.cachedBytes() : this.handlers.cachedBytes(r.owner);
      const cachedBytes = cached === null ? null : Math.min(cached, r.bytes);
      return Object.freeze({
        owner: r.owner,
        bytes: r.bytes,
        buffers: r.buffers,
        peakBytes: r.peakBytes,
        cachedBytes,
        liveBytes: cachedBytes === null ? null : r.bytes - cachedBytes,
      });
    });
    return Object.freeze({
      deviceId,
      budget: m.budget,
      totalBytes: m.totalBytes,
      totalBuffers: m.totalBuffers,
      peakBytes: m.peakBytes,
      owners: Object.freeze(owners),
      pressureEvents: dm.pressureEvents,
      trimmedBytes: dm.trimmedBytes,
      outOfMemoryErrors: dm.outOfMemoryErrors,
      budgetOverruns: dm.budgetOverruns,
      deviceOutOfMemory: dm.deviceOutOfMemory,
      instrumented: dm.instrumented,
    });
  }

  /**
   * A creation of `requested` bytes would cross the budget (synchronous): make room; if it still does not fit,
   * throw OUT_OF_MEMORY for webdlpack's own (`refusable`) creation, else let it go ahead as an overrun.
   */
  #overBudget(dm: DeviceMemory, requested: number, owner: string, refusable: boolean): void {
    const m = dm.meter;
    if (!dm.relieving && requested <= (m.budget ?? Infinity)) this.#relieve(dm, requested, owner, "budget");
    if (m.budget === null || m.totalBytes + requested <= m.budget) return;
    if (refusable) throw this.#error(dm, requested, owner, "budget");
    dm.budgetOverruns += 1;
    if (dm.warned.has(owner)) return;
    dm.warned.add(owner);
    console.warn(
      `webdlpack: ${owner}'s createBuffer of ${requested} bytes crosses the memory budget of webgpu:${dm.deviceId} ` +
        `(${m.budget} bytes; ${m.totalBytes} held after making room) and goes ahead: WebGPU's createBuffer never ` +
        "throws, so webdlpack does not throw into a framework. webdlpack's own allocations are refused " +
        "(OUT_OF_MEMORY) until memory is given back; ctx.memory().budgetOverruns counts these. (Said once per owner.)",
    );
  }

  /** Trim webdlpack's caches, then call handlers (until the request fits, for "budget"); returns their promises. */
  #relieve(dm: DeviceMemory, requested: number, owner: string, reason: PressureReason): Promise<unknown>[] {
    const m = dm.meter;
    const fits = reason === "budget" ? () => m.budget === null || m.totalBytes + requested <= m.budget : undefined;
    if (fits?.() === true) return [];
    dm.pressureEvents += 1;
    dm.relieving = true;
    const before = m.totalBytes;
    try {
      dm.own.trim();
      const pressure = (): MemoryPressure =>
        Object.freeze({
          deviceId: dm.deviceId,
          reason,
          requestedBytes: requested,
          requestedBy: owner,
          budget: m.budget,
          totalBytes: m.totalBytes,
          bytesToFree:
            fits === undefined || m.budget === null ? Infinity : Math.max(0, m.totalBytes + requested - m.budget),
        });
      const pending = this.handlers.call(pressure, fits);
      const count = (): void => {
        dm.trimmedBytes += Math.max(0, before - m.totalBytes);
      };
      if (pending.length === 0) {
        count();
        return [];
      }
      return [Promise.all(pending).then(count)];
    } finally {
      dm.relieving = false;
    }
  }

  #error(dm: DeviceMemory, requested: number, owner: string, reason: PressureReason, cause?: unknown): WebDLPackError {
    dm.outOfMemoryErrors += 1;
    const m = dm.meter;
    const byOwner = Object.fromEntries([...m.rows.values()].filter((r) => r.bytes > 0).map((r) => [r.owner, r.bytes]));
    const held =
      Object.entries(byOwner)
        .map(([o, n]) => `${o} ${n}`)
        .join(", ") || "nothing";
    const where = `webgpu:${dm.deviceId}`;
    const what =
      reason === "budget"
        ? `the memory budget of ${where} (${m.budget} bytes) can not take ${requested} more bytes for ${owner}`
        : `${where} is out of memory: it refused ${requested} bytes for ${owner}`;
    const value = {
      budget: m.budget,
      requestedBytes: requested,
      requestedBy: owner,
      totalBytes: m.totalBytes,
      byOwner,
    };
    // The message says it all; the value is for programs (err.value.byOwner), shown briefly.
    Object.defineProperty(value, "toString", { value: () => `${requested} bytes for ${owner}` });
    return new WebDLPackError("OUT_OF_MEMORY", `${what} after making room; held: ${m.totalBytes} bytes (${held})`, {
      field: reason === "budget" ? "memoryBudget" : "nbytes",
      value,
      expected:
        m.budget === null
          ? "less GPU memory held by the owners above (dispose tensors, release sessions)"
          : `at most ${Math.max(0, m.budget - m.totalBytes)} bytes now, or a larger setup({memoryBudget})`,
      cause,
    });
  }
}
