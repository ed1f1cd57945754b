/**
 * Access to wasm linear memory for the codec: the buffer behind a memory
 * source, address arguments, range checks, and the views read.ts and
 * write.ts share (reused while the buffer stays the same one; growth replaces it).
 */
import { WebDLPackError } from "../errors.js";

/** Anything the reader can read from: a memory buffer, or an object with a current `buffer` (a WasmHost, a WebAssembly.Memory). */
export type MemorySource = ArrayBuffer | SharedArrayBuffer | { readonly buffer: ArrayBuffer | SharedArrayBuffer };

/** The buffer behind a {@link MemorySource}, read now (so after any growth). */
export function memoryBuffer(source: MemorySource): ArrayBuffer | SharedArrayBuffer {
  if (source instanceof ArrayBuffer) return source;
  if (typeof SharedArrayBuffer !== "undefined" && source instanceof SharedArrayBuffer) return source;
  const buffer = (source as { buffer?: unknown } | null)?.buffer;
  if (
    buffer instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer)
  ) {
    return buffer;
  }
  throw new WebDLPackError(
    "INVALID_ARGUMENT",
    "expected an ArrayBuffer or an object with a .buffer (WasmHost, Memory)",
    {
      field: "memory",
      value: typeof source,
    },
  );
}

/**
 * Normalise an address argument to an unsigned 32-bit integer. Accepts
 * integers in [-2^31, 2^32) (a negative one is a signed view of a high
 * address and is reinterpreted with `>>> 0`); anything else is INVALID_ARGUMENT.
 */
export function toAddress(value: number, field = "address"): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < -0x80000000 || value > 0xffffffff) {
    throw new WebDLPackError("INVALID_ARGUMENT", "address must be a 32-bit integer", {
      field,
      value,
      expected: "an integer in [0, 2^32)",
    });
  }
  return value >>> 0;
}

/** Check that `[address, address + size)` is a non-NULL, `align`-aligned range inside memory. */
export function checkRange(address: number, size: number, align: number, memorySize: number, field: string): void {
  if (address === 0) {
    throw new WebDLPackError("NULL_POINTER", "pointer is NULL", { field, value: 0, expected: "a non-NULL address" });
  }
  if (address % align !== 0) {
    throw new WebDLPackError("INVALID_POINTER", `pointer is not ${align}-byte aligned`, {
      field,
      value: address,
      expected: `a multiple of ${align}`,
    });
  }
  if (address + size > memorySize) {
    throw new WebDLPackError("OUT_OF_BOUNDS", `[${address}, ${address + size}) is outside wasm memory`, {
      field,
      value: address,
      expected: `address + ${size} <= memory size ${memorySize}`,
    });
  }
}

let viewOf: ArrayBufferLike | null = null;
let heapView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

/** A DataView over `buffer`. */
export function dataView(buffer: ArrayBufferLike): DataView<ArrayBufferLike> {
  if (buffer !== viewOf) {
    heapView = new DataView(buffer);
    viewOf = buffer;
  }
  return heapView;
}

let wordsOf: ArrayBufferLike | null = null;
let heapWords: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

/** A Uint32Array over `buffer`'s whole words. */
export function heap32(buffer: ArrayBufferLike): Uint32Array<ArrayBufferLike> {
  if (buffer !== wordsOf) {
    heapWords = new Uint32Array(buffer, 0, buffer.byteLength >>> 2);
    wordsOf = buffer;
  }
  return heapWords;
}
