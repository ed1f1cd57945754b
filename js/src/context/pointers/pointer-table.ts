/**
 * The GPU pointer table: pure bookkeeping that turns a plain unsigned 32-bit
 * integer (a "GPU pointer") into an entry (a GPUBuffer and its metadata) and back.
 * No WebGPU here, so it is tested in Node with fake entries.
 *
 * Bit format of a pointer (defaults: 4 tag bits, 10 generation bits, 18 slot bits):
 *
 * ```text
 *   31   28 27          18 17                0
 *  +-------+--------------+------------------+
 *  |  tag  |  generation  |    slot index    |
 *  +-------+--------------+------------------+
 *   1 .. 15   1 .. 1023      0 .. 262_143
 * ```
 *
 * - The tag names the table that issued the pointer. Each webdlpack context
 *   (the page, each Worker) has its own table and tag, and a pointer with
 *   another tag is refused (INVALID_POINTER, "issued by another webdlpack
 *   context"), never looked up. Tag 0 is never used, so every pointer is
 *   at least 2^28. `pointer-tags.ts` picks a context's tag.
 * - A slot's generation starts at 1 and goes up by one each time the slot is
 *   occupied again, so a freed slot's next occupant has a different value.
 *   Generation 0 is never issued, so small integers are never valid.
 * - When a slot has been used with its largest generation it is retired, never
 *   reused, so a value can not wrap round and name a different buffer.
 * - Freed slots wait in a FIFO queue behind a quarantine of recently freed slots,
 *   so a slot is reused as late as possible.
 * - Translation is one typed-array compare: `state[slot] === LIVE` and
 *   `tag << generationBits | generation[slot]` equal to `ptr >>> slotBits`.
 *   No Map, no allocation.
 * - Because generations only go up, a bad pointer is always diagnosed exactly:
 *   another tag → another context's (INVALID_POINTER); generation above the
 *   slot's → never issued (INVALID_POINTER); equal to it with the slot not
 *   live, or below it → the pointer was freed (STALE_POINTER when used,
 *   DOUBLE_FREE when freed again).
 *
 * See docs/gpu-pointers.md.
 */
import { WebDLPackError } from "../../errors.js";

/** A GPU pointer: a nonzero unsigned 32-bit integer naming one buffer in the table. */
export type GPUPointer = number;

/** Default number of tag bits (the top bits of a pointer: which context's table issued it). */
export const GPU_POINTER_TAG_BITS = 4;
/** Default number of generation bits (below the tag). */
export const GPU_POINTER_GENERATION_BITS = 10;
/** Default number of slot-index bits (the low bits of a pointer). */
export const GPU_POINTER_SLOT_BITS = 32 - GPU_POINTER_TAG_BITS - GPU_POINTER_GENERATION_BITS;

/** Options of a {@link PointerTable}. The defaults are the context's table's. */
export interface PointerTableOptions {
  /** Generation bits, 1 to 16 (default 10). */
  generationBits?: number;
  /** Tag bits, 0 to 8 (default 4); the slot index gets the other 32 - tag - generation bits (8 to 31). */
  tagBits?: number;
  /** This table's tag, 1 .. 2^tagBits - 1 (0 when tagBits is 0). Default: a random one ({@link randomPointerTag}). */
  tag?: number;
  /** Freed slots that must be waiting before the oldest one is reused (default 64). */
  quarantine?: number;
  /** Upper bound on slots (default 2^slotBits). */
  maxSlots?: number;
}

/** The parts of a pointer value, see {@link PointerTable}. */
export interface PointerParts {
  /** Slot index (low bits). */
  slot: number;
  /** Generation (middle bits). */
  generation: number;
  /** Tag of the table that issued it (top bits; 0 when the layout has no tag bits). */
  tag: number;
}

/** INVALID_ARGUMENT naming `field` unless `value` is an integer in [min, max]. */
function checkRange(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad pointer table option", {
      field, value, expected: `an integer ${min}..${max}` });
  }
}

/** Check a bit layout; returns the slot bits (8 or more). */
function checkLayout(generationBits: number, tagBits: number): number {
  checkRange("generationBits", generationBits, 1, 16);
  checkRange("tagBits", tagBits, 0, 8);
  return 32 - generationBits - tagBits;
}

