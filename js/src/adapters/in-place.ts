/**
 * Whether a framework that takes a whole GPUBuffer from byte 0 as a dense
 * row-major tensor (ONNX Runtime's `Tensor.fromGpuBuffer`, LiteRT.js's
 * `new Tensor(gpuBuffer, …)`) can read a webdlpack tensor in place.
 */
import type { Tensor } from "../tensor/index.js";
import type { GPUTensorLocation } from "./gpu-buffer.js";

/**
 * Why `api` cannot read `tensor` (at `loc`) in place — a byte_offset, strides,
 * or a buffer without STORAGE usage — or null when it can.
 */
export function inPlaceCopyReason(tensor: Tensor, loc: GPUTensorLocation, api: string): string | null {
  if (loc.byteOffset !== 0) return `byte_offset ${loc.byteOffset} != 0 (${api} takes no offset)`;
  if (!loc.contiguous) return `strides ${tensor.strides?.join(",")} are not C-contiguous`;
  if ((loc.buffer.usage & GPUBufferUsage.STORAGE) === 0) return "the buffer lacks STORAGE usage";
  return null;
}
