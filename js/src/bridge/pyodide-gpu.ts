/**
 * The GPU functions Python calls through `webdlpack_js` (see pyodide.ts):
 * allocate and free GPU pointers of the page context, upload from the wasm
 * heap, read back into the wasm heap, clear and copy on the GPU.
 *
 * Python names every buffer by a GPU pointer (a u32) of the shared context
 * and every host byte by a wasm-heap address; both are taken `>>> 0`. Views
 * on the heap are made fresh after every await (the heap may grow meanwhile).
 *
 * Every byte moves through the context's transfer methods (ctx.upload,
 * readbackInto, copyBuffer, clearBuffer → context/transfers/, the one home of
 * GPU byte movement), which queue their GPU commands on the device's one
 * queue: each comes after all work already submitted there — a readback sees
 * what earlier shaders wrote.
 */
import { getContext } from "../context/index.js";
import type { AllocOptions } from "../context/types.js";
import { toAddress, type WasmHost } from "../dlpack/index.js";
import { WebDLPackError } from "../errors.js";

/** Owner recorded in the pointer table, the stats and the ledger for what Python holds: buffers it allocates, structs it holds. */
export const PYTHON_GPU_OWNER = "python";

const ceil4 = (n: number): number => Math.ceil(n / 4) * 4;

function byteCount(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", `bad ${field}`, {
      field,
      value,
      expected: "a non-negative safe integer",
    });
  }
  return value;
}

function checkHeapSpan(host: WasmHost, address: number, length: number, field: string): void {
  if (address + length > host.buffer.byteLength) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the host bytes are outside the wasm heap", {
      field,
      value: address,
      expected: `[${address}, ${address + length}) inside ${host.buffer.byteLength} bytes`,
    });
  }
}

/**
 * Allocate `nbytes` on device `deviceId` synchronously (`ctx.allocWebGPU`,
 * owner "python", outside any JS scope) and return the GPU pointer.
 */
export function allocGPUSync(nbytes: number, deviceId: number, label: string): number {
  // Python frees it (its tensor does): a JS ctx.scope() open right now must not (scoped: false).
  const options: AllocOptions = { deviceId, owner: PYTHON_GPU_OWNER, label, scoped: false };
  return getContext().allocWebGPU(nbytes, options) >>> 0;
}

/** `{memory, address, byteLength}` of the Pyodide heap, for the context's transfers (the heap view is re-read at each use). */
function heapBytes(
  host: WasmHost,
  address: number,
  length: number,
): { memory: { readonly buffer: ArrayBufferLike }; address: number; byteLength: number } {
  return { memory: host, address, byteLength: length };
}

/**
 * Write `nbytes` from the wasm heap at `srcAddress` into GPU pointer `ptr` at
 * `dstOffset` through the context's one upload path (`ctx.upload`: the bytes
 * are taken now; ordered after all submitted work; large uploads go through
 * mapped staging). `dstOffset` must be a multiple of 4; an `nbytes` that is
 * not is padded with up to 3 zero bytes, which must fit in the buffer (they do
 * for allocations made by {@link allocGPUSync}, rounded up to 16).
 */
export function uploadToGPU(host: WasmHost, ptr: number, dstOffset: number, srcAddress: number, nbytes: number): void {
  const pointer = toAddress(ptr, "data_ptr");
  const offset = byteCount(dstOffset, "byte_offset");
  const length = byteCount(nbytes, "nbytes");
  const src = toAddress(srcAddress, "source address");
  checkHeapSpan(host, src, length, "source address");
  getContext().upload(pointer, heapBytes(host, src, length), { byteOffset: offset });
}

/**
 * Read `nbytes` at `srcOffset` of GPU pointer `ptr` straight into the wasm
 * heap at `dstAddress` (`ctx.readbackInto`: no intermediate array; the heap
 * view is re-derived per piece, so heap growth meanwhile is harmless). The
 * caller keeps that block alive until the promise settles.
 */
