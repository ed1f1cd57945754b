/**
 * Decoding a managed struct again that was decoded before, at the cost of
 * comparing its words.
 *
 * Producers that hand tensors over in a loop (webdlpack's own Python, JS and
 * C exports) write the same struct again and again, usually at the same
 * address (the freed block is the next one malloc returns). What
 * {@link decodeManaged} returns, or throws, depends only on the struct's
 * bytes, the bytes of its shape and strides arrays, and the memory size —
 * and wasm memory never shrinks. So a successful decode stays right while
 * those bytes are equal and the memory is at least as large: the check is
 * one comparison per 32-bit word (about 20 for a 1-d tensor) instead of the
 * full validation. Anything else (a new address, a changed byte, a failed
 * decode) goes through {@link decodeManaged} and its checks and errors.
 */
import { INT64_SIZE, LAYOUT } from "./layout.js";
import { decodeManaged, memoryBuffer, toAddress, type DecodedManaged, type MemorySource } from "./read.js";
import type { WasmHost } from "./wasm-host.js";

/** One remembered decode: the words it was made from. */
interface Entry {
  readonly versioned: boolean;
  /** Memory size when it was decoded (a smaller memory never reuses it). */
  readonly memorySize: number;
  /** The struct's words, then the shape array's, then the strides array's (if any). */
  readonly words: Uint32Array;
  readonly structWords: number;
  /** Word index of the shape / strides arrays in memory (0: none). */
  readonly shapeAt: number;
  readonly stridesAt: number;
  readonly arrayWords: number;
  readonly decoded: DecodedManaged;
}

/** Addresses remembered per memory source; the map is emptied when it reaches this size. */
const MAX_ENTRIES = 64;
const caches = new WeakMap<object, Map<number, Entry>>();

let wordsOf: ArrayBufferLike | null = null;
let heapWords: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

/** A Uint32Array over `buffer`, reused while the buffer stays the same one (growth replaces it). */
function heap32(buffer: ArrayBufferLike): Uint32Array<ArrayBufferLike> {
  if (buffer !== wordsOf) {
    heapWords = new Uint32Array(buffer, 0, buffer.byteLength >>> 2);
    wordsOf = buffer;
  }
  return heapWords;
}

function same(
  heap: Uint32Array<ArrayBufferLike>,
  at: number,
  words: Uint32Array,
  from: number,
  count: number,
): boolean {
  for (let i = 0; i < count; i++) if (heap[at + i] !== words[from + i]) return false;
  return true;
}

function hit(entry: Entry, heap: Uint32Array<ArrayBufferLike>, addr: number, memorySize: number): boolean {
  const w = entry.words;
  return (
    memorySize >= entry.memorySize &&
    same(heap, addr >>> 2, w, 0, entry.structWords) &&
    (entry.arrayWords === 0 || same(heap, entry.shapeAt, w, entry.structWords, entry.arrayWords)) &&
    (entry.stridesAt === 0 || same(heap, entry.stridesAt, w, entry.structWords + entry.arrayWords, entry.arrayWords))
  );
}

function remember(
  cache: Map<number, Entry>,
  heap: Uint32Array<ArrayBufferLike>,
  addr: number,
  versioned: boolean,
  memorySize: number,
  decoded: DecodedManaged,
): void {
  const L = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
  const T = addr + L.dl_tensor;
  const ndim = decoded.desc.ndim;
  const structWords = L.size >>> 2;
  const arrayWords = (ndim * INT64_SIZE) >>> 2;
  const shapeAt = ndim > 0 ? heap[(T + LAYOUT.DLTensor.shape) >>> 2]! >>> 2 : 0;
  const stridesPtr = heap[(T + LAYOUT.DLTensor.strides) >>> 2]!;
  const stridesAt = ndim > 0 && stridesPtr !== 0 ? stridesPtr >>> 2 : 0;
  const words = new Uint32Array(structWords + arrayWords * (stridesAt !== 0 ? 2 : 1));
  words.set(heap.subarray(addr >>> 2, (addr >>> 2) + structWords));
  if (arrayWords > 0) words.set(heap.subarray(shapeAt, shapeAt + arrayWords), structWords);
  if (stridesAt !== 0) words.set(heap.subarray(stridesAt, stridesAt + arrayWords), structWords + arrayWords);
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(addr, { versioned, memorySize, words, structWords, shapeAt, stridesAt, arrayWords, decoded });
}

/**
 * {@link decodeManaged} with the result reused while the struct at `address`
 * (and its shape and strides) holds the same bytes as when it was decoded.
 * Same arguments, results and errors; the result is shared and must not be
 * changed (its description is frozen).
 */
export function decodeManagedCached(
  source: MemorySource | WasmHost,
  address: number,
  versioned: boolean,
): DecodedManaged {
  const buffer = memoryBuffer(source);
  const addr = toAddress(address);
  const key = source as object;
  let cache = caches.get(key);
  const heap = heap32(buffer);
  const entry = cache?.get(addr);
  if (entry !== undefined && entry.versioned === versioned && hit(entry, heap, addr, buffer.byteLength))
    return entry.decoded;
  const decoded = decodeManaged(buffer, addr, versioned);
  if (cache === undefined) {
    cache = new Map();
    caches.set(key, cache);
  }
  remember(cache, heap32(memoryBuffer(source)), addr, versioned, buffer.byteLength, decoded);
  return decoded;
}
