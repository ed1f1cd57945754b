/**
 * What the two staging rings (staging.ts) share: buffers kept by power-of-two
 * size class up to a byte budget per ring — past it the least recently kept
 * buffers are destroyed (through the caller's `destroy`), so a run of large
 * transfers keeps its own size class warm — and every buffer handed out tracked
 * until it comes back, so a lost device can destroy (and so unmap) all of them.
 *
 * Staging follows demand: a size class a transfer lacked is made once that
 * transfer is done ({@link Ring.prepareSoon}), making room by destroying the
 * least recently kept buffers of other classes. Under a memory budget
 * (`ctx.setup({memoryBudget})`, docs/memory.md) a ring keeps at most
 * {@link BUDGET_SHARE} of it and grows only where the device's count stays
 * within the budget (a cache never makes memory pressure); under pressure the
 * memory room trims both rings (DeviceTransfers.trim).
 */
import { type DeviceMeter, meterOf } from "../ground/meter.js";
import { bufferFacts } from "../ground/buffer-facts.js";

/** Under a memory budget, a ring keeps at most this share of it. */
export const BUDGET_SHARE = 1 / 8;

/** Run `task` in a later task (setImmediate where there is one: Node; else a zero timeout). */
export const later: (task: () => void) => void = (() => {
  const immediate = (globalThis as { setImmediate?: (task: () => void) => unknown }).setImmediate;
  return typeof immediate === "function" ? (task) => void immediate(task) : (task) => void setTimeout(task, 0);
})();

/** A request may take a kept buffer up to this many times its size class. */
export const LARGER_CLASS_FACTOR = 64;

/** Smallest staging buffer. */
export const STAGING_MIN_BYTES = 256;

/** Power-of-two size class of a request (at least {@link STAGING_MIN_BYTES}). */
export function stagingClass(bytes: number): number {
  return bytes <= STAGING_MIN_BYTES ? STAGING_MIN_BYTES : 2 ** Math.ceil(Math.log2(bytes));
}

/** Counters of one ring (for stats and tests). */
export interface RingStats {
  /** Buffers kept, ready to hand out. */
  kept: number;
  /** Their bytes. */
  keptBytes: number;
  /** Handed out and not yet back (write ring: including those being mapped again). */
  inUse: number;
  /** Buffers created since the ring was made. */
  created: number;
  /** Buffers handed out from the ring instead of created. */
  reused: number;
}

/** What both rings share: size classes, a byte budget (least recently kept dropped first), tracking of what is out. */
export abstract class Ring {
  protected readonly device: GPUDevice;
  /** Kept buffers by size class, and all of them in the order they were kept (for eviction). */
  protected readonly free = new Map<number, GPUBuffer[]>();
  protected readonly order = new Set<GPUBuffer>();
  protected readonly out = new Set<GPUBuffer>();
  /** Buffers out when the ring was cleared (memory pressure): destroyed when they come back, not kept. */
  protected readonly dropOnReturn = new Set<GPUBuffer>();
  protected readonly destroyBuffer: (buffer: GPUBuffer) => void;
  protected keptBytes = 0;
  protected closed = false;
  created = 0;
  reused = 0;

  constructor(
    device: GPUDevice,
    destroy: (buffer: GPUBuffer) => void,
    readonly maxKeptBytes: number,
  ) {
    this.device = device;
    this.destroyBuffer = destroy;
  }

  /** The map state a kept buffer must be in to be handed out. */
  protected abstract readonly ready: GPUBufferMapState;

  /** A new buffer of `size` (in the `ready` state). */
  protected abstract create(size: number): GPUBuffer;

  /**
   * A buffer of at least `bytes` in the `ready` state: a kept one of its size class, else the smallest kept one
   * of a larger class up to {@link LARGER_CLASS_FACTOR}× (staging made ready at setup serves smaller transfers
   * on their first call), else a new one.
   */
  take(bytes: number): GPUBuffer {
    const size = stagingClass(bytes);
    const hot = this.takeHot(size);
    if (hot !== undefined) return hot;
    let own = this.free.get(size);
    // Buffers given back but not ready yet (a readback's, still mapped when the next readback comes in the same
    // task) are made ready now (an unmap), rather than a larger class's buffer taken or a new one made.
    if ((own === undefined || own.length === 0) && this.reclaim()) own = this.free.get(size);
    if (own !== undefined && own.length > 0) {
      // The common case, inline (one frame: a transfer's first calls run unoptimized, where each call costs): a kept
      // buffer of the request's own class, whose size is the class. Kept buffers are in the ready state by
      // construction (kept only unmapped, or once mapped again), so its mapState (a native getter) is not read.
      const buffer = own.pop()!;
      this.order.delete(buffer);
      this.keptBytes -= size;
      this.reused += 1;
      this.out.add(buffer);
      return buffer;
    }
    const kept = this.#popLarger(size);
    if (kept !== undefined) {
      this.reused += 1;
      this.out.add(kept);
      return kept;
    }
    return this.make(size);
  }

