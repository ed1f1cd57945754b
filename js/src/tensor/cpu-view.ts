/**
 * The CPU side of a tensor: its bytes in wasm memory or a JS ArrayBuffer, as
 * a TypedArray view over them (no copy) or a C-contiguous copy (any strides).
 */
import { WebDLPackError } from "../errors.js";
import {
  gatherStrided,
  isSubByte,
  itemsize,
  typedArrayFor,
  type DLTensorDesc,
  type TensorExtent,
  type TypedArray,
} from "../dlpack/index.js";
import type { Storage, TensorFlags } from "./types.js";

/** What the CPU view of a tensor is computed from. */
export interface CPUTensorParts {
  readonly desc: DLTensorDesc;
  readonly extent: TensorExtent;
  readonly flags: TensorFlags;
}

/** The memory a CPU tensor's bytes are in now (wasm memory is re-read: growth replaces it). */
export function storageBuffer(storage: Storage): ArrayBufferLike {
  if (storage.kind === "webgpu") {
    throw new WebDLPackError("UNSUPPORTED", "the bytes of a WebGPU tensor are on the GPU; use gpuBuffer", {
      field: "tensor.storage",
      value: "webgpu",
      expected: "a wasm or js tensor",
    });
  }
  return storage.kind === "wasm" ? storage.host.buffer : storage.buffer;
}

/** Guard against a JS ArrayBuffer detached or transferred since construction (wasm memory only grows). */
function checkInside({ desc, extent }: CPUTensorParts, buffer: ArrayBufferLike): void {
  if (extent.count === 0) return;
  const first = desc.data + desc.byteOffset;
  if (first + extent.lowByte < 0 || first + extent.highByte > buffer.byteLength) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "tensor bytes are outside the buffer (was it detached or transferred?)", {
      field: "tensor.data",
      value: desc.data,
      expected: `bytes [${first + extent.lowByte}, ${first + extent.highByte}) inside ${buffer.byteLength}`,
    });
  }
}

/** A TypedArray over exactly the tensor's bytes in `buffer` (see `Tensor.view`). */
export function viewOf(parts: CPUTensorParts, buffer: ArrayBufferLike): TypedArray {
  const { desc, extent, flags } = parts;
  if (!extent.contiguous) {
    throw new WebDLPackError("BAD_STRIDES", "a strided tensor has no single TypedArray view; toArray() copies it", {
      field: "tensor.strides",
      value: desc.strides?.join(","),
      expected: "C-contiguous strides",
    });
  }
  const info = typedArrayFor(desc.dtype, "tensor.dtype");
  const start = desc.data + desc.byteOffset;
  const count = extent.count;
  const packed = isSubByte(desc.dtype) && !flags.subbytePadded;
  const length = packed ? extent.nbytes : count * info.perElement;
  if (count === 0) return new info.ctor(0);
  checkInside(parts, buffer);
  if (start % info.ctor.BYTES_PER_ELEMENT !== 0) {
    throw new WebDLPackError(
      "UNSUPPORTED",
      `the first element is not ${info.ctor.BYTES_PER_ELEMENT}-byte aligned for ${info.ctor.name}; toArray() copies it`,
      {
        field: "tensor.data + byteOffset",
        value: start,
        expected: `a multiple of ${info.ctor.BYTES_PER_ELEMENT}`,
      },
    );
  }
  return new info.ctor(buffer, start, length);
}

/** A C-contiguous copy of the tensor's elements in `buffer` (see `Tensor.toArray`). */
export function copyOf(parts: CPUTensorParts, buffer: ArrayBufferLike): TypedArray {
  const { desc, extent, flags } = parts;
  const info = typedArrayFor(desc.dtype, "tensor.dtype");
  const { count, nbytes, contiguous } = extent;
  const out = new Uint8Array(nbytes);
  const first = desc.data + desc.byteOffset;
  const packed = isSubByte(desc.dtype) && !flags.subbytePadded;
  checkInside(parts, buffer);
  if (count > 0) {
    if (packed) {
      if (!contiguous) {
        throw new WebDLPackError("UNSUPPORTED", "strided packed sub-byte tensors cannot be copied element-wise", {
          field: "tensor.strides",
          value: desc.strides?.join(","),
          expected: "contiguous strides for packed sub-byte dtypes",
        });
      }
      out.set(new Uint8Array(buffer, first, nbytes));
    } else {
      const strides = desc.strides ?? null;
      const src = new Uint8Array(buffer);
      if (strides === null) out.set(src.subarray(first, first + nbytes));
      else gatherStrided(src, first, desc.shape, strides, itemsize(desc.dtype), out);
    }
  }
  return new info.ctor(out.buffer, 0, packed ? nbytes : count * info.perElement);
}
