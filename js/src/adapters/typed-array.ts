/**
 * webdlpack CPU Tensor → plain TypedArray (the other way is
 * `Tensor.fromTypedArray`, which shares the array's bytes).
 *
 * A contiguous CPU Tensor gives its `view` (shared bytes); others are copied.
 * A view over wasm memory is detached when that memory grows, so use it at
 * once or ask for a copy.
 */
import { WebDLPackError } from "../errors.js";
import { DeviceType } from "../dlpack/constants.js";
import type { TypedArray } from "../dlpack/dtype.js";
import type { Tensor } from "../tensor/index.js";

/** Options of {@link tensorToTypedArray}. */
export interface ToTypedArrayOptions {
  /**
   * "auto" (default): share bytes when contiguous, else copy. "never": share or
   * throw COPY_REQUIRED. "always": always return a fresh copy (safe to keep
   * across wasm memory growth).
   */
  copy?: "auto" | "never" | "always";
}

/**
 * The elements of a CPU Tensor as a TypedArray (type from the dtype: float32 →
 * Float32Array, bool → Uint8Array, float16 → Float16Array or Uint16Array bits, …).
 * WebGPU tensors are on the GPU: use `readTensor` (async) instead.
 */
export function tensorToTypedArray(tensor: Tensor, options: ToTypedArrayOptions = {}): TypedArray {
  const copy = options.copy ?? "auto";
  if (tensor.device.deviceType !== DeviceType.kDLCPU) {
    throw new WebDLPackError("UNSUPPORTED", "a WebGPU tensor's bytes are on the GPU; read them with readTensor()", {
      field: "tensor.device.deviceType",
      value: tensor.device.deviceType,
      expected: `kDLCPU (${DeviceType.kDLCPU})`,
    });
  }
  if (copy === "always") return tensor.toArray();
  if (tensor.isContiguous) {
    try {
      return tensor.view;
    } catch (err) {
      if (copy === "never") throw err;
      return tensor.toArray(); // e.g. a misaligned first element
    }
  }
  if (copy === "never") {
    throw new WebDLPackError("COPY_REQUIRED", "a strided tensor has no single TypedArray view", {
      field: "tensor.strides",
      value: tensor.strides?.join(","),
      expected: "C-contiguous strides, or copy: 'auto' | 'always'",
    });
  }
  return tensor.toArray();
}