  /**
   * Up to `max` kept buffers of `bytes`' own size class, handed out as {@link take} does; none made (fewer, or
   * none, when fewer are kept).
   */
  takeKept(bytes: number, max: number): GPUBuffer[] {
    const size = stagingClass(bytes);
    if ((this.free.get(size)?.length ?? 0) < max) this.reclaim();
    const stack = this.free.get(size);
    const taken: GPUBuffer[] = [];
    while (stack !== undefined && stack.length > 0 && taken.length < max) {
      const buffer = stack.pop()!;
      this.order.delete(buffer);
      this.keptBytes -= size;
      this.reused += 1;
      this.out.add(buffer);
      taken.push(buffer);
    }
    return taken;
  }

  /** True when a buffer of class `size` itself is kept (ready or not). */
  protected keepsOwn(size: number): boolean {
    return (this.free.get(size)?.length ?? 0) > 0;
  }

  /** A buffer of class `size` held apart from the kept ones for the next transfer (ReadRing's), now out; or none. */
  protected takeHot(_size: number): GPUBuffer | undefined {
    return undefined;
  }

  /** Make buffers given back but not yet ready ready now; true when there were any (take tries again first). */
  protected reclaim(): boolean {
    return false;
  }

  /** A new buffer of class `size`, counted and tracked as out. */
  protected make(size: number): GPUBuffer {
    this.created += 1;
    const buffer = this.create(size);
    this.out.add(buffer);
    return buffer;
  }

  /** True when {@link take} would hand out a kept buffer (no new one) for `bytes`. */
  hasReady(bytes: number): boolean {
    for (const size of this.#classesFor(stagingClass(bytes)))
      if (this.free.get(size)!.some((b) => b.mapState === this.ready)) return true;
    return false;
  }

  /** The size of the largest kept buffer in the ready state (0: none). */
  largestReady(): number {
    let largest = 0;
    for (const [size, stack] of this.free)
      if (size > largest && stack.some((b) => b.mapState === this.ready)) largest = size;
    return largest;
  }

  /** Kept size classes that can serve a request of class `size`, smallest first. */
  #classesFor(size: number): number[] {
    const limit = Math.max(size * LARGER_CLASS_FACTOR, size);
    return [...this.free.keys()]
      .filter((c) => c >= size && c <= limit && this.free.get(c)!.length > 0)
      .sort((a, b) => a - b);
  }

