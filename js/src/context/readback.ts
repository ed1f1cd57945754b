/**
 * Ordered readback: copy a range of a GPU buffer into a MAP_READ staging
 * buffer on the device queue — after every command already submitted, so
 * the values are those the earlier work wrote — map it and copy the bytes out.
 * Staging buffers are pooled per device by power-of-two size.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { GPUUsage } from "./allocation.js";

/** Where {@link WebDLPackContext.readbackInto} writes: a view, or wasm memory + address (re-read after the await, so memory growth is safe). */
export type ReadbackTarget = ArrayBufferView | { memory: { readonly buffer: ArrayBufferLike }; address: number; byteLength: number };

/** The byte range of a readback. */
export interface ReadbackRange {
  /** First byte to read (default 0). */
  byteOffset?: number;
  /** Bytes to read (default: to the end of the buffer; for readbackInto: the target's length). */
  byteLength?: number;
}

/** GPUMapMode.READ (a literal so this module loads where the global is missing). */
const MAP_MODE_READ = 0x0001;
const STAGING_USAGE = GPUUsage.MAP_READ | GPUUsage.COPY_DST;
const STAGING_MIN = 256;
/** Staging buffers above this are not kept. */
const STAGING_MAX_POOLED = 64 * 2 ** 20;
/** Kept per size. */
const STAGING_PER_SIZE = 4;

/** MAP_READ | COPY_DST buffers of one device, by power-of-two size. */
export class StagingPool {
  readonly #device: GPUDevice;
  readonly #free = new Map<number, GPUBuffer[]>();
  readonly #destroy: (buffer: GPUBuffer) => void;
  /** Staging buffers created (for stats and tests). */
  created = 0;

  /** A pool on `device`; `destroy` releases buffers it does not keep (the destroy throttle). */
  constructor(device: GPUDevice, destroy: (buffer: GPUBuffer) => void) {
    this.#device = device;
    this.#destroy = destroy;
  }

  /** A staging buffer of at least `bytes`. */
  take(bytes: number): GPUBuffer {
    const size = Math.max(STAGING_MIN, 2 ** Math.ceil(Math.log2(Math.max(bytes, 1))));
    const cached = this.#free.get(size)?.pop();
    if (cached !== undefined) return cached;
    this.created += 1;
    return this.#device.createBuffer({ size: size >= bytes ? size : bytes, usage: STAGING_USAGE, label: "webdlpack readback staging" });
  }

  /** Return an unmapped staging buffer. */
  give(buffer: GPUBuffer): void {
    const stack = this.#free.get(buffer.size) ?? [];
    if (buffer.size > STAGING_MAX_POOLED || stack.length >= STAGING_PER_SIZE || buffer.mapState !== "unmapped") {
      this.#destroy(buffer);
      return;
    }
    stack.push(buffer);
    this.#free.set(buffer.size, stack);
  }

  /** Buffers kept. */
  get cached(): number {
    let n = 0;
    for (const s of this.#free.values()) n += s.length;
    return n;
  }

  /** Destroy everything kept. */
  drain(): void {
    for (const stack of this.#free.values()) for (const b of stack) this.#destroy(b);
    this.#free.clear();
  }
}

/** Check and resolve a readback range against `size`. Throws INVALID_ARGUMENT / OUT_OF_BOUNDS. */
export function resolveRange(range: unknown, size: number, defaultLength: number | undefined): { offset: number; length: number } {
  if (range !== undefined && (range === null || typeof range !== "object")) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad readback range", {
      field: "range", value: describeValue(range), expected: "an object {byteOffset?, byteLength?} or undefined" });
  }
  const r = (range ?? {}) as ReadbackRange;
  const offset = r.byteOffset ?? 0;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad readback byteOffset", {
      field: "byteOffset", value: describeValue(offset), expected: "a safe integer >= 0" });
  }
  const length = r.byteLength ?? defaultLength ?? size - offset;
  if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad readback byteLength", {
      field: "byteLength", value: describeValue(length), expected: "a safe integer >= 0" });
  }
  if (offset + length > size) {
    throw new WebDLPackError("OUT_OF_BOUNDS", `readback of bytes [${offset}, ${offset + length}) is outside the ${size}-byte buffer`, {
      field: "byteOffset + byteLength", value: offset + length, expected: `<= ${size} (buffer.size)` });
  }
  return { offset, length };
}

