/**
 * Small helpers over the wasm heap used by the C glue: every call re-reads
 * the heap view from the module, because Emscripten replaces the views (and
 * detaches the old buffer) when memory grows.
 */

/** The part of an Emscripten module the helpers need. */
export interface HeapSource {
  /** Byte view of the heap; a new object after memory growth. */
  readonly HEAPU8: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });

/** A DataView over the current heap. */
export function heapView(m: HeapSource): DataView {
  const u8 = m.HEAPU8;
  return new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
}

/** Read the NUL-terminated UTF-8 string at `address` (at most `max` bytes). "" for address 0. */
export function readCString(m: HeapSource, address: number, max = 1 << 16): string {
  const addr = address >>> 0;
  if (addr === 0) return "";
  const u8 = m.HEAPU8;
  let end = addr;
  const limit = Math.min(u8.length, addr + max);
  while (end < limit && u8[end] !== 0) end++;
  return decoder.decode(u8.subarray(addr, end));
}

/**
 * Write `text` as NUL-terminated UTF-8 into `cap` bytes at `address`,
 * truncated on a character boundary. Returns the bytes written without the NUL.
 */
export function writeCString(m: HeapSource, address: number, cap: number, text: string): number {
  const addr = address >>> 0;
  const room = (cap >>> 0) - 1;
  if (addr === 0 || room < 0) return 0;
  const u8 = m.HEAPU8;
  const { written } = encoder.encodeInto(text, u8.subarray(addr, addr + room));
  u8[addr + written] = 0;
  return written;
}
