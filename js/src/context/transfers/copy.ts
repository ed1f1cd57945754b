/**
 * GPU → GPU and clearing: the one `copyBufferToBuffer` path and the one
 * `clearBuffer` path every caller uses (ctx.copyBuffer / clearBuffer, the
 * adapters' contiguous copies, Python's gpu_copy and zeroed allocations).
 * Both check everything WebGPU would refuse first (so nothing fails later on
 * the GPU side) and submit at once, ordered after all submitted work.
 */
import { WebDLPackError } from "../../errors.js";
import { GPUUsage } from "../ground/create.js";

function needUsage(buffer: GPUBuffer, bit: number, name: string, what: string): void {
  if ((buffer.usage & bit) === 0) {
    throw new WebDLPackError("UNSUPPORTED", `${what} needs a buffer with ${name} usage`, {
      field: "GPUBuffer.usage",
      value: `0x${buffer.usage.toString(16)}`,
      expected: `usage including ${name}`,
    });
  }
}

function needAligned(value: number, field: string): void {
  if (value % 4 !== 0) {
    throw new WebDLPackError("UNSUPPORTED", "WebGPU copies whole 4-byte words", {
      field,
      value,
      expected: "a multiple of 4",
    });
  }
}

function needInside(buffer: GPUBuffer, offset: number, length: number, field: string): void {
  if (offset + length > buffer.size) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the bytes are outside the GPU buffer", {
      field,
      value: `[${offset}, ${offset + length})`,
      expected: `inside the buffer's ${buffer.size} bytes`,
    });
  }
}

/** Throw unless `copyBytes` with these arguments is valid. */
export function checkCopy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, nbytes: number): void {
  needUsage(src, GPUUsage.COPY_SRC, "COPY_SRC", "a GPU copy source");
  needUsage(dst, GPUUsage.COPY_DST, "COPY_DST", "a GPU copy destination");
  needAligned(srcOffset, "srcOffset");
  needAligned(dstOffset, "dstOffset");
  needAligned(nbytes, "byteLength");
  needInside(src, srcOffset, nbytes, "srcOffset + byteLength");
  needInside(dst, dstOffset, nbytes, "dstOffset + byteLength");
  if (src === dst && srcOffset < dstOffset + nbytes && dstOffset < srcOffset + nbytes) {
    throw new WebDLPackError("INVALID_ARGUMENT", "a GPU copy within one buffer must not overlap itself", {
      field: "dstOffset",
      value: dstOffset,
      expected: `outside [${srcOffset - nbytes + 1}, ${srcOffset + nbytes})`,
    });
  }
}

/** Copy `nbytes` from `src` at `srcOffset` to `dst` at `dstOffset` on the GPU; submitted before this returns. */
export function copyBytes(
  device: GPUDevice,
  src: GPUBuffer,
  srcOffset: number,
  dst: GPUBuffer,
  dstOffset: number,
  nbytes: number,
): void {
  checkCopy(src, srcOffset, dst, dstOffset, nbytes);
  if (nbytes === 0) return;
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(src, srcOffset, dst, dstOffset, nbytes);
  device.queue.submit([encoder.finish()]);
}

/** Zero `nbytes` of `buffer` at `offset` (default: to the end); submitted before this returns. */
export function clearBytes(device: GPUDevice, buffer: GPUBuffer, offset = 0, nbytes = buffer.size - offset): void {
  needUsage(buffer, GPUUsage.COPY_DST, "COPY_DST", "clearing");
  needAligned(offset, "byteOffset");
  needAligned(nbytes, "byteLength");
  needInside(buffer, offset, nbytes, "byteOffset + byteLength");
  if (nbytes === 0) return;
  const encoder = device.createCommandEncoder();
  encoder.clearBuffer(buffer, offset, nbytes);
  device.queue.submit([encoder.finish()]);
}
