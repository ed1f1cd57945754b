/**
 * Counting every GPUBuffer of one device by owner.
 *
 * A {@link DeviceMeter} instruments the device the context owns once: its
 * `createBuffer` becomes an own property that counts the new buffer (size,
 * owner) and checks the budget first; `GPUBuffer.prototype.destroy` is wrapped
 * once per page so a destroyed buffer stops counting; a buffer collected
 * without `destroy()` stops counting when a FinalizationRegistry says so.
 * Owners: a framework's device guard creates as that framework
 * (`ctx.getWebGPUDevice(id, {owner})`, {@link createBufferFor}), webdlpack's own code as
 * {@link WEBDLPACK_OWNER} ({@link createBufferAs}), anything else calling the
 * raw device as {@link PAGE_OWNER}. Cache hits create nothing, so they cost nothing here.
 * Only webdlpack's own creations are ever refused (OUT_OF_MEMORY past the budget): a framework's or the
 * page's `createBuffer` behaves as WebGPU's, which reports a refused allocation through error scopes and
 * never by throwing — frameworks are written against that, and an exception from inside their
 * `createBuffer` leaves them broken (an ORT-web page spun forever; TF.js's next op returned 0).
 */

/** The owner of buffers webdlpack itself creates (pointer table, staging, copy parameters). */
export const WEBDLPACK_OWNER = "webdlpack";
/** The owner of buffers created on the raw device by anything else (the page's own code). */
export const PAGE_OWNER = "page";

/** Bytes and buffers one owner holds on one device. */
export interface OwnerBytes {
  readonly owner: string;
  /** Bytes of the owner's buffers that are neither destroyed nor collected (sum of `buffer.size`). */
  bytes: number;
  /** How many. */
  buffers: number;
  /** Largest `bytes` seen. */
  peakBytes: number;
}

/** What the meter knows of one buffer it counted. */
interface Counted {
  readonly meter: DeviceMeter;
  readonly row: OwnerBytes;
  readonly size: number;
  /** The meter's epoch when counted: a loss starts a new epoch and forgets older buffers. */
  readonly epoch: number;
  uncounted: boolean;
}

/**
 * Called before a creation would cross the budget: makes room; then, if it still does not fit, throws
 * OUT_OF_MEMORY when the creation is `refusable` (webdlpack's own), else counts an overrun and returns
 * (a framework's or the page's `createBuffer`: WebGPU's has no exception for a refused allocation).
 */
export type OverBudget = (meter: DeviceMeter, requested: number, owner: string, refusable: boolean) => void;

type CreateBuffer = (descriptor: GPUBufferDescriptor) => GPUBuffer;

/**
 * Where a counted buffer keeps what the meter knows of it: a property under a page-wide symbol, so the one
 * destroy wrapper serves every copy of webdlpack on the page. (A WeakMap entry per buffer cost ~10 µs per
 * create + destroy in a Node loop of 300 000 short-lived objects, a symbol property ~0: ephemerons slow the GC.)
 */
const COUNTED = Symbol.for("webdlpack.memory.counted");
/** Buffers collected without destroy() stop counting. */
const collected = new FinalizationRegistry<Counted>((c) => c.meter.uncount(c));
/** The meters by device (raw device, as the context registered it). */
const meters = new WeakMap<object, DeviceMeter>();
/** Marks a wrapped `destroy` (shared by every copy of webdlpack, so none wraps another's wrapper twice). */
const WRAPPED = Symbol.for("webdlpack.memory.destroyWrapped");
/** The buffer prototype last seen wrapped (one check per creation instead of a property read). */
let wrappedProto: object | null = null;

/** The meter of `device`, if the context instruments it. */
export function meterOf(device: GPUDevice): DeviceMeter | undefined {
  return meters.get(device);
}

/**
 * `device.createBuffer(descriptor)` for webdlpack's own use, counted as `owner`'s: past the budget, after
 * making room, it throws OUT_OF_MEMORY (unmetered: a plain call).
 */
export function createBufferAs(device: GPUDevice, descriptor: GPUBufferDescriptor, owner: string): GPUBuffer {
  const meter = meters.get(device);
  return meter === undefined ? device.createBuffer(descriptor) : meter.create(descriptor, owner, true);
}

/**
 * `device.createBuffer(descriptor)` on behalf of a framework (its device guard), counted as `owner`'s. It
 * behaves as WebGPU's: it never throws where WebGPU would not. Past the budget, after making room, the
 * creation goes ahead and is counted as an overrun (`ctx.memory().budgetOverruns`); only webdlpack's own
 * allocations are refused then.
 */
export function createBufferFor(device: GPUDevice, descriptor: GPUBufferDescriptor, owner: string): GPUBuffer {
  const meter = meters.get(device);
  return meter === undefined ? device.createBuffer(descriptor) : meter.create(descriptor, owner, false);
}

/**
 * True when `device`'s meter counted `buffer` when it was made and it has not been destroyed since (every destroy
 * goes through the wrapped `GPUBuffer.prototype.destroy`, device loss starts a new epoch): the buffer is then
 * known, without asking the GPU, to belong to `device` and to be alive — two of the facts WebGPU validates for a copy.
 * False when unsure (not counted: accounting off, another device, a buffer of an older copy's meter).
 */
export function countedAlive(buffer: GPUBuffer, device: GPUDevice): boolean {
  const c = (buffer as unknown as { [COUNTED]?: Counted })[COUNTED];
  return c !== undefined && !c.uncounted && c.meter.device === device && c.epoch === c.meter.epoch;
}

