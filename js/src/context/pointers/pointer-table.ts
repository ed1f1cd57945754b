/**
 * The GPU pointer table: pure bookkeeping that turns a plain unsigned 32-bit
 * integer (a "GPU pointer", its bit format in pointer-format.ts) into an entry
 * (a GPUBuffer and its metadata) and back. No WebGPU here, so it is tested in
 * Node with fake entries. See docs/gpu-pointers.md.
 */
import { WebDLPackError } from "../../errors.js";
import {
  checkLayout,
  checkRange,
  formatPointer,
  GPU_POINTER_GENERATION_BITS,
  GPU_POINTER_TAG_BITS,
  randomPointerTag,
  type GPUPointer,
  type PointerTableOptions,
} from "./pointer-format.js";

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
        field: "maxSlots",
        value: maxSlots,
        expected: `an integer 1..${2 ** this.#slotBits}`,
      });
    }
    this.#maxSlots = maxSlots;
    const quarantine = options.quarantine ?? 64;
    if (!Number.isInteger(quarantine) || quarantine < 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad pointer table option", {
        field: "quarantine",
        value: quarantine,
        expected: "an integer >= 0",
      });
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
        field: "tag",
        value: tag,
        expected: `the current tag ${this.tag}`,
      });
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
    if (
      ptr >>> 0 === ptr &&
      slot < this.#used &&
      this.#state[slot] === LIVE &&
      (this.#tagHigh | this.#generation[slot]!) === ptr >>> this.#slotBits
    ) {
      return this.#entries[slot] as T;
    }
    throw this.#diagnose(ptr, "use");
  }

  /** Whether `ptr` names a live entry (never throws). */
  has(ptr: GPUPointer): boolean {
    const slot = ptr & this.#slotMask;
    return (
      ptr >>> 0 === ptr &&
      slot < this.#used &&
      this.#state[slot] === LIVE &&
      (this.#tagHigh | this.#generation[slot]!) === ptr >>> this.#slotBits
    );
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
      field: "slots",
      value: this.#maxSlots,
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
        field,
        value: ptr,
        expected: "a nonzero unsigned 32-bit integer issued by allocWebGPU or registerGPUBuffer",
      });
    }
    if (ptr === 0) {
      return new WebDLPackError("INVALID_POINTER", "null GPU pointer", {
        field,
        value: ptr,
        expected: "a nonzero GPU pointer",
      });
    }
    const slot = ptr & this.#slotMask;
    const high = ptr >>> this.#slotBits;
    const generation = high & this.#maxGeneration;
    const tag = high >>> this.#generationBits;
    const shown = formatPointer(ptr);
    if (tag !== this.tag && tag !== 0) {
      // A context that has issued nothing yet is most often one whose setup() has not run in this realm.
      const fresh = this.#used === 0;
      return new WebDLPackError(
        "INVALID_POINTER",
        `GPU pointer ${shown} (tag ${tag}) was issued by another webdlpack context, not this one (tag ${this.tag}), ` +
          (fresh
            ? "which has issued no GPU pointer yet: call setup() first, then make the GPU tensor (here, after it)"
            : "and names a buffer only there"),
        {
          field,
          value: ptr,
          expected: fresh
            ? "a pointer this context issued: `await getContext().setup()` before making GPU tensors"
            : "a pointer this context issued (a Worker's context is another one: GPU objects do not cross threads; " +
              "send CPU tensors with packTensorForThread)",
        },
      );
    }
    const current = slot < this.#used ? this.#generation[slot]! : 0;
    if (tag !== this.tag || generation === 0 || generation > current) {
      return new WebDLPackError(
        "INVALID_POINTER",
        `GPU pointer ${shown} (slot ${slot}, generation ${generation}) was never issued by this table`,
        {
          field,
          value: ptr,
          expected: "a pointer returned by allocWebGPU or registerGPUBuffer",
        },
      );
    }
    const reused = generation < current && this.#state[slot] === LIVE;
    const how = reused ? "was freed and its slot now holds another buffer" : "was freed";
    if (op === "free") {
      return new WebDLPackError(
        "DOUBLE_FREE",
        `GPU pointer ${shown} (slot ${slot}, generation ${generation}) ${how}; it can not be freed twice`,
        {
          field,
          value: ptr,
          expected: "a live GPU pointer",
        },
      );
    }
    return new WebDLPackError("STALE_POINTER", `GPU pointer ${shown} (slot ${slot}, generation ${generation}) ${how}`, {
      field,
      value: ptr,
      expected: "a live GPU pointer",
    });
  }
}
