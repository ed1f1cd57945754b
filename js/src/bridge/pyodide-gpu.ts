/**
 * The GPU functions Python calls through `webdlpack_js` (see pyodide.ts):
 * allocate and free GPU pointers of the page context, upload from the wasm
 * heap, read back into the wasm heap, clear and copy on the GPU.
 *
 * Python names every buffer by a GPU pointer (a u32) of the shared context
 * and every host byte by a wasm-heap address; both are taken `>>> 0`. Views
 * on the heap are made fresh after every await (the heap may grow meanwhile).
 *
 * Ordering: every function here records its GPU commands on the device's one
 * queue (`queue.writeBuffer`, `queue.submit`), so it comes after all work
 * already submitted there — a readback sees what earlier shaders wrote.
 */
import { getContext } from "../context/index.js";
import { GPUUsage } from "../context/allocation.js";
import type { AllocOptions, WebDLPackContext } from "../context/types.js";
import { toAddress, type WasmHost } from "../dlpack/index.js";
import { WebDLPackError } from "../errors.js";

/** Owner recorded in the pointer table, the stats and the ledger for buffers Python allocates. */
export const PYTHON_GPU_OWNER = "python";

const ceil4 = (n: number): number => Math.ceil(n / 4) * 4;

function byteCount(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", `bad ${field}`, { field, value, expected: "a non-negative safe integer" });
  }
  return value;
}

/** The buffer, device and id behind `ptr` (throws the table's typed errors). */
function resolve(ctx: WebDLPackContext, ptr: number): { buffer: GPUBuffer; device: GPUDevice; deviceId: number } {
  const pointer = toAddress(ptr, "data_ptr");
  const info = ctx.gpuPointerInfo(pointer);
  const buffer = ctx.gpuPointerToBuffer(pointer);
  return { buffer, device: ctx.getWebGPUDevice(info.deviceId), deviceId: info.deviceId };
}

function checkUsageHas(buffer: GPUBuffer, bit: number, name: string, what: string): void {
  if ((buffer.usage & bit) === 0) {
    throw new WebDLPackError("UNSUPPORTED", `${what} needs a buffer with ${name} usage`, {
      field: "GPUBuffer.usage", value: `0x${buffer.usage.toString(16)}`, expected: `usage including ${name}` });
  }
}

function checkSpan(buffer: GPUBuffer, offset: number, length: number, field: string): void {
  if (offset + length > buffer.size) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the bytes are outside the GPU buffer", {
      field, value: `[${offset}, ${offset + length})`, expected: `inside the buffer's ${buffer.size} bytes` });
  }
}

function checkHeapSpan(host: WasmHost, address: number, length: number, field: string): void {
  if (address + length > host.buffer.byteLength) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the host bytes are outside the wasm heap", {
      field, value: address, expected: `[${address}, ${address + length}) inside ${host.buffer.byteLength} bytes` });
  }
}

/**
 * Run `record` (which encodes/submits GPU work) under a validation scope and
 * turn a validation error into GPU_ERROR.
 */
