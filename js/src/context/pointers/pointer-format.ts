/**
 * What a GPU pointer is: its bit format, the layout checks, and how a pointer
 * is taken apart (describeGPUPointer) and shown (formatPointer). The table
 * that issues and translates pointers is pointer-table.ts.
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
export function checkRange(field: string, value: unknown, min: number, max: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad pointer table option", {
      field,
      value,
      expected: `an integer ${min}..${max}`,
    });
  }
}

/** Check a bit layout; returns the slot bits (8 or more). */
export function checkLayout(generationBits: number, tagBits: number): number {
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
export function describeGPUPointer(
  ptr: number,
  generationBits = GPU_POINTER_GENERATION_BITS,
  tagBits = GPU_POINTER_TAG_BITS,
): PointerParts {
  if (typeof ptr !== "number" || !Number.isInteger(ptr) || ptr < -0x80000000 || ptr > 0xffffffff) {
    throw new WebDLPackError("INVALID_POINTER", "a GPU pointer is a 32-bit integer", {
      field: "ptr",
      value: ptr,
      expected: "an integer in [0, 2^32) (or a signed 32-bit one)",
    });
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

/** Options of {@link WebDLPackContext.registerGPUBuffer}. */
export interface RegisterBufferOptions {
  /** Device the buffer was made on (default 0). It can not be checked: pass the right one. */
  deviceId?: number;
  /** true: freeWebGPU destroys the buffer; false (default): freeWebGPU only forgets it and calls onRelease. */
  owned?: boolean;
  /** Who produced the buffer: a framework name (reported by gpuPointerInfo, the ledger, stats). */
  owner?: string;
  /** Called once when the pointer is freed (after the table forgot it), e.g. to dispose the producer's tensor. */
  onRelease?: (buffer: GPUBuffer, ptr: GPUPointer) => void;
  /**
   * false: the pointer gets no "gpu-buffer" entry of its own in the lifetime ledger, because the caller tracks
   * every holder of it there — each one a "tensor" entry naming this pointer, owner and bytes (the adapters'
   * adopted framework outputs: the pointer is freed when the last of them is released). Scopes, `ctx.dispose`
   * and leak reports then work through those entries; device loss still releases the buffer. Default true.
   */
  tracked?: boolean;
  /**
   * true: a read-only pointer — webdlpack's writes through it (`upload`, the destination of `copyBuffer`,
   * `clearBuffer`, and so Python's and C's uploads) are refused with BAD_FLAGS; reads, copies out of it and
   * hand-offs to readers work. For a buffer already in the table this makes a second pointer to it, lent
   * read-only (a READ_ONLY tensor's DLPack export names one): its holder's pointer keeps its writes, and freeing
   * the read-only one never touches the buffer. Default false (docs/gpu-pointers.md, "Read-only pointers").
   */
  readOnly?: boolean;
}

/** What {@link WebDLPackContext.gpuPointerInfo} reports. */
export interface GPUPointerInfo {
  /** The pointer itself. */
  ptr: GPUPointer;
  /** Device id the buffer belongs to. */
  deviceId: number;
  /** Allocated bytes (`buffer.size`; a multiple of 16 for allocWebGPU). */
  size: number;
  /** Bytes asked for (allocWebGPU's nbytes; `buffer.size` for registered buffers). */
  requestedSize: number;
  /** GPUBufferUsage flags. */
  usage: number;
  /** Buffer label ("" if none). */
  label: string;
  /** The owner given at allocation/registration (undefined if none). */
  owner: string | undefined;
  /** Whether freeWebGPU destroys the buffer. */
  owned: boolean;
  /** Whether the buffer's device has been lost (the pointer then fails to translate). */
  deviceLost: boolean;
  /** Whether webdlpack refuses writes through this pointer (RegisterBufferOptions.readOnly). */
  readOnly: boolean;
}