/** A random tag in 1 .. 2^tagBits - 1 (0 when `tagBits` is 0). */
export function randomPointerTag(tagBits = GPU_POINTER_TAG_BITS): number {
  checkRange("tagBits", tagBits, 0, 8);
  if (tagBits === 0) return 0;
  const random = globalThis.crypto?.getRandomValues?.(new Uint32Array(1))[0] ?? Math.floor(Math.random() * 2 ** 32);
  return 1 + (random % (2 ** tagBits - 1));
}

/**
 * Split a pointer into slot, generation and tag (default layout: 4 tag bits,
 * 10 generation bits). A signed 32-bit value (as C returns a `uint32_t` through
 * an `i32`) is read as unsigned. Throws INVALID_POINTER unless `ptr` is a
 * 32-bit integer, INVALID_ARGUMENT for a bad layout.
 */
export function describeGPUPointer(ptr: number, generationBits = GPU_POINTER_GENERATION_BITS, tagBits = GPU_POINTER_TAG_BITS): PointerParts {
  if (typeof ptr !== "number" || !Number.isInteger(ptr) || ptr < -0x80000000 || ptr > 0xffffffff) {
    throw new WebDLPackError("INVALID_POINTER", "a GPU pointer is a 32-bit integer", {
      field: "ptr", value: ptr, expected: "an integer in [0, 2^32) (or a signed 32-bit one)" });
  }
  const slotBits = checkLayout(generationBits, tagBits);
  const value = ptr >>> 0;
  return {
    slot: value & (2 ** slotBits - 1),
    generation: Math.floor(value / 2 ** slotBits) % 2 ** generationBits,
    tag: Math.floor(value / 2 ** (slotBits + generationBits)),
  };
}

/** `ptr` as `0x0010002a` for messages. */
export function formatPointer(ptr: unknown): string {
  if (typeof ptr === "number" && ptr >>> 0 === ptr) return `0x${ptr.toString(16).padStart(8, "0")}`;
  return String(ptr);
}

const FREE = 0;
const LIVE = 1;
const RETIRED = 2;
const INITIAL_SLOTS = 64;

/**
 * A table of entries addressed by tagged, generation-checked 32-bit pointers.
 *
 * @typeParam T - what a pointer names (for the context: a GPUBuffer record).
 */
export class PointerTable<T> {
  readonly #slotBits: number;
  readonly #slotMask: number;
  readonly #generationBits: number;
  readonly #maxGeneration: number;
  readonly #tagBits: number;
  /** The tag, shifted above the generation: `ptr >>> slotBits` of a live pointer is `#tagHigh | generation`. */
  #tagHigh: number;
  readonly #maxSlots: number;
  readonly #quarantine: number;
  #generation: Uint16Array;
  #state: Uint8Array;
  #entries: (T | undefined)[];
  /** Slots ever handed out (a high-water mark); slots >= this were never used. */
  #used = 0;
  /** Ring buffer of free slot indices, oldest first. */
  #free: Uint32Array;
  #freeHead = 0;
  #freeCount = 0;
  #live = 0;
  #retired = 0;

