/**
 * TensorFlow.js tensors → webdlpack tensors: TF.js's own buffer shared
 * zero-copy when that is safe, else a copy. The conditions TF.js sets are
 * listed in tfjs-to.ts; the backend binding is in tfjs-backend.ts.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { getContext, unwrapDevice, type WebDLPackContext } from "../context/index.js";
import { flushQueueUsers } from "../context/transfers/queue-users.js";
import { Tensor } from "../tensor/index.js";
import type { DType } from "../dlpack/dtype.js";
import { dtypeOfTfjs } from "./dtypes.js";
import type { TfjsLike, TfjsTensorLike, TfjsWebGPUBackendInternals } from "./framework-types.js";
import { elementCount, runGpuCopy } from "./gpu-copy.js";
import { BufferLease } from "./leases.js";
import { produceCopiedGPUTensor, produceGPUTensor, TFJS_OWNER } from "./producer.js";
import { flushTfjsFirst } from "./tfjs-backend.js";

/** Options of {@link tensorFromTfjs}. */
export interface TensorFromTfjsOptions {
  /** The context (default `getContext()`). */
  ctx?: WebDLPackContext;
  /**
   * "auto" (default): share TF.js's buffer when that is safe, else copy.
   * "never": share or throw COPY_REQUIRED. "always": copy.
   */
  copy?: "auto" | "never" | "always";
}

/** Adopted TF.js buffers, so a buffer adopted twice gets one pointer. */
const adoptedTfjs = new WeakMap<GPUBuffer, { lease: BufferLease; pointer: number; deviceId: number }>();

/** Why TF.js's own buffer cannot be shared, or null when it can. */
function shareBlocker<T extends TfjsTensorLike>(
  tf: TfjsLike<T>,
  backend: TfjsWebGPUBackendInternals,
  t: T,
  convert: boolean,
): string | null {
  if (convert) return `TF.js ${t.dtype} is 4 bytes per element, DLPack's 1`;
  const data = backend.tensorMap?.get(t.dataId);
  if (data === undefined) return "the tensor is not on the active backend";
  if (!(data.resource instanceof GPUBuffer))
    return data.values != null ? "the data is still on the CPU (not uploaded)" : "the data is not in a GPUBuffer";
  if (typeof backend.endComputePassEncoder !== "function" || typeof backend.submitQueue !== "function")
    return "this TF.js backend has no flush (endComputePassEncoder/submitQueue)";
  if (typeof tf.clone !== "function" || typeof tf.keep !== "function")
    return "this TF.js has no clone/keep to hold the data";
  if ((data.resource.usage & GPUBufferUsage.STORAGE) === 0) return "the buffer lacks STORAGE usage";
  return null;
}

/**
 * A TF.js tensor as a webdlpack tensor.
 *
 * - On a WebGPU backend: first TF.js's unsubmitted work is submitted (so what
 *   the consumer queues runs after it). float32/int32 data already on the GPU
 *   is shared zero-copy and marked READ_ONLY (TF.js tensors are immutable), over
 *   a read-only pointer (webdlpack's writes through it are refused: BAD_FLAGS);
 *   a TF.js clone keeps the data alive until the webdlpack tensor and every
 *   holder of it are released. Otherwise TF.js's `dataToGPU()` copy is used (IS_COPIED);
 *   bool is converted to 1 byte per element on the GPU (IS_COPIED). A backend on
 *   another device than the context's default gets that device registered
 *   (`registerWebGPUDevice`), and the tensor is on its id.
 * - On a CPU backend: a CPU tensor over a copy of `await t.data()`.
 */