async function validated(device: GPUDevice, what: string, record: () => void): Promise<void> {
  device.pushErrorScope("validation");
  let thrown: unknown = null;
  let failed = false;
  try {
    record();
  } catch (err) {
    failed = true;
    thrown = err;
  }
  const error = await device.popErrorScope(); // always popped, so scopes stay balanced
  if (failed) throw thrown;
  if (error !== null) {
    throw new WebDLPackError("GPU_ERROR", `WebGPU refused ${what}: ${error.message}`, { field: "data_ptr", cause: error });
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

/**
 * Write `nbytes` from the wasm heap at `srcAddress` into GPU pointer `ptr` at
 * `dstOffset`, through `queue.writeBuffer` (the bytes are taken now; the
 * write is ordered after all work already submitted). `dstOffset` must be a
 * multiple of 4; an `nbytes` that is not is padded with up to 3 zero bytes,
 * which must fit in the buffer (they do for allocations made by
 * {@link allocGPUSync}, rounded up to 16).
 */
export function uploadToGPU(host: WasmHost, ptr: number, dstOffset: number, srcAddress: number, nbytes: number): void {
  const ctx = getContext();
  const { buffer, device } = resolve(ctx, ptr);
  const offset = byteCount(dstOffset, "byte_offset");
  const length = byteCount(nbytes, "nbytes");
  const src = toAddress(srcAddress, "source address");
  if (offset % 4 !== 0) {
    throw new WebDLPackError("UNSUPPORTED", "WebGPU writes buffers at 4-byte aligned offsets", {
      field: "byte_offset", value: offset, expected: "a multiple of 4" });
  }
  checkUsageHas(buffer, GPUUsage.COPY_DST, "COPY_DST", "an upload");
  checkSpan(buffer, offset, ceil4(length), "byte_offset + nbytes (padded to 4)");
  checkHeapSpan(host, src, length, "source address");
  if (length === 0) return;
  if (length % 4 === 0) {
    device.queue.writeBuffer(buffer, offset, host.buffer as ArrayBuffer, src, length);
  } else {
    const padded = new Uint8Array(ceil4(length));
    padded.set(new Uint8Array(host.buffer, src, length));
    device.queue.writeBuffer(buffer, offset, padded);
  }
}

/** Bytes [offset, offset + length) of GPU pointer `ptr`, read after all submitted work (`ctx.readback`). */
export async function readGPUBytes(ptr: number, offset: number, length: number): Promise<Uint8Array> {
  const ctx = getContext();
  byteCount(offset, "byte_offset");
  byteCount(length, "nbytes");
  const { buffer } = resolve(ctx, ptr);
  checkSpan(buffer, offset, length, "byte_offset + nbytes");
  if (length === 0) return new Uint8Array(0);
  return new Uint8Array(await ctx.readback(ptr >>> 0, { byteOffset: offset, byteLength: length }));
}

/**
 * Read `nbytes` at `srcOffset` of GPU pointer `ptr` into the wasm heap at
 * `dstAddress` (the caller keeps that block alive until the promise settles).
 * The heap view is made after the GPU work finished, so heap growth meanwhile is harmless.
 */
export async function readbackToHeap(host: WasmHost, ptr: number, srcOffset: number, nbytes: number, dstAddress: number): Promise<void> {
  const dst = toAddress(dstAddress, "destination address");
  const bytes = await readGPUBytes(ptr, srcOffset, nbytes);
  checkHeapSpan(host, dst, bytes.byteLength, "destination address");
  new Uint8Array(host.buffer, dst, bytes.byteLength).set(bytes);
}

/**
 * Copy `nbytes` on the GPU from (`srcPtr`, `srcOffset`) to (`dstPtr`,
 * `dstOffset`). Both offsets must have the same remainder mod 4: the copy
 * covers the 4-aligned span around the bytes (so up to 3 bytes on each side
 * are copied too; use it into fresh allocations). Argument errors throw
 * now; the copy is submitted before this returns, and the returned promise
 * reports WebGPU's validation of it.
 */
export function copyOnGPU(srcPtr: number, srcOffset: number, dstPtr: number, dstOffset: number, nbytes: number): Promise<void> {
  const ctx = getContext();
  const src = resolve(ctx, srcPtr);
  const dst = resolve(ctx, dstPtr);
  byteCount(srcOffset, "source byte_offset");
  byteCount(dstOffset, "byte_offset");
  byteCount(nbytes, "nbytes");
  if (src.deviceId !== dst.deviceId) {
    throw new WebDLPackError("BAD_DEVICE", "a GPU copy stays on one device", {
      field: "device", value: dst.deviceId, expected: `${src.deviceId} (the source's device)` });
  }
  if (srcOffset % 4 !== dstOffset % 4) {
    throw new WebDLPackError("UNSUPPORTED", "source and destination offsets must agree mod 4 for a GPU copy", {
      field: "byte_offset", value: dstOffset, expected: `≡ ${srcOffset % 4} (mod 4)` });
  }
  if (nbytes === 0) return Promise.resolve();
  const lead = srcOffset % 4;
  const size = ceil4(lead + nbytes);
  checkUsageHas(src.buffer, GPUUsage.COPY_SRC, "COPY_SRC", "a GPU copy source");
  checkUsageHas(dst.buffer, GPUUsage.COPY_DST, "COPY_DST", "a GPU copy destination");
  checkSpan(src.buffer, srcOffset - lead, size, "source byte_offset + nbytes (4-aligned)");
  checkSpan(dst.buffer, dstOffset - lead, size, "byte_offset + nbytes (4-aligned)");
  return validated(src.device, "the GPU copy", () => {
    const encoder = src.device.createCommandEncoder({ label: "webdlpack copy" });
    encoder.copyBufferToBuffer(src.buffer, srcOffset - lead, dst.buffer, dstOffset - lead, size);
    src.device.queue.submit([encoder.finish()]);
  });
}

/** Zero the whole buffer of GPU pointer `ptr` (a pooled allocation may hold old bytes). */
export function clearGPU(ptr: number): void {
  const ctx = getContext();
  const { buffer, device } = resolve(ctx, ptr);
  checkUsageHas(buffer, GPUUsage.COPY_DST, "COPY_DST", "clearing");
  const encoder = device.createCommandEncoder({ label: "webdlpack clear" });
  encoder.clearBuffer(buffer);
  device.queue.submit([encoder.finish()]);
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
    /** Heap → GPU, synchronous (queue.writeBuffer). */
    gpuUpload: (ptr: number, dstOffset: number, srcAddress: number, nbytes: number) =>
      uploadToGPU(host, ptr >>> 0, dstOffset, srcAddress >>> 0, nbytes),
    /** GPU → heap; a Promise (await it, or pyodide.ffi.run_sync it). */
    gpuReadback: (ptr: number, srcOffset: number, nbytes: number, dstAddress: number) =>
      readbackToHeap(host, ptr >>> 0, srcOffset, nbytes, dstAddress >>> 0),
    /** GPU → GPU on one device, submitted now; argument errors throw, a late validation error is logged. */
    gpuCopy: (srcPtr: number, srcOffset: number, dstPtr: number, dstOffset: number, nbytes: number) => {
      copyOnGPU(srcPtr >>> 0, srcOffset, dstPtr >>> 0, dstOffset, nbytes).catch((err: unknown) => {
        console.error(`webdlpack: GPU copy for Python failed: ${String(err)}`);
      });
    },
    /** `[deviceId, buffer.size]` of a live pointer (throws for stale ones). */
    gpuPointerInfo: (ptr: number) => {
      const info = getContext().gpuPointerInfo(ptr >>> 0);
      return [info.deviceId, info.size];
    },
  };
}