export async function readbackToHeap(
  host: WasmHost,
  ptr: number,
  srcOffset: number,
  nbytes: number,
  dstAddress: number,
): Promise<void> {
  const pointer = toAddress(ptr, "data_ptr");
  const offset = byteCount(srcOffset, "byte_offset");
  const length = byteCount(nbytes, "nbytes");
  const dst = toAddress(dstAddress, "destination address");
  checkHeapSpan(host, dst, length, "destination address");
  await getContext().readbackInto(pointer, heapBytes(host, dst, length), { byteOffset: offset, byteLength: length });
}

/**
 * Copy `nbytes` on the GPU from (`srcPtr`, `srcOffset`) to (`dstPtr`,
 * `dstOffset`) through `ctx.copyBuffer`. Both offsets must have the same
 * remainder mod 4: the copy covers the 4-aligned span around the bytes (so
 * up to 3 bytes on each side are copied too; use it into fresh
 * allocations). Everything WebGPU would refuse throws a typed error now; the
 * copy is submitted before this returns.
 */
export function copyOnGPU(srcPtr: number, srcOffset: number, dstPtr: number, dstOffset: number, nbytes: number): void {
  const src = toAddress(srcPtr, "data_ptr");
  const dst = toAddress(dstPtr, "data_ptr");
  byteCount(srcOffset, "source byte_offset");
  byteCount(dstOffset, "byte_offset");
  byteCount(nbytes, "nbytes");
  if (srcOffset % 4 !== dstOffset % 4) {
    throw new WebDLPackError("UNSUPPORTED", "source and destination offsets must agree mod 4 for a GPU copy", {
      field: "byte_offset",
      value: dstOffset,
      expected: `≡ ${srcOffset % 4} (mod 4)`,
    });
  }
  if (nbytes === 0) return;
  const lead = srcOffset % 4;
  getContext().copyBuffer(src, dst, {
    srcOffset: srcOffset - lead,
    dstOffset: dstOffset - lead,
    byteLength: ceil4(lead + nbytes),
  });
}

/** Zero the whole buffer of GPU pointer `ptr` (a pooled allocation may hold old bytes). */
export function clearGPU(ptr: number): void {
  getContext().clearBuffer(toAddress(ptr, "data_ptr"));
}

/**
 * The GPU part of the `webdlpack_js` module, bound to the Pyodide heap `host`.
 * All addresses and pointers are taken unsigned.
 */
export function pythonGPUModule(host: WasmHost): Record<string, unknown> {
  return {
    /** Allocate `nbytes` on device `deviceId` now; returns the GPU pointer. */
    gpuAlloc: (nbytes: number, deviceId: number, label: string) => allocGPUSync(nbytes, deviceId, String(label)),
    /** Free a GPU pointer (exactly once; a second call is DOUBLE_FREE / STALE_POINTER). */
    gpuFree: (ptr: number) => getContext().freeWebGPU(ptr >>> 0),
    /** Zero a pointer's whole buffer. */
    gpuClear: (ptr: number) => clearGPU(ptr >>> 0),
    /** Heap → GPU, synchronous (ctx.upload). */
    gpuUpload: (ptr: number, dstOffset: number, srcAddress: number, nbytes: number) =>
      uploadToGPU(host, ptr >>> 0, dstOffset, srcAddress >>> 0, nbytes),
    /** GPU → heap; a Promise (await it, or pyodide.ffi.run_sync it). */
    gpuReadback: (ptr: number, srcOffset: number, nbytes: number, dstAddress: number) =>
      readbackToHeap(host, ptr >>> 0, srcOffset, nbytes, dstAddress >>> 0),
    /** GPU → GPU on one device, submitted now; argument errors throw (checked before anything is queued). */
    gpuCopy: (srcPtr: number, srcOffset: number, dstPtr: number, dstOffset: number, nbytes: number) =>
      copyOnGPU(srcPtr >>> 0, srcOffset, dstPtr >>> 0, dstOffset, nbytes),
    /** `[deviceId, buffer.size]` of a live pointer (throws for stale ones). */
    gpuPointerInfo: (ptr: number) => {
      const info = getContext().gpuPointerInfo(ptr >>> 0);
      return [info.deviceId, info.size];
    },
  };
}