  /** Make an empty table. Throws INVALID_ARGUMENT on bad options. */
  constructor(options: PointerTableOptions = {}) {
    const generationBits = options.generationBits ?? GPU_POINTER_GENERATION_BITS;
    const tagBits = options.tagBits ?? GPU_POINTER_TAG_BITS;
    this.#slotBits = checkLayout(generationBits, tagBits);
    this.#slotMask = 2 ** this.#slotBits - 1;
    this.#generationBits = generationBits;
    this.#maxGeneration = 2 ** generationBits - 1;
    this.#tagBits = tagBits;
    this.#tagHigh = 0;
    this.retag(options.tag ?? randomPointerTag(tagBits));
    const maxSlots = options.maxSlots ?? 2 ** this.#slotBits;
    if (!Number.isInteger(maxSlots) || maxSlots < 1 || maxSlots > 2 ** this.#slotBits) {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad pointer table option", {
        field: "maxSlots", value: maxSlots, expected: `an integer 1..${2 ** this.#slotBits}` });
    }
    this.#maxSlots = maxSlots;
    const quarantine = options.quarantine ?? 64;
    if (!Number.isInteger(quarantine) || quarantine < 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad pointer table option", {
        field: "quarantine", value: quarantine, expected: "an integer >= 0" });
    }
    this.#quarantine = quarantine;
    const initial = Math.min(INITIAL_SLOTS, maxSlots);
    this.#generation = new Uint16Array(initial);
    this.#state = new Uint8Array(initial);
    this.#entries = new Array<T | undefined>(initial).fill(undefined);
    this.#free = new Uint32Array(initial);
  }

  /** Number of live pointers. */
  get size(): number {
    return this.#live;
  }

  /** Slots retired because their generation ran out. */
  get retiredSlots(): number {
    return this.#retired;
  }

  /** Whether any pointer was issued (then the tag is fixed). */
  get hasIssued(): boolean {
    return this.#used !== 0;
  }

  /** Tag bits of this table's layout. */
  get tagBits(): number {
    return this.#tagBits;
  }

  /** This table's tag (the top bits of every pointer it issues). */
  get tag(): number {
    return this.#tagBits === 0 ? 0 : Math.floor(this.#tagHigh / 2 ** this.#generationBits);
  }

  /**
   * Take another tag. Only before the first pointer is issued (else
   * INVALID_ARGUMENT: issued pointers would change meaning); INVALID_ARGUMENT
   * for a tag outside 1 .. 2^tagBits - 1 (0 without tag bits).
   */
  retag(tag: number): void {
    if (this.#used !== 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "a pointer table can not change its tag after issuing pointers", {
        field: "tag", value: tag, expected: `the current tag ${this.tag}` });
    }
    if (this.#tagBits === 0) checkRange("tag", tag, 0, 0);
    else checkRange("tag", tag, 1, 2 ** this.#tagBits - 1);
    this.#tagHigh = tag * 2 ** this.#generationBits;
  }

  /** Largest number of slots this table can have. */
  get maxSlots(): number {
    return this.#maxSlots;
  }

  /** Store `entry` and return its new pointer. Throws OUT_OF_MEMORY when every slot is live or retired. */
  insert(entry: T): GPUPointer {
    const slot = this.#takeSlot();
    const generation = this.#generation[slot]! + 1;
    this.#generation[slot] = generation;
    this.#state[slot] = LIVE;
    this.#entries[slot] = entry;
    this.#live += 1;
    return ((this.#tagHigh | generation) * 2 ** this.#slotBits + slot) >>> 0;
  }

  /**
   * The entry `ptr` names. O(1), allocation-free on success.
   * Throws INVALID_POINTER (never issued, not a u32, null) or STALE_POINTER (freed).
   */
  get(ptr: GPUPointer): T {
    const slot = ptr & this.#slotMask;
    if (ptr >>> 0 === ptr && slot < this.#used && this.#state[slot] === LIVE &&
        (this.#tagHigh | this.#generation[slot]!) === ptr >>> this.#slotBits) {
      return this.#entries[slot] as T;
    }
    throw this.#diagnose(ptr, "use");
  }

  /** Whether `ptr` names a live entry (never throws). */
  has(ptr: GPUPointer): boolean {
    const slot = ptr & this.#slotMask;
    return ptr >>> 0 === ptr && slot < this.#used && this.#state[slot] === LIVE &&
      (this.#tagHigh | this.#generation[slot]!) === ptr >>> this.#slotBits;
  }

  /**
   * Forget `ptr` and return its entry. Throws INVALID_POINTER (never issued) or
   * DOUBLE_FREE (already freed). The slot is retired if its generation is used up.
   */
  remove(ptr: GPUPointer): T {
    if (!this.has(ptr)) throw this.#diagnose(ptr, "free");
    const slot = ptr & this.#slotMask;
    const entry = this.#entries[slot] as T;
    this.#entries[slot] = undefined;
    this.#live -= 1;
    if (this.#generation[slot]! >= this.#maxGeneration) {
      this.#state[slot] = RETIRED;
      this.#retired += 1;
    } else {
      this.#state[slot] = FREE;
      this.#pushFree(slot);
    }
    return entry;
  }

  /** Call `fn` for each live entry with its pointer (order: by slot). */
  forEach(fn: (entry: T, ptr: GPUPointer) => void): void {
    for (let slot = 0; slot < this.#used; slot++) {
      if (this.#state[slot] === LIVE) {
        fn(this.#entries[slot] as T, ((this.#tagHigh | this.#generation[slot]!) * 2 ** this.#slotBits + slot) >>> 0);
      }
    }
  }

  #takeSlot(): number {
    if (this.#freeCount > this.#quarantine) return this.#popFree();
    if (this.#used < this.#maxSlots) {
      if (this.#used === this.#state.length) this.#grow();
      return this.#used++;
    }
    if (this.#freeCount > 0) return this.#popFree();
    throw new WebDLPackError("OUT_OF_MEMORY", "the GPU pointer table is full", {
      field: "slots", value: this.#maxSlots,
      expected: `a free slot (${this.#live} live, ${this.#retired} retired); free pointers with freeWebGPU`,
    });
  }

  #popFree(): number {
    const slot = this.#free[this.#freeHead]!;
    this.#freeHead = (this.#freeHead + 1) % this.#free.length;
    this.#freeCount -= 1;
    return slot;
  }

  #pushFree(slot: number): void {
    this.#free[(this.#freeHead + this.#freeCount) % this.#free.length] = slot;
    this.#freeCount += 1;
  }

  #grow(): void {
    const length = Math.min(this.#state.length * 2, this.#maxSlots);
    const generation = new Uint16Array(length);
    generation.set(this.#generation);
    const state = new Uint8Array(length);
    state.set(this.#state);
    const free = new Uint32Array(length);
    for (let i = 0; i < this.#freeCount; i++) free[i] = this.#free[(this.#freeHead + i) % this.#free.length]!;
    this.#generation = generation;
    this.#state = state;
    this.#free = free;
    this.#freeHead = 0;
    while (this.#entries.length < length) this.#entries.push(undefined);
  }

  /** Build the exact error for a pointer that failed the fast check (cold path). */
  #diagnose(ptr: unknown, op: "use" | "free"): WebDLPackError {
    const field = "ptr";
    if (typeof ptr !== "number" || ptr >>> 0 !== ptr) {
      return new WebDLPackError("INVALID_POINTER", "not a GPU pointer", {
        field, value: ptr, expected: "a nonzero unsigned 32-bit integer issued by allocWebGPU or registerGPUBuffer" });
    }
    if (ptr === 0) {
      return new WebDLPackError("INVALID_POINTER", "null GPU pointer", {
        field, value: ptr, expected: "a nonzero GPU pointer" });
    }
    const slot = ptr & this.#slotMask;
    const high = ptr >>> this.#slotBits;
    const generation = high & this.#maxGeneration;
    const tag = high >>> this.#generationBits;
    const shown = formatPointer(ptr);
    if (tag !== this.tag && tag !== 0) {
      return new WebDLPackError("INVALID_POINTER",
        `GPU pointer ${shown} (tag ${tag}) was issued by another webdlpack context, not this one (tag ${this.tag}): ` +
        "a GPU pointer names a buffer only in the context (page or Worker) that issued it", {
          field, value: ptr,
          expected: "a pointer of this context; GPU objects can not cross threads — send CPU tensors (packTensorForThread) or keep GPU work in one realm" });
    }
    const current = slot < this.#used ? this.#generation[slot]! : 0;
    if (tag !== this.tag || generation === 0 || generation > current) {
      return new WebDLPackError("INVALID_POINTER", `GPU pointer ${shown} (slot ${slot}, generation ${generation}) was never issued by this table`, {
        field, value: ptr, expected: "a pointer returned by allocWebGPU or registerGPUBuffer" });
    }
    const reused = generation < current && this.#state[slot] === LIVE;
    const how = reused ? "was freed and its slot now holds another buffer" : "was freed";
    if (op === "free") {
      return new WebDLPackError("DOUBLE_FREE", `GPU pointer ${shown} (slot ${slot}, generation ${generation}) ${how}; it can not be freed twice`, {
        field, value: ptr, expected: "a live GPU pointer" });
    }
    return new WebDLPackError("STALE_POINTER", `GPU pointer ${shown} (slot ${slot}, generation ${generation}) ${how}`, {
      field, value: ptr, expected: "a live GPU pointer" });
  }
}