/**
 * Copy `length` bytes at `offset` of `source` through a staging buffer, after
 * all work already submitted to `device.queue`; calls `sink` with the bytes
 * while the staging buffer is mapped (the view is only valid during the call).
 */
export async function orderedRead(device: GPUDevice, pool: StagingPool, source: GPUBuffer, offset: number, length: number,
  sink: (bytes: Uint8Array) => void): Promise<void> {
  if ((source.usage & GPUUsage.COPY_SRC) === 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "readback needs a buffer with COPY_SRC usage", {
      field: "usage", value: source.usage, expected: "usage including GPUBufferUsage.COPY_SRC (0x4)" });
  }
  // copyBufferToBuffer needs 4-byte aligned offset and size: copy the enclosing aligned range.
  const start = Math.floor(offset / 4) * 4;
  const end = Math.ceil((offset + length) / 4) * 4;
  if (end > source.size) {
    throw new WebDLPackError("UNSUPPORTED", "the last bytes of a buffer whose size is not a multiple of 4 can not be copied", {
      field: "byteLength", value: length, expected: `offset + length <= ${Math.floor(source.size / 4) * 4}` });
  }
  if (length === 0) {
    sink(new Uint8Array(0));
    return;
  }
  const staging = pool.take(end - start);
  try {
    const encoder = device.createCommandEncoder({ label: "webdlpack readback" });
    encoder.copyBufferToBuffer(source, start, staging, 0, end - start);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(MAP_MODE_READ, 0, end - start);
  } catch (err) {
    staging.destroy();
    throw new WebDLPackError("GPU_ERROR", `readback failed: ${err instanceof Error ? err.message : String(err)}`, {
      field: "ptr", value: undefined, expected: "a live buffer on a working device", cause: err });
  }
  try {
    sink(new Uint8Array(staging.getMappedRange(0, end - start), offset - start, length));
  } finally {
    staging.unmap();
    pool.give(staging);
  }
}

/** The bytes of `target` to write into, re-derived now (after any await). Throws INVALID_ARGUMENT. */
export function targetBytes(target: ReadbackTarget, length: number): Uint8Array {
  if (ArrayBuffer.isView(target)) {
    if (target.byteLength < length) {
      throw new WebDLPackError("INVALID_ARGUMENT", target.byteLength === 0 && length > 0
        ? "the target view is detached or empty (wasm memory grew during the readback?): pass {memory, address, byteLength} instead"
        : "the target view is smaller than the readback", {
        field: "target.byteLength", value: target.byteLength, expected: `>= ${length}` });
    }
    return new Uint8Array(target.buffer, target.byteOffset, length);
  }
  const memory = (target as { memory?: { buffer?: unknown } }).memory;
  const address = (target as { address?: unknown }).address;
  if (!memory || !(memory.buffer instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && memory.buffer instanceof SharedArrayBuffer))) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad readback target", {
      field: "target", value: describeValue(target), expected: "a TypedArray/DataView, or {memory: WebAssembly.Memory, address, byteLength}" });
  }
  if (typeof address !== "number" || !Number.isInteger(address)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad readback target address", {
      field: "target.address", value: describeValue(address), expected: "an integer address in wasm memory" });
  }
  const heap = memory.buffer as ArrayBufferLike;
  const at = address >>> 0;
  if (at + length > heap.byteLength) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the readback target range is outside wasm memory", {
      field: "target.address", value: at, expected: `address + ${length} <= ${heap.byteLength}` });
  }
  return new Uint8Array(heap, at, length);
}

/** Default readback length: up to `requestedSize` (an allocation's), or undefined when `range` gives one. */
export function defaultLength(requestedSize: number, range: ReadbackRange | undefined): number | undefined {
  if (range?.byteLength !== undefined) return undefined;
  const offset = typeof range?.byteOffset === "number" ? range.byteOffset : 0;
  return Math.max(0, requestedSize - offset);
}

/** Bytes a readbackInto target holds. */
export function targetLength(target: ReadbackTarget): number {
  if (ArrayBuffer.isView(target)) return target.byteLength;
  const n = (target as { byteLength?: unknown } | null)?.byteLength;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad readbackInto target", {
      field: "target.byteLength", value: describeValue(n), expected: "a TypedArray/DataView, or {memory, address, byteLength} with byteLength a safe integer >= 0" });
  }
  return n;
}