/** Wrap `destroy` on the prototype of `buffer` once, so every destroy of a counted buffer is seen. */
function wrapDestroy(buffer: GPUBuffer): void {
  const proto = Object.getPrototypeOf(buffer) as { destroy?: (this: GPUBuffer) => void } | null;
  const original = proto?.destroy;
  if (proto === null || typeof original !== "function" || (original as { [WRAPPED]?: true })[WRAPPED]) return;
  const destroy = function destroy(this: GPUBuffer): void {
    const c = (this as unknown as { [COUNTED]?: Counted })[COUNTED];
    if (c !== undefined && !c.uncounted) c.meter.uncount(c);
    original.call(this);
  };
  Object.defineProperty(destroy, WRAPPED, { value: true });
  Object.defineProperty(proto, "destroy", { value: destroy, writable: true, configurable: true });
}

/** The byte count of one device, by owner. */
export class DeviceMeter {
  readonly device: GPUDevice;
  /** Rows by owner, in the order owners first created. */
  readonly rows = new Map<string, OwnerBytes>();
  /** Bytes of all counted buffers. */
  totalBytes = 0;
  /** Counted buffers. */
  totalBuffers = 0;
  /** Largest `totalBytes` seen. */
  peakBytes = 0;
  /** The budget in bytes (null: none). Checked before each creation. */
  budget: number | null = null;
  /** What a creation that would cross the budget calls. */
  overBudget: OverBudget | undefined;
  readonly #create: CreateBuffer;
  #installed: CreateBuffer | undefined;
  #epoch = 0;

  /** Bumped when the device is lost: buffers counted in an older epoch are gone. */
  get epoch(): number {
    return this.#epoch;
  }

  /** A meter for `device` (not yet instrumenting it: {@link install}). */
  constructor(device: GPUDevice) {
    this.device = device;
    const own = device.createBuffer as CreateBuffer;
    this.#create = own.bind(device);
  }

  /**
   * Instrument the device: its `createBuffer` counts as {@link PAGE_OWNER}.
   * Returns false when the device refuses a new property (then only webdlpack's
   * and the guards' creations are counted).
   */
  install(): boolean {
    meters.set(this.device, this);
    const counting: CreateBuffer = (descriptor) => this.create(descriptor, PAGE_OWNER, false);
    try {
      Object.defineProperty(this.device, "createBuffer", { value: counting, writable: true, configurable: true });
    } catch {
      return false;
    }
    this.#installed = counting;
    return true;
  }

  /** Stop instrumenting (the device was unregistered): its `createBuffer` is the device's own again. */
  uninstall(): void {
    if (meters.get(this.device) === this) meters.delete(this.device);
    const own = Object.getOwnPropertyDescriptor(this.device, "createBuffer");
    if (this.#installed !== undefined && own?.value === this.#installed) {
      delete (this.device as { createBuffer?: unknown }).createBuffer;
    }
    this.#installed = undefined;
  }

  /**
   * Create a buffer as `owner`'s: the budget is checked first (a `refusable` creation may throw
   * OUT_OF_MEMORY; any other goes ahead past it), then it is counted.
   */
  create(descriptor: GPUBufferDescriptor, owner: string, refusable: boolean): GPUBuffer {
    if (this.budget !== null && this.overBudget !== undefined) {
      const size = Number(descriptor?.size);
      if (this.totalBytes + size > this.budget) this.overBudget(this, size, owner, refusable);
    }
    const buffer = this.#create(descriptor);
    this.#count(buffer, owner);
    return buffer;
  }

  /** The row of `owner` (made on first use). */
  row(owner: string): OwnerBytes {
    let row = this.rows.get(owner);
    if (row === undefined) {
      row = { owner, bytes: 0, buffers: 0, peakBytes: 0 };
      this.rows.set(owner, row);
    }
    return row;
  }

  #count(buffer: GPUBuffer, owner: string): void {
    const size = buffer.size;
    const row = this.row(owner);
    row.bytes += size;
    row.buffers += 1;
    if (row.bytes > row.peakBytes) row.peakBytes = row.bytes;
    this.totalBytes += size;
    this.totalBuffers += 1;
    if (this.totalBytes > this.peakBytes) this.peakBytes = this.totalBytes;
    const c: Counted = { meter: this, row, size, epoch: this.#epoch, uncounted: false };
    const proto = Object.getPrototypeOf(buffer) as object | null;
    if (proto !== wrappedProto) {
      wrapDestroy(buffer);
      wrappedProto = proto;
    }
    (buffer as unknown as { [COUNTED]?: Counted })[COUNTED] = c;
    collected.register(buffer, c);
  }

  /** A counted buffer was destroyed or collected: it stops counting (once). */
  uncount(c: Counted): void {
    if (c.uncounted) return;
    c.uncounted = true;
    if (c.epoch !== this.#epoch) return;
    c.row.bytes -= c.size;
    c.row.buffers -= 1;
    this.totalBytes -= c.size;
    this.totalBuffers -= 1;
  }

  /** The device was lost or destroyed: everything on it is gone. Rows stay (at zero) with their peaks. */
  lose(): void {
    this.#epoch += 1;
    for (const row of this.rows.values()) {
      row.bytes = 0;
      row.buffers = 0;
    }
    this.totalBytes = 0;
    this.totalBuffers = 0;
  }
}