export async function tensorFromTfjs<T extends TfjsTensorLike>(
  tf: TfjsLike<T>,
  t: T,
  options: TensorFromTfjsOptions = {},
): Promise<Tensor> {
  const ctx = options.ctx ?? getContext();
  const copy = options.copy ?? "auto";
  if (t === null || typeof t !== "object" || !Array.isArray(t.shape) || typeof t.dtype !== "string") {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected a tf.Tensor", {
      field: "tfTensor",
      value: describeValue(t),
      expected: "a tf.Tensor",
    });
  }
  if (t.isDisposed) {
    throw new WebDLPackError("DISPOSED", "this TF.js tensor was disposed", {
      field: "tfTensor.isDisposed",
      value: true,
      expected: "a live tf.Tensor",
    });
  }
  const { dtype, convert } = dtypeOfTfjs(t.dtype);
  const shape = [...t.shape];
  const backend = tf.backend() as TfjsWebGPUBackendInternals;
  const device = backend?.device;
  if (device === undefined || typeof GPUDevice === "undefined" || !(device instanceof GPUDevice)) {
    if (copy === "never") {
      throw new WebDLPackError(
        "COPY_REQUIRED",
        `the TF.js backend "${tf.getBackend()}" keeps data on the CPU; taking it needs a copy`,
        { field: "options.copy", value: copy, expected: "'auto' or 'always'" },
      );
    }
    const values = await t.data();
    const array = convert
      ? Uint8Array.from(values as ArrayLike<number>, (v) => (v ? 1 : 0))
      : (values as Float32Array | Int32Array).slice();
    return Tensor.fromTypedArray(array, { shape, dtype });
  }
  const deviceId = ctx.registerWebGPUDevice(device);
  const blocker = copy === "always" ? "copy: 'always'" : shareBlocker(tf, backend, t, convert);

  if (blocker === null) {
    // TF.js's recorded work is submitted (queue-users.ts), so whatever reads the buffer next is queued after it.
    flushTfjsFirst(backend);
    flushQueueUsers(unwrapDevice(device));
    const buffer = backend.tensorMap!.get(t.dataId)!.resource as GPUBuffer;
    let entry = adoptedTfjs.get(buffer);
    if (entry === undefined || entry.lease.released) {
      const holder = tf.keep(tf.clone(t));
      let pointer: number;
      try {
        // Read-only: nothing writes TF.js's data through webdlpack (context/pointers/read-only.ts). A buffer webdlpack
        // knows already (an ORT output, a webdlpack tensor TF.js reads in place) gets a second, read-only pointer.
        pointer = ctx.registerGPUBuffer(buffer, {
          deviceId,
          owned: false,
          owner: TFJS_OWNER,
          onRelease: () => holder.dispose(),
          readOnly: true,
        });
      } catch (err) {
        holder.dispose();
        throw err;
      }
      const lease = new BufferLease(`TF.js tensor ${shape.join("x")} ${t.dtype}`, () => {
        adoptedTfjs.delete(buffer);
        ctx.freeWebGPU(pointer);
      });
      entry = { lease, pointer, deviceId };
      adoptedTfjs.set(buffer, entry);
    }
    return produceGPUTensor({
      pointer: entry.pointer,
      deviceId,
      dtype,
      shape,
      readOnly: true,
      release: entry.lease.hold(),
      owner: TFJS_OWNER,
    });
  } else if (copy === "never") {
    throw new WebDLPackError("COPY_REQUIRED", `TF.js's buffer cannot be shared: ${blocker}`, {
      field: "tfTensor",
      value: blocker,
      expected: "copy: 'auto' or 'always'",
    });
  }

  // Values TF.js keeps on the CPU (small ops run there): upload them ourselves.
  const record = backend.tensorMap?.get(t.dataId);
  if (record !== undefined && (record.resource === null || record.resource === undefined) && record.values != null) {
    return uploadValues(ctx, deviceId, await t.data(), convert, dtype, shape);
  }
  // Copy: dataToGPU() submits TF.js's pending work and copies into a buffer we get to keep.
  const gpuData = t.dataToGPU();
  const buffer = gpuData.buffer;
  if (buffer === undefined) {
    gpuData.tensorRef.dispose();
    throw new WebDLPackError("UNSUPPORTED", "TF.js dataToGPU() gave no GPUBuffer", {
      field: "dataToGPU().buffer",
      value: describeValue(buffer),
      expected: "a GPUBuffer",
    });
  }
  if (!convert) {
    try {
      const pointer = ctx.registerGPUBuffer(buffer, {
        deviceId,
        owned: false,
        owner: "tfjs.dataToGPU",
        onRelease: () => gpuData.tensorRef.dispose(),
      });
      return produceGPUTensor({
        pointer,
        deviceId,
        dtype,
        shape,
        isCopied: true,
        release: () => ctx.freeWebGPU(pointer),
        owner: TFJS_OWNER,
      });
    } catch (err) {
      gpuData.tensorRef.dispose();
      throw err;
    }
  }
  // bool: 4 bytes → 1 byte per element, into a buffer of the context.
  try {
    const count = elementCount(shape);
    const alloc = { deviceId, label: "webdlpack.adapters.tfjs-bool" };
    return await produceCopiedGPUTensor(ctx, { nbytes: count, alloc, dtype, shape, owner: TFJS_OWNER }, (pointer) =>
      runGpuCopy(
        device,
        "u32-to-bool8",
        { buffer, shape, strides: null, byteOffset: 0, itemsize: 4 },
        ctx.gpuPointerToBuffer(pointer),
      ),
    );
  } finally {
    // The conversion was submitted before TF.js can reuse this buffer.
    gpuData.tensorRef.dispose();
  }
}

/** Upload CPU-resident TF.js values into a new context buffer (bool as 1 byte per element); IS_COPIED. */
async function uploadValues(
  ctx: WebDLPackContext,
  deviceId: number,
  values: ArrayLike<number> | Uint8Array[],
  convert: boolean,
  dtype: DType,
  shape: number[],
): Promise<Tensor> {
  if (!ArrayBuffer.isView(values)) {
    throw new WebDLPackError("UNSUPPORTED", "TF.js values are not numeric", {
      field: "tfTensor.data()",
      value: typeof values,
      expected: "a TypedArray",
    });
  }
  const bytes = convert
    ? Uint8Array.from(values as unknown as ArrayLike<number>, (v) => (v ? 1 : 0))
    : new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const nbytes = Math.ceil(bytes.byteLength / 4) * 4;
  const alloc = { deviceId, label: "webdlpack.adapters.tfjs-upload" };
  // The context's one upload path; an odd length is padded with zeros.
  return produceCopiedGPUTensor(ctx, { nbytes, alloc, dtype, shape, owner: TFJS_OWNER }, (pointer) =>
    ctx.upload(pointer, bytes),
  );
}