  /** Pop a kept buffer in the ready state of a class larger than `size` (others popped on the way are destroyed). */
  #popLarger(size: number): GPUBuffer | undefined {
    for (const c of this.#classesFor(size)) {
      const stack = this.free.get(c)!;
      while (stack.length > 0) {
        const buffer = stack.pop()!;
        this.order.delete(buffer);
        this.keptBytes -= bufferFacts(buffer).size;
        if (buffer.mapState === this.ready) return buffer;
        this.destroyBuffer(buffer);
      }
    }
    return undefined;
  }

  /** New buffers of `bytes`' class, made ready and kept, `count` of them (within the budget): staging ready before use. */
  abstract prepare(bytes: number, count: number): Promise<void>;

  /** Size classes a {@link prepareSoon} is pending for, each with the clear count its ask was made under. */
  readonly #preparing = new Map<number, number>();
  /** How many times the ring was {@link clear}ed (memory pressure): staging asked for before a clear is not made. */
  #clears = 0;

  /** The ring's clear count now: a transfer takes it when it starts and hands it to {@link prepareSoon} after. */
  get generation(): number {
    return this.#clears;
  }

  /**
   * {@link prepare} once the GPU work queued so far is done, in a task of its own: making and touching staging
   * (tens of ms for 64 MiB on a CPU device) never delays the transfer that lacked it, which the caller awaits. Not
   * made where the ring was cleared since `since` (the {@link generation} when the transfer asking started): memory
   * pressure gave the staging back, and only a transfer after it asks again.
   */
  prepareSoon(bytes: number, count: number, since = this.#clears): void {
    const size = stagingClass(bytes);
    // An ask pending from before a clear does not hold back one made after it (it makes nothing when it runs).
    if (since !== this.#clears || this.#preparing.get(size) === since) return;
    this.#preparing.set(size, since);
    const soon = (): void =>
      later(() => {
        if (this.#preparing.get(size) === since) this.#preparing.delete(size);
        if (since === this.#clears) void this.prepare(bytes, count);
      });
    this.device.queue.onSubmittedWorkDone().then(soon, soon);
  }

  /** How many more buffers of `bytes`' class {@link prepare} makes to have `count` kept. */
  protected missing(bytes: number, count: number): number {
    return Math.max(0, count - this.owned(bytes));
  }

  /** Buffers of `bytes`' own size class the ring has, kept or out (in a transfer, or being mapped again). */
  owned(bytes: number): number {
    const size = stagingClass(bytes);
    let n = this.free.get(size)?.length ?? 0;
    for (const b of this.out) if (bufferFacts(b).size === size) n += 1;
    return n;
  }

  /** The device's memory meter (looked up once; null: its memory is not counted). */
  #meter: DeviceMeter | null | undefined = undefined;

  /** The device's memory budget (null: none). */
  protected budget(): number | null {
    this.#meter ??= meterOf(this.device) ?? null;
    return this.#meter?.budget ?? null;
  }

  /** The bytes this ring may keep: its own cap, and {@link BUDGET_SHARE} of the device's memory budget when it has one. */
  protected cap(): number {
    const budget = this.budget();
    return budget === null ? this.maxKeptBytes : Math.min(this.maxKeptBytes, Math.floor(budget * BUDGET_SHARE));
  }

  /**
   * Make room for `bytes` more (kept plus out): the least recently kept buffers of other size classes are destroyed
   * until it fits the cap. False (nothing destroyed) where it can not fit — the buffers out alone leave no room, or
   * a memory budget would be crossed by making it.
   */
  protected makeRoom(bytes: number): boolean {
    if (this.closed) return false;
    const cap = this.cap();
    let out = 0;
    for (const b of this.out) out += bufferFacts(b).size;
    const size = stagingClass(bytes);
    let others = 0;
    for (const b of this.order) if (bufferFacts(b).size !== size) others += bufferFacts(b).size;
    if (this.keptBytes - others + out + bytes > cap) return false;
    const budget = this.budget();
    if (budget !== null && this.#meter!.totalBytes + bytes > budget) return false;
    if (this.keptBytes + out + bytes <= cap) return true;
    this.#destroyKept((b) => {
      if (this.keptBytes + out + bytes <= cap || bufferFacts(b).size === size) return false;
      return true;
    }, true);
    return this.keptBytes + out + bytes <= cap;
  }

  /** Keep `buffer`, dropping the least recently kept ones over the budget; one larger than the budget is destroyed. */
  protected keep(buffer: GPUBuffer): void {
    // Every small readback ends here: one size lookup, and no iterator unless something must be dropped.
    const size = bufferFacts(buffer).size;
    if (this.closed || (this.dropOnReturn.size > 0 && this.dropOnReturn.delete(buffer)) || size > this.maxKeptBytes) {
      this.destroyBuffer(buffer);
      return;
    }
    if (this.keptBytes + size > this.maxKeptBytes || (this.budget() !== null && this.keptBytes + size > this.cap())) {
      const cap = this.cap();
      if (size > cap) {
        this.destroyBuffer(buffer);
        return;
      }
      for (const old of this.order) {
        if (this.keptBytes + size <= cap) break;
        const oldSize = bufferFacts(old).size;
        this.order.delete(old);
        const stack = this.free.get(oldSize)!;
        stack.splice(stack.indexOf(old), 1);
        this.keptBytes -= oldSize;
        this.destroyBuffer(old);
      }
    }
    let stack = this.free.get(size);
    if (stack === undefined) {
      stack = [];
      this.free.set(size, stack);
    }
    stack.push(buffer);
    this.order.add(buffer);
    this.keptBytes += size;
  }

  stats(): RingStats {
    return {
      kept: this.order.size,
      keptBytes: this.keptBytes,
      inUse: this.out.size,
      created: this.created,
      reused: this.reused,
    };
  }

  /** Destroy what is kept (the device is being unregistered); buffers out come back to be destroyed. */
  drain(): void {
    this.closed = true;
    this.clear();
  }

  /** Destroy what is kept, and what is out once it comes back; the ring stays open. */
  clear(): void {
    this.#clears += 1;
    for (const b of this.out) this.dropOnReturn.add(b);
    this.#destroyKept(() => true);
  }

  /** Keep at most `count` buffers of `bytes`' class and none of another class (staging made ready at setup). */
  keepOnly(bytes: number, count: number): void {
    const size = stagingClass(bytes);
    let left = count;
    this.#destroyKept((b) => bufferFacts(b).size !== size || left-- <= 0);
  }

  /** Destroy the kept buffers `drop` picks (asked most recently kept first; least recently first when `oldest`). */
  #destroyKept(drop: (buffer: GPUBuffer) => boolean, oldest = false): void {
    const kept = [...this.order];
    for (const b of oldest ? kept : kept.reverse()) {
      if (!drop(b)) continue;
      this.order.delete(b);
      const stack = this.free.get(bufferFacts(b).size)!;
      stack.splice(stack.indexOf(b), 1);
      this.keptBytes -= bufferFacts(b).size;
      this.destroyBuffer(b);
    }
  }

  /** Destroy a buffer that failed mid-transfer (never reused). */
  discard(buffer: GPUBuffer): void {
    this.dropOnReturn.delete(buffer);
    if (this.out.delete(buffer)) buffer.destroy();
  }

  /** The device was lost: destroy everything, kept and out (destroy also unmaps). */
  lose(): void {
    this.drain();
    for (const b of this.out) b.destroy();
    this.out.clear();
    this.dropOnReturn.clear();
  }
}

/** Write one byte per 4 KiB page (fresh memory: the page faults happen now, not during a transfer). */
export function touch(bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = 0;
}
