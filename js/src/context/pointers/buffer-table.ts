/**
 * The context's GPU buffers by pointer: what the pointer table holds for each pointer (the buffer, its device, owner,
 * release, read-only bit: read-only.ts), the O(1) translation fast path, the ledger entry each pointer gets, and the
 * one place a buffer is given back (cache, throttled destroy, or its owner's onRelease).
 */
import { checkOptions } from "../../arguments.js";
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import type { DeviceAllocator } from "../allocation/device-allocator.js";
import { isGPUBuffer } from "../ground/create.js";
import { lostError, type DeviceRecord, type DeviceRegistry } from "../devices/registry.js";
import { Once } from "../../release.js";
import { MARK_RELEASED, ownerLabel, type LedgerEntry } from "../ledger/entry.js";
import type { Ledger } from "../ledger/ledger.js";
import { claimPointerTag } from "./pointer-tags.js";
import {
  formatPointer,
  GPU_POINTER_SLOT_BITS,
  type GPUPointer,
  type GPUPointerInfo,
  type PointerTableOptions,
  type RegisterBufferOptions,
} from "./pointer-format.js";
import { PointerTable } from "./pointer-table.js";
import { checkPointerType, REGISTER_OPTION_RULES } from "../options.js";
import { checkRegisteredBuffer, destroyedBufferError, forgetVerifiedBuffer } from "./register-check.js";
import { bufferFacts } from "../ground/buffer-facts.js";
import { readOnlyInit } from "./read-only.js";
import { countedAlive } from "../ground/meter.js";

/** What a caller tells {@link BufferTable.insert} about a buffer. */
export interface BufferInit {
  readonly buffer: GPUBuffer;
  readonly device: DeviceRecord;
  readonly requestedSize: number;
  readonly owned: boolean;
  readonly owner: string | undefined;
  readonly ownerLabel: string;
  readonly onRelease: ((buffer: GPUBuffer, ptr: GPUPointer) => void) | undefined;
  /** Made by this context's allocator, so it may go back to the cache. */
  readonly pooled: boolean;
  /** `buffer.size` and `buffer.usage` where the caller knows them (the allocator made the buffer so); else read once. */
  readonly size?: number;
  readonly usage?: number;
  /** A registered buffer the device's meter counted alive: every use checks that its owner did not destroy it since. */
  readonly watched?: boolean;
  /** A read-only pointer: webdlpack's writes through it are refused (read-only.ts). */
  readonly readOnly?: boolean;
}

/** Which path gave a pointer's buffer back. */
export type GiveBackPath = "free" | "device-lost";

/** What the pointer table holds for each pointer. */
export interface BufferEntry extends BufferInit {
  /** The ledger entry (set right after insertion; none when not tracked). */
  ledger: LedgerEntry | undefined;
  /** Gives the buffer back (cache, destroy, or its owner's onRelease), once: at free, or at device loss. */
  readonly giveBack: Once<GiveBackPath>;
  /** An error WebGPU reported after allocWebGPU returned; thrown on use. */
  asyncError: WebDLPackError | undefined;
  /** `buffer.size` and `buffer.usage` (they never change): a transfer reads them here, not through the binding. */
  readonly size: number;
  readonly usage: number;
  /**
   * The transfers room's slot: its per-device transfers object, kept here on the pointer's first transfer so a
   * transfer touches this entry and that object only (the pointer table never reads it).
   */
  transfers: object | undefined;
}

/** How the table reaches the per-device allocators (owned by the context). */
export interface AllocatorLookup {
  /** The allocator of `record`, made on first use. */
  get(record: DeviceRecord): DeviceAllocator;
  /** The allocator of `record` if it has one. */
  existing(record: DeviceRecord): DeviceAllocator | undefined;
}

/**
 * Fast-path index mask: the default slot bits. With other table options two
 * live pointers may share a fast-path position; the later one wins and the
 * other takes the slow (checked) path, so results never change.
 */
const FAST_SLOT_MASK = 2 ** GPU_POINTER_SLOT_BITS - 1;

/** A fast-path array for `slots` slots, all empty (pointer -1 never matches: pointers are positive). */
function emptyFastPath(slots: number): unknown[] {
  const fast = new Array<unknown>(2 * slots);
  for (let i = 0; i < fast.length; i += 2) {
    fast[i] = -1;
    fast[i + 1] = undefined;
  }
  return fast;
}

