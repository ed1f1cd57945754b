/**
 * Plain TypedArray ↔ webdlpack CPU Tensor.
 *
 * Both directions share bytes when they can: a TypedArray becomes a `"js"`
 * Tensor over the same ArrayBuffer, and a contiguous CPU Tensor gives its
 * `view`. A view over wasm memory is detached when that memory grows, so use it
 * at once or ask for a copy.
 */
import { WebDLPackError } from "../errors.js";
import { DeviceType } from "../dlpack/constants.js";
import type { DType, TypedArray } from "../dlpack/dtype.js";
import { Tensor } from "../tensor.js";

/** Options of {@link tensorFromTypedArray}. */
export interface FromTypedArrayOptions {
  /** Extents (default 1-D over the whole array). Must cover the array's bytes exactly. */
  shape?: readonly number[];
  /**
   * Element type (default the array's own). Use it to give raw-bit arrays their
   * meaning: a Uint8Array as "bool", a Uint16Array as "float16" or "bfloat16".
   * A dtype the array's elements are not stored as is BAD_DTYPE unless `reinterpret`.
   */
  dtype?: DType | string;
  /** View the bytes as a `dtype` the array's elements are not (e.g. a Float32Array as int32 bits). */
  reinterpret?: boolean;
  /** Mark the tensor READ_ONLY. */
  readOnly?: boolean;
}

/** A CPU (`"js"`) Tensor over `array`'s bytes. No copy: writes to either are seen by the other. */
export function tensorFromTypedArray(array: ArrayBufferView, options: FromTypedArrayOptions = {}): Tensor {
  if (!ArrayBuffer.isView(array) || array instanceof DataView) {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected a TypedArray", { field: "array", value: array === null ? null : typeof array, expected: "a TypedArray (Float32Array, Int32Array, …)" });
  }
  return Tensor.fromTypedArray(array, {
    ...(options.shape === undefined ? {} : { shape: options.shape }),
    ...(options.dtype === undefined ? {} : { dtype: options.dtype }),
    ...(options.readOnly === undefined ? {} : { readOnly: options.readOnly }),
    ...(options.reinterpret === undefined ? {} : { reinterpret: options.reinterpret }),
  });
}

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
