/**
 * Where a readback writes and where an upload reads: a TypedArray/DataView,
 * or wasm memory + address + byteLength. Wasm views are made fresh at each
 * use, so memory growth between uses (an await) is harmless.
 */
import { WebDLPackError } from "../../errors.js";
import { describeValue } from "../../describe-value.js";

/** Host memory of a transfer: a view, or wasm memory + address (re-read at each use, so growth is safe). */
export type HostBytes =
  | ArrayBufferView
  | { memory: { readonly buffer: ArrayBufferLike }; address: number; byteLength: number };

/** The byte range of a transfer on the GPU side. */
export interface ByteRange {
  /** First byte (default 0). */
  byteOffset?: number;
  /** Bytes (default: to the end of the buffer; for a host target: its length). */
  byteLength?: number;
}

/** Bytes a host target holds. Throws INVALID_ARGUMENT. */
export function hostLength(target: HostBytes, what: string): number {
  if (ArrayBuffer.isView(target)) return target.byteLength;
  const n = (target as { byteLength?: unknown } | null)?.byteLength;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", `bad ${what} host memory`, {
      field: "target.byteLength",
      value: describeValue(n),
      expected: "a TypedArray/DataView, or {memory, address, byteLength} with byteLength a safe integer >= 0",
    });
  }
  return n;
}

/** `length` bytes of `target` starting at `at`, as a Uint8Array made now. Throws INVALID_ARGUMENT / OUT_OF_BOUNDS. */
export function hostView(target: HostBytes, length: number, at = 0): Uint8Array {
  if (ArrayBuffer.isView(target)) {
    if (target.byteLength < at + length) {
      throw new WebDLPackError(
        "INVALID_ARGUMENT",
        target.byteLength === 0 && length > 0
          ? "the host view is detached or empty (wasm memory grew during the transfer?): pass {memory, address, byteLength} instead"
          : "the host view is smaller than the transfer",
        {
          field: "target.byteLength",
          value: target.byteLength,
          expected: `>= ${at + length}`,
        },
      );
    }
    return new Uint8Array(target.buffer, target.byteOffset + at, length);
  }
  const memory = (target as { memory?: { buffer?: unknown } } | null)?.memory;
  const address = (target as { address?: unknown } | null)?.address;
  if (
    !memory ||
    !(
      memory.buffer instanceof ArrayBuffer ||
      (typeof SharedArrayBuffer !== "undefined" && memory.buffer instanceof SharedArrayBuffer)
    )
  ) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad host memory", {
      field: "target",
      value: describeValue(target),
      expected: "a TypedArray/DataView, or {memory: WebAssembly.Memory, address, byteLength}",
    });
  }
  if (typeof address !== "number" || !Number.isInteger(address)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad host memory address", {
      field: "target.address",
      value: describeValue(address),
      expected: "an integer address in wasm memory",
    });
  }
  const heap = memory.buffer as ArrayBufferLike;
  const start = (address >>> 0) + at;
  if (start + length > heap.byteLength) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the host range is outside wasm memory", {
      field: "target.address",
      value: address >>> 0,
      expected: `address + ${at + length} <= ${heap.byteLength}`,
    });
  }
  return new Uint8Array(heap, start, length);
}

/** Where a readback writes (ctx.readbackInto) or an upload reads (ctx.upload): {@link HostBytes}. */
export type ReadbackTarget = HostBytes;
/** The GPU byte range of a readback, upload or clear. */
export type ReadbackRange = ByteRange;

/** The byte ranges of ctx.copyBuffer. */
export interface CopyRange {
  /** First byte read in the source (default 0), a multiple of 4. */
  srcOffset?: number;
  /** First byte written in the destination (default 0), a multiple of 4. */
  dstOffset?: number;
  /** Bytes to copy, a multiple of 4 (default: the source's requested size minus srcOffset). */
  byteLength?: number;
}

/** Check and resolve a GPU byte range against `size`. Throws INVALID_ARGUMENT / OUT_OF_BOUNDS. */
export function resolveRange(
  range: unknown,
  size: number,
  defaultLength: number | undefined,
): { offset: number; length: number } {
  if (range !== undefined && (range === null || typeof range !== "object")) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad byte range", {
      field: "range",
      value: describeValue(range),
      expected: "an object {byteOffset?, byteLength?} or undefined",
    });
  }
  const r = (range ?? {}) as ByteRange;
  const offset = r.byteOffset ?? 0;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad byteOffset", {
      field: "byteOffset",
      value: describeValue(offset),
      expected: "a safe integer >= 0",
    });
  }
  const length = r.byteLength ?? defaultLength ?? size - offset;
  if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad byteLength", {
      field: "byteLength",
      value: describeValue(length),
      expected: "a safe integer >= 0",
    });
  }
  if (offset + length > size) {
    throw new WebDLPackError(
      "OUT_OF_BOUNDS",
      `bytes [${offset}, ${offset + length}) are outside the ${size}-byte buffer`,
      {
        field: "byteOffset + byteLength",
        value: offset + length,
        expected: `<= ${size} (buffer.size)`,
      },
    );
  }
  return { offset, length };
}
