/**
 * webdlpack tensors → TensorFlow.js (WebGPU backend), on the context's shared
 * GPUDevice (the backend binding is in tfjs-backend.ts; the other way is
 * tfjs-from.ts).
 *
 * Conditions (checked with @tensorflow/tfjs-core + tfjs-backend-webgpu 4.22.0):
 * - TF.js's WebGPU kernels are registered under the backend name "webgpu" only.
 *   {@link registerTfjsWebGPUBackend} either replaces the "webgpu" backend with
 *   one built on the shared device, or copies the kernels to a new name.
 * - `tf.tensor({buffer, zeroCopy: true}, shape, dtype)` reads a foreign buffer
 *   in place; it needs STORAGE | COPY_SRC usage, the backend's device, and at
 *   least 4 bytes per element from byte 0 (TF.js takes no offset or strides).
 * - TF.js records work in a compute pass it has not submitted yet. Before any
 *   webdlpack transfer or hand-off on its device, that work is submitted (the
 *   backend's flush, registered in context/transfers/queue-users.ts by
 *   tfjs-backend.ts), so what comes after queues after it — never mid-op.
 * - TF.js `bool` is 4 bytes per element, DLPack's 1: converted on the GPU (IS_COPIED).
 *   TF.js has no float16, int8, … : UNSUPPORTED, never reinterpreted.
 */
import { WebDLPackError } from "../errors.js";
import { DeviceType } from "../dlpack/constants.js";
import { getContext, type WebDLPackContext } from "../context/index.js";
import type { Tensor } from "../tensor/index.js";
import type { DType } from "../dlpack/dtype.js";
import { dtypeName, tfjsTypeOf } from "./dtypes.js";
import type { TfjsLike, TfjsTensorLike } from "./framework-types.js";
import type { GPUTensorLocation } from "./gpu-buffer.js";
import { elementCount } from "./gpu-copy.js";
import { handOffGPUTensor, recordHandoff } from "./handoff.js";
import { tensorToTypedArray } from "./typed-array.js";
import { activeBackendOn, watchRelease } from "./tfjs-backend.js";

/** Options of {@link tensorToTfjs}. */
export interface TensorToTfjsOptions {
  /** The context (default `getContext()`). */
  ctx?: WebDLPackContext;
  /**
   * "auto" (default): share the buffer when TF.js can read it as it is, else
   * copy (or convert) on the GPU. "never": share or throw COPY_REQUIRED. "always": copy.
   */
  copy?: "auto" | "never" | "always";
}

/** Why TF.js cannot read the tensor at `loc` in place (it takes 4-byte elements from byte 0), or null. */
function tfjsCopyReason(loc: GPUTensorLocation, count: number, convert: boolean, dtype: DType): string | null {
  if (convert) return `${dtypeName(dtype)} is 1 byte per element in DLPack, 4 in TF.js`;
  if (loc.byteOffset !== 0) return `byte_offset ${loc.byteOffset} != 0 (TF.js takes no offset)`;
  if (!loc.contiguous) return "strides are not C-contiguous";
  const needed = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
  if ((loc.buffer.usage & needed) !== needed) return "the buffer lacks STORAGE | COPY_SRC usage";
  if (loc.buffer.size < 4 * count) return `the buffer (${loc.buffer.size} bytes) is smaller than ${4 * count}`;
  return null;
}

/**
 * A webdlpack tensor as a TF.js tensor on the active backend.
 *
 * - WebGPU tensor (the active backend must be a WebGPU backend on the same
 *   device, see {@link registerTfjsWebGPUBackend}): float32/int32, contiguous at
 *   byte 0 → `tf.tensor({buffer, zeroCopy: true}, shape, dtype)` on the very same
 *   GPUBuffer; the source stays alive until TF.js releases that data. Otherwise
 *   (offset, strides, bool 1 → 4 bytes) a GPU copy/conversion; {@link handoffInfo}
 *   reports `isCopied` and why. Other dtypes: UNSUPPORTED naming both sides.
 * - CPU tensor → `tf.tensor(copy of the elements, shape, dtype)` (TF.js keeps
 *   CPU values by reference, so they are always copied).
 */
export async function tensorToTfjs<T extends TfjsTensorLike>(
  tf: TfjsLike<T>,
  tensor: Tensor,
  options: TensorToTfjsOptions = {},
): Promise<T> {
  const ctx = options.ctx ?? getContext();
  const copy = options.copy ?? "auto";
  const mapping = tfjsTypeOf(tensor.dtype);
  const shape = [...tensor.shape];
  if (tensor.device.deviceType === DeviceType.kDLCPU) {
    if (copy === "never") {
      throw new WebDLPackError(
        "COPY_REQUIRED",
        "TF.js keeps CPU values by reference, so webdlpack always copies CPU tensors into it",
        {
          field: "options.copy",
          value: copy,
          expected: "'auto' or 'always' for a CPU tensor",
        },
      );
    }
    const values = tensorToTypedArray(tensor, { copy: "always" });
    const out = tf.tensor(values as unknown as ArrayLike<number>, shape, mapping.tfjs);
    recordHandoff(out, "CPU values are copied into TF.js");
    return out;
  }
  const deviceId = tensor.device.deviceId;
  const count = elementCount(shape);
  // TF.js never writes a tensor's data (its tensors are immutable): a READ_ONLY tensor is lent as it is.
  return handOffGPUTensor(tensor, ctx, {
    name: "TF.js",
    copy,
    mayWrite: false,
    kind: mapping.convert ? "bool8-to-u32" : "copy",
    expected: "float32/int32, contiguous at byte 0",
    inPlace: (loc) => tfjsCopyReason(loc, count, mapping.convert, tensor.dtype),
    make: ({ buffer, release, source }) => {
      const backend = activeBackendOn(tf, source.device, deviceId);
      // TF.js makes tensors from GPU data only as float32/int32: bool arrives as int32 0/1, then a cast.
      const made = tf.tensor({ buffer, zeroCopy: true }, shape, mapping.convert ? "int32" : mapping.tfjs);
      watchRelease(backend, made.dataId, release);
      if (!mapping.convert) return made;
      try {
        return tf.cast(made, mapping.tfjs);
      } finally {
        made.dispose(); // TF.js releases it after the cast's work is submitted
      }
    },
  });
}