/** GPU pointers → buffer entries, for one context. */
export class BufferTable {
  readonly #table: PointerTable<BufferEntry>;
  readonly #ledger: Ledger;
  readonly #allocators: AllocatorLookup;
  readonly #devices: DeviceRegistry;
  /** Buffers in the table by the pointer they were made or registered under (not a read-only second one). */
  readonly #byBuffer = new WeakMap<GPUBuffer, GPUPointer>();
  /**
   * Translation fast path: for slot s, `#fast[2s]` is the live pointer whose buffer can be handed out as is (-1: the
   * slow way — freed, lost device, async error) and `#fast[2s + 1]` that buffer; one array, so one cache line. Kept
   * in step by insert, free, loseDevice and poison. (Measured: bench/allocator.mjs.)
   */
  #fast: unknown[] = emptyFastPath(64);
  /** Beside it, for slot s, the entry of the pointer at `#fast[2s]` (what {@link usable} returns on the fast path). */
  #fastEntries: (BufferEntry | undefined)[] = new Array<BufferEntry | undefined>(64).fill(undefined);
  /** The one claimUniqueTag run (settled from the start when the options gave the tag). */
  #tagClaim: Promise<void> | undefined;

  /** An empty table whose entries are tracked in `ledger`, for buffers of `devices`. */
  constructor(ledger: Ledger, allocators: AllocatorLookup, devices: DeviceRegistry, options?: PointerTableOptions) {
    this.#ledger = ledger;
    this.#allocators = allocators;
    this.#devices = devices;
    this.#table = new PointerTable<BufferEntry>(options);
    if (options?.tag !== undefined) this.#tagClaim = Promise.resolve(); // a tag the caller chose is kept
  }

  /** The tag of this context's pointers (pointer-table.ts). */
  get tag(): number {
    return this.#table.tag;
  }

  /**
   * Once, before the first pointer: take a tag no other live context of the
   * origin holds (pointer-tags.ts); the random tag stays when that is not
   * possible or a pointer was issued meanwhile, and a tag given in the
   * table options is never replaced.
   */
  claimUniqueTag(): Promise<void> {
    if (this.#tagClaim === undefined) {
      const table = this.#table;
      this.#tagClaim = table.hasIssued
        ? Promise.resolve()
        : claimPointerTag(table.tagBits).then((claim) => {
            if (claim === null) return;
            if (table.hasIssued) claim.unlock();
            else table.retag(claim.tag);
          });
    }
    return this.#tagClaim;
  }

  /** Slots retired for good (their generation ran out). */
  get retiredSlots(): number {
    return this.#table.retiredSlots;
  }

  /** The single place entries enter the table: the pointer, then its ledger entry (unless `tracked` is false: see RegisterBufferOptions). */
  insert(init: BufferInit, scoped = true, tracked = true): GPUPointer {
    let ptr = 0;
    const entry: BufferEntry = {
      buffer: init.buffer,
      device: init.device,
      requestedSize: init.requestedSize,
      owned: init.owned,
      owner: init.owner,
      ownerLabel: init.ownerLabel,
      onRelease: init.onRelease,
      pooled: init.pooled,
      ledger: undefined,
      giveBack: new Once(() => this.#giveBack(entry, ptr)),
      asyncError: undefined,
      size: init.size ?? bufferFacts(init.buffer).size,
      usage: init.usage ?? bufferFacts(init.buffer).usage,
      transfers: undefined,
      watched: init.watched ?? false,
      readOnly: init.readOnly ?? false,
    };
    try {
      ptr = this.#table.insert(entry);
    } catch (err) {
      if (entry.owned) this.#allocators.get(entry.device).discard(entry.buffer);
      throw err;
    }
    if (!entry.readOnly || !this.#byBuffer.has(entry.buffer)) this.#byBuffer.set(entry.buffer, ptr);
    this.#setFast(ptr, entry);
    if (!tracked) return ptr;
    const ledgerEntry = this.#ledger.track({
      kind: "gpu-buffer",
      owner: entry.ownerLabel,
      deviceId: entry.device.id,
      bytes: entry.size,
      pointer: ptr,
      scoped,
      release: () => {
        if (this.#table.has(ptr)) this.free(ptr);
      },
    });
    entry.ledger = ledgerEntry;
    return ptr;
  }

  /** `ctx.registerGPUBuffer(buffer, options)`: adopt a buffer another framework made. */
  register(buffer: GPUBuffer, options: RegisterBufferOptions = {}): GPUPointer {
    const opts = checkOptions(options, "registerGPUBuffer", REGISTER_OPTION_RULES);
    if (!isGPUBuffer(buffer)) {
      throw new WebDLPackError("INVALID_ARGUMENT", "registerGPUBuffer needs a GPUBuffer", {
        field: "buffer",
        value: describeValue(buffer),
        expected: "a GPUBuffer (size, usage, destroy)",
      });
    }
    const existing = this.pointerOf(buffer);
    if (existing !== undefined && opts.readOnly === true) {
      const source = this.usable(existing, "registerGPUBuffer");
      return this.insert(readOnlyInit(source, existing, opts), true, opts.tracked ?? true);
    }
    const record = this.#devices.live(opts.deviceId ?? 0, "registerGPUBuffer");
    if (existing !== undefined) {
      throw new WebDLPackError(
        "INVALID_ARGUMENT",
        `this GPUBuffer is already in the pointer table as ${formatPointer(existing)}`,
        { field: "buffer", value: existing, expected: "a buffer not yet registered (reuse the existing pointer)" },
      );
    }
    // Frameworks hand the same buffers over run after run: their size and usage are read through the binding once.
    const { size, usage } = bufferFacts(buffer);
    const init: BufferInit = {
      buffer,
      device: record,
      requestedSize: size,
      size,
      usage,
      owned: opts.owned ?? false,
      owner: opts.owner,
      ownerLabel: ownerLabel(opts.owner),
      onRelease: opts.onRelease,
      pooled: false,
      watched: countedAlive(buffer, record.device),
      readOnly: opts.readOnly ?? false,
    };
    const ptr = this.insert(init, true, opts.tracked ?? true);
    // Destroyed, or another GPUDevice's: WebGPU says so asynchronously; the pointer then refuses every use.
    // A buffer already verified on this device (frameworks reuse theirs) costs no GPU call (register-check.ts).
    void checkRegisteredBuffer(record.device, buffer, ptr, record.id)?.then((refusal) => {
      if (refusal !== null && this.pointerOf(buffer) === ptr) this.poison(ptr, refusal);
    });
    return ptr;
  }

  /** The live pointer naming `buffer`, if it is in the table. */
  pointerOf(buffer: GPUBuffer): GPUPointer | undefined {
    const ptr = this.#byBuffer.get(buffer);
    return ptr !== undefined && this.#table.has(ptr) ? ptr : undefined;
  }

  /** The entry of a live pointer (the table's typed errors otherwise). */
  get(ptr: GPUPointer): BufferEntry {
    return this.#table.get(ptr);
  }

  /**
   * Whether `entry` is the ledger entry of one of this table's live pointers: the one its record holds (no set kept
   * beside the table: a WeakSet add per allocation cost a third of a bucket alloc + free, mostly in the GC).
   */
  isOwnEntry(entry: LedgerEntry): boolean {
    const ptr = entry.pointer;
    return ptr !== null && this.#table.has(ptr) && this.#table.get(ptr).ledger === entry;
  }

  /** `ctx.gpuPointerToBuffer(ptr)`: one array read on the fast path, else full checks. */
  translate(ptr: GPUPointer): GPUBuffer {
    if (typeof ptr !== "number") checkPointerType(ptr, "gpuPointerToBuffer");
    const at = 2 * (ptr & FAST_SLOT_MASK);
    const fast = this.#fast;
    return fast[at] === ptr ? (fast[at + 1] as GPUBuffer) : this.usable(ptr, "gpuPointerToBuffer").buffer;
  }

  /**
   * A live entry whose buffer can be used (not lost, no async error): from the fast path when `ptr` is on it (it is
   * taken off on free, loss and poison; two array reads instead of the table's checks, which touch five objects —
   * measured in a small transfer, where each is a cache miss), else through the table's checks.
   */
  usable(ptr: GPUPointer, operation: string): BufferEntry {
    const slot = ptr & FAST_SLOT_MASK;
    if (this.#fast[2 * slot] === ptr) return this.#fastEntries[slot]!;
    const entry = this.#table.get(ptr);
    if (entry.device.lost) throw lostError(entry.device, operation, formatPointer(ptr));
    if (entry.asyncError !== undefined) throw entry.asyncError;
    if (entry.watched && !countedAlive(entry.buffer, entry.device.device))
      throw destroyedBufferError(operation, entry.buffer, entry.size, ptr, entry.ownerLabel);
    return entry;
  }

  /** What `ctx.gpuPointerInfo(ptr)` reports. */
  info(ptr: GPUPointer): GPUPointerInfo {
    checkPointerType(ptr, "gpuPointerInfo");
    const entry = this.#table.get(ptr);
    return {
      ptr,
      deviceId: entry.device.id,
      size: entry.size,
      requestedSize: entry.requestedSize,
      usage: entry.usage,
      label: entry.buffer.label ?? "",
      owner: entry.owner,
      owned: entry.owned,
      deviceLost: entry.device.lost,
      readOnly: entry.readOnly === true,
    };
  }

  /** Take `ptr` out of the table and give its buffer back (`ctx.freeWebGPU`). */
  free(ptr: GPUPointer): void {
    checkPointerType(ptr, "freeWebGPU");
    const entry = this.#table.remove(ptr);
    if (this.#byBuffer.get(entry.buffer) === ptr) this.#byBuffer.delete(entry.buffer);
    this.#clearFast(ptr);
    entry.ledger?.[MARK_RELEASED]("dispose");
    entry.giveBack.release("free");
  }

  /** Make `ptr` (whose buffer WebGPU never created) throw `error` on every use until freed. */
  poison(ptr: GPUPointer, error: WebDLPackError): void {
    this.#table.get(ptr).asyncError = error;
    this.#clearFast(ptr);
  }

  /** Live pointers on `record` (a scan; for unregisterWebGPUDevice). */
  livePointersOn(record: DeviceRecord): number {
    let live = 0;
    this.#table.forEach((entry) => {
      if (entry.device === record) live += 1;
    });
    return live;
  }

  /** Visit every live entry. */
  forEach(visit: (entry: BufferEntry, ptr: GPUPointer) => void): void {
    this.#table.forEach(visit);
  }

  /**
   * Device loss: release this table's buffers on `record`, keeping their
   * pointers so they keep failing with DEVICE_LOST until freed.
   */
  loseDevice(record: DeviceRecord): void {
    const victims: BufferEntry[] = [];
    this.#table.forEach((entry, ptr) => {
      if (entry.device === record) this.#clearFast(ptr);
      if (entry.device === record && !entry.giveBack.released) victims.push(entry);
    });
    for (const entry of victims) {
      entry.ledger?.[MARK_RELEASED]("device-lost");
      try {
        entry.giveBack.release("device-lost");
      } catch (err) {
        console.error("webdlpack: onRelease threw during device loss", err);
      }
    }
  }

  /** Give the buffer back (cache, lazy or throttled destroy) and call onRelease: the function of `entry.giveBack`. */
  #giveBack(entry: BufferEntry, ptr: GPUPointer): void {
    if (entry.owned) {
      forgetVerifiedBuffer(entry.buffer); // webdlpack may destroy it: registering it again must check again
      const allocator = this.#allocators.existing(entry.device);
      if (allocator === undefined || entry.device.lost) entry.buffer.destroy();
      else if (entry.pooled && entry.asyncError === undefined) allocator.recycle(entry.buffer);
      else allocator.discard(entry.buffer);
    }
    entry.onRelease?.(entry.buffer, ptr); // the slot is released before user code runs: a throw leaks nothing
  }

  /** Put a live pointer on the translation fast path (not a watched one: its every use checks the buffer is alive). */
  #setFast(ptr: GPUPointer, entry: BufferEntry): void {
    if (entry.watched) return;
    const at = 2 * (ptr & FAST_SLOT_MASK);
    if (at >= this.#fast.length) {
      let slots = this.#fast.length / 2;
      while (2 * slots <= at) slots *= 2;
      const grown = emptyFastPath(slots);
      for (let i = 0; i < this.#fast.length; i++) grown[i] = this.#fast[i];
      this.#fast = grown;
      const entries = new Array<BufferEntry | undefined>(slots).fill(undefined);
      for (let i = 0; i < this.#fastEntries.length; i++) entries[i] = this.#fastEntries[i];
      this.#fastEntries = entries;
    }
    this.#fast[at] = ptr;
    this.#fast[at + 1] = entry.buffer;
    this.#fastEntries[at / 2] = entry;
  }

  /** Take `ptr` off the fast path (it then goes through the checks of usable()). */
  #clearFast(ptr: GPUPointer): void {
    const at = 2 * (ptr & FAST_SLOT_MASK);
    if (at < this.#fast.length && this.#fast[at] === ptr) {
      this.#fast[at] = -1;
      this.#fast[at + 1] = undefined;
      this.#fastEntries[at / 2] = undefined;
    }
  }
}
