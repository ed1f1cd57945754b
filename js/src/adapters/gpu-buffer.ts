/**
 * Plain GPUBuffer ↔ webdlpack WebGPU Tensor, plus the two GPU helpers the
 * framework adapters share: a contiguous copy (with bool width conversion) and a
 * read back to a TypedArray.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { DeviceType } from "../dlpack/constants.js";
import {
  formatDType,
  isSubByte,
  itemsize,
  parseDType,
  toDType,
  typedArrayFor,
  type DType,
  type TypedArray,
} from "../dlpack/dtype.js";
import { getContext, ownerLabel, type WebDLPackContext } from "../context/index.js";
import { bufferUseError, pendingBufferCheck } from "../context/pointers/register-check.js";
import { flushQueueUsers } from "../context/transfers/queue-users.js";
import type { Tensor } from "../tensor/index.js";
import {
  byteExtent,
  elementCount,
  isCContiguous,
  outputBytes,
  runGpuCopy,
  tryPlainCopy,
  type GpuCopyKind,
} from "./gpu-copy.js";
import { ADAPTERS_OWNER, produceCopiedGPUTensor, produceGPUTensor } from "./producer.js";

/** Options of {@link tensorFromGPUBuffer}. */
export interface FromGPUBufferOptions {
  /** Element type (a DType or a name such as "float32"). Required: a buffer has no type. */
  dtype: DType | string;
  /** Extents. Required: never inferred from `buffer.size` (buffers are often padded). */
  shape: readonly number[];
  /** Strides in elements, or null/undefined for C-contiguous. */
  strides?: readonly number[] | null;
  /** Bytes from the start of the buffer to the first element (default 0). */
  byteOffset?: number;
  /** webdlpack device id the buffer was made on (default 0). It can not be checked: pass the right one. */
  deviceId?: number;
  /** true: disposing the Tensor destroys the buffer; false (default): it only forgets it. */
  owned?: boolean;
  /** Mark the tensor READ_ONLY. */
  readOnly?: boolean;
  /** Mark the tensor IS_COPIED (the buffer is a copy made for the consumer). */
  isCopied?: boolean;
  /** Who produced the buffer: a framework name (shown by `gpuPointerInfo`, and the tensor's owner in the ledger). */
  owner?: string;
  /** Called once when the Tensor and every export of it are released (after the pointer is freed). */
  onRelease?: () => void;
  /** The context (default `getContext()`). */
  ctx?: WebDLPackContext;
}

/** The device-side facts of a WebGPU tensor. */
export interface GPUTensorLocation {
  /** The buffer the tensor's pointer names. */
  buffer: GPUBuffer;
  /** The device it is on. */
  device: GPUDevice;
  /** webdlpack device id. */
  deviceId: number;
  /** Bytes from the buffer start to element [0, …]. */
  byteOffset: number;
  /** Bytes one element takes. */
  itemsize: number;
  /** True if the elements are C-contiguous. */
  contiguous: boolean;
}

/** Throw unless `tensor` is a live WebGPU tensor. */
export function requireGPUTensor(tensor: Tensor, what: string): void {
  if (
    tensor === null ||
    typeof tensor !== "object" ||
    typeof (tensor as { dispose?: unknown }).dispose !== "function"
  ) {
    throw new WebDLPackError("INVALID_ARGUMENT", `${what} needs a webdlpack Tensor`, {
      field: "tensor",
      value: describeValue(tensor),
      expected: "a Tensor",
    });
  }
  if (tensor.device.deviceType !== DeviceType.kDLWebGPU) {
    throw new WebDLPackError("BAD_DEVICE", `${what} needs a WebGPU tensor`, {
      field: "tensor.device.deviceType",
      value: tensor.device.deviceType,
      expected: `kDLWebGPU (${DeviceType.kDLWebGPU})`,
    });
  }
}

/** The adapters' copies and readbacks work in whole bytes per element: packed 1/2/4/6-bit data would come out wrong. */
function refusePackedSubByte(tensor: Tensor): void {
  if (isSubByte(tensor.dtype) && !tensor.flags.subbytePadded) {
    throw new WebDLPackError(
      "UNSUPPORTED",
      `packed ${formatDType(tensor.dtype)} GPU tensors can not be copied or read by the adapters`,
      {
        field: "tensor.dtype",
        value: formatDType(tensor.dtype),
        expected: "a dtype of whole bytes, or a sub-byte tensor with IS_SUBBYTE_TYPE_PADDED (one byte per element)",
      },
    );
  }
}

/** Resolve a WebGPU tensor's buffer and device through the context's pointer table. */
export function locateGPUTensor(tensor: Tensor, ctx: WebDLPackContext = getContext()): GPUTensorLocation {
  requireGPUTensor(tensor, "locating a GPU tensor");
  const deviceId = tensor.device.deviceId;
  return {
    buffer: ctx.gpuPointerToBuffer(tensor.data),
    device: ctx.getWebGPUDevice(deviceId),
    deviceId,
    byteOffset: tensor.byteOffset,
    itemsize: itemsize(tensor.dtype),
    contiguous: tensor.isContiguous && isCContiguous(tensor.shape, tensor.strides),
  };
}

/**
 * {@link locateGPUTensor}, once the tensor's buffer has passed the check registration started
 * (context/pointers/register-check.ts) if it is still running: a buffer another GPUDevice made is refused
 * with BAD_DEVICE (a destroyed one with DISPOSED) before anything uses it. No wait otherwise. Work other libraries
 * recorded on the device and not yet submitted (tvmjs's) is submitted first, so what the caller queues runs after it.
 */
export async function locateCheckedGPUTensor(tensor: Tensor, ctx: WebDLPackContext): Promise<GPUTensorLocation> {
  let loc = locateGPUTensor(tensor, ctx);
  const wait = pendingBufferCheck(loc.buffer, tensor.data, loc.deviceId);
  if (wait !== null) {
    const refused = await wait;
    if (refused !== null) throw refused;
    loc = locateGPUTensor(tensor, ctx);
  }
  // What a library recorded on the device and not yet submitted (tvmjs writing a buffer lent to it) goes first.
  flushQueueUsers(loc.device);
  return loc;
}

/**
 * Adopt `buffer` as a webdlpack WebGPU Tensor (no copy): the buffer gets a GPU
 * pointer, and disposing the Tensor (and every export of it) frees that pointer
 * — destroying the buffer only if `owned`. Shape and dtype come from the
 * caller, never from `buffer.size`. Every byte the tensor reaches must lie in
 * the buffer (OUT_OF_BOUNDS otherwise).
 */
export function tensorFromGPUBuffer(buffer: GPUBuffer, options: FromGPUBufferOptions): Tensor {
  const ctx = options.ctx ?? getContext();
  if (typeof GPUBuffer !== "undefined" && !(buffer instanceof GPUBuffer)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected a GPUBuffer", {
      field: "buffer",
      value: describeValue(buffer),
      expected: "a GPUBuffer",
    });
  }
  const dtype = toDType(options.dtype, "options.dtype");
  const shape = options.shape;
  if (!Array.isArray(shape)) {
    throw new WebDLPackError("BAD_SHAPE", "shape is required: a buffer's size does not give it", {
      field: "options.shape",
      value: shape,
      expected: "an array of integers",
    });
  }
  for (const [i, d] of shape.entries()) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new WebDLPackError("BAD_SHAPE", "extents must be integers >= 0", {
        field: `options.shape[${i}]`,
        value: d,
        expected: "an integer >= 0",
      });
    }
  }
  const byteOffset = options.byteOffset ?? 0;
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "byteOffset must be an integer >= 0", {
      field: "options.byteOffset",
      value: byteOffset,
      expected: "an integer >= 0",
    });
  }
  const strides = options.strides ?? null;
  if (
    strides !== null &&
    (!Array.isArray(strides) || strides.length !== shape.length || !strides.every((s) => Number.isSafeInteger(s)))
  ) {
    throw new WebDLPackError("BAD_STRIDES", "strides must be integers, one per dimension", {
      field: "options.strides",
      value: strides,
      expected: `${shape.length} integers`,
    });
  }
  const { lo, hi } = byteExtent({ shape, strides, byteOffset, itemsize: itemsize(dtype) });
  if (elementCount(shape) > 0 && (lo < 0 || hi > buffer.size)) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the tensor reaches outside the buffer", {
      field: "options.shape/strides/byteOffset",
      value: `bytes [${lo}, ${hi})`,
      expected: `inside the buffer's ${buffer.size} bytes`,
    });
  }
  const deviceId = options.deviceId ?? 0;
  ctx.getWebGPUDevice(deviceId); // UNKNOWN_DEVICE / DEVICE_LOST before anything is registered
  const onRelease = options.onRelease;
  const owner = options.owner ?? "webdlpack.adapters.gpu-buffer";
  const pointer = ctx.registerGPUBuffer(buffer, {
    deviceId,
    owned: options.owned ?? false,
    owner,
    ...(onRelease === undefined ? {} : { onRelease: () => onRelease() }),
  });
  return produceGPUTensor({
    pointer,
    deviceId,
    dtype,
    shape,
    strides,
    byteOffset,
    readOnly: options.readOnly ?? false,
    isCopied: options.isCopied ?? false,
    release: () => ctx.freeWebGPU(pointer),
    owner: ownerLabel(owner),
  });
}

/**
 * The GPUBuffer of a WebGPU tensor, with where its elements start. No copy.
 * The buffer stays valid while the tensor is alive; read `byteOffset` and
 * `contiguous` before handing it to code that assumes a packed tensor at byte 0.
 */
export function tensorToGPUBuffer(tensor: Tensor, ctx: WebDLPackContext = getContext()): GPUTensorLocation {
  return locateGPUTensor(tensor, ctx);
}

/** Options of {@link copyGPUTensor}. */
export interface CopyGPUTensorOptions {
  /** What to do to the elements: plain copy (default), bool 1 → 4 bytes, or 4 → 1 byte. */
  kind?: GpuCopyKind;
  /** Allocation usage (default the context's STORAGE | COPY_SRC | COPY_DST). */
  usage?: number;
  /** The context (default `getContext()`). */
  ctx?: WebDLPackContext;
  /** dtype of the result (default: the source's for "copy", int32 for "bool8-to-u32", bool for "u32-to-bool8"). */
  dtype?: DType | string;
}

/**
 * A C-contiguous copy at byte 0 of a new buffer on the same device, marked
 * IS_COPIED. Uses `copyBufferToBuffer` when the source is contiguous and
 * 4-byte aligned, else a compute shader (any strides, negative included, any
 * byte offset; needs STORAGE usage on the source). Bool width conversions run in
 * the same shader. The work is submitted before this resolves; nothing is read back.
 *
 * The copy runs in a validation error scope and resolves only once WebGPU has accepted it (one more round trip
 * to the GPU process): a copy WebGPU refused — the source's maker destroyed it, or another GPUDevice made it —
 * rejects (DISPOSED / BAD_DEVICE) instead of handing on a buffer of zeros that pass for the source's.
 */
export async function copyGPUTensor(tensor: Tensor, options: CopyGPUTensorOptions = {}): Promise<Tensor> {
  const ctx = options.ctx ?? getContext();
  refusePackedSubByte(tensor);
  // Located, and the source held, before the first await: its owner may dispose it meanwhile.
  const src = locateGPUTensor(tensor, ctx);
  const pending = pendingBufferCheck(src.buffer, tensor.data, src.deviceId);
  flushQueueUsers(src.device);
  return (await copyLocatedGPUTensor(tensor, src, { ...options, ctx }, pending)).tensor;
}

/** A copy {@link copyLocatedGPUTensor} made: the new Tensor and its buffer. */
export interface LocatedCopy {
  readonly tensor: Tensor;
  readonly buffer: GPUBuffer;
}

/**
 * {@link copyGPUTensor} of a tensor the caller already located, giving back the copy's buffer with it: one lookup
 * per hand-off. The source is held from the call on (before any await); `pending` is its buffer's register check
 * when still running ({@link pendingBufferCheck}), waited for while held (null: passed, as after
 * {@link locateCheckedGPUTensor}).
 */
export async function copyLocatedGPUTensor(
  tensor: Tensor,
  src: GPUTensorLocation,
  options: CopyGPUTensorOptions & { ctx: WebDLPackContext },
  pending: Promise<WebDLPackError | null> | null = null,
): Promise<LocatedCopy> {
  const { ctx } = options;
  const kind = options.kind ?? "copy";
  refusePackedSubByte(tensor);
  // Everything read from the tensor is read before the first await: its owner may dispose it meanwhile.
  const { shape, strides } = tensor;
  const nbytes = outputBytes(kind, elementCount(shape), src.itemsize);
  const dtype =
    options.dtype !== undefined
      ? toDType(options.dtype, "options.dtype")
      : kind === "copy"
        ? tensor.dtype
        : parseDType(kind === "bool8-to-u32" ? "int32" : "bool");
  // The source's bytes must outlive the awaits below even if its owner disposes it meanwhile: hold them until the
  // copy is submitted (the queue runs it before any later reuse of the buffer).
  const releaseSource = tensor.retain();
  let dst: GPUBuffer | undefined;
  try {
    const refusedBuffer = pending === null ? null : await pending; // the foreign-device check of a new buffer
    if (refusedBuffer !== null) throw refusedBuffer;
    const alloc = {
      deviceId: src.deviceId,
      ...(options.usage === undefined ? {} : { usage: options.usage }),
      label: `webdlpack.adapters.copy(${kind})`,
    };
    const copied = await produceCopiedGPUTensor(
      ctx,
      { nbytes, alloc, dtype, shape, owner: ADAPTERS_OWNER },
      async (pointer) => {
        const out = ctx.gpuPointerToBuffer(pointer);
        dst = out;
        src.device.pushErrorScope("validation");
        let refused: Promise<GPUError | null>;
        try {
          const plain =
            kind === "copy" && src.contiguous && tryPlainCopy(src.device, src.buffer, src.byteOffset, out, nbytes);
          if (!plain) {
            runGpuCopy(
              src.device,
              kind,
              { buffer: src.buffer, shape, strides, byteOffset: src.byteOffset, itemsize: src.itemsize },
              out,
            );
          }
        } finally {
          refused = src.device.popErrorScope().catch(() => null);
        }
        const error = await refused;
        if (error !== null) throw await bufferUseError("copyGPUTensor", src.device, src.buffer, error.message);
      },
    );
    return { tensor: copied, buffer: dst! };
  } finally {
    releaseSource();
  }
}

/**
 * Read a tensor's elements into a new TypedArray (C-contiguous, the type
 * `typedArrayFor(dtype)` names). CPU tensors are copied with `toArray()`; WebGPU
 * tensors are made contiguous on the GPU if needed, then read straight into the
 * new array with `ctx.readbackInto` — the one GPU → CPU transfer (context/transfers/).
 */
export async function readTensor(tensor: Tensor, ctx: WebDLPackContext = getContext()): Promise<TypedArray> {
  if (tensor.device.deviceType !== DeviceType.kDLWebGPU) return tensor.toArray();
  refusePackedSubByte(tensor);
  const loc = await locateCheckedGPUTensor(tensor, ctx);
  const info = typedArrayFor(tensor.dtype, "tensor.dtype");
  const count = elementCount(tensor.shape);
  const nbytes = count * loc.itemsize;
  const out = new info.ctor(count * info.perElement);
  if (nbytes === 0) return out;
  let source = tensor;
  let temp: Tensor | null = null;
  // The readback copies the 4-aligned span around the bytes: it must lie in the buffer.
  const alignedEnd = Math.ceil((loc.byteOffset + nbytes) / 4) * 4;
  if (!loc.contiguous || (loc.buffer.usage & GPUBufferUsage.COPY_SRC) === 0 || alignedEnd > loc.buffer.size) {
    temp = (await copyLocatedGPUTensor(tensor, loc, { ctx })).tensor;
    source = temp;
  }
  try {
    await ctx.readbackInto(source.data, new Uint8Array(out.buffer, out.byteOffset, nbytes), {
      byteOffset: source.byteOffset,
    });
    return out;
  } finally {
    temp?.dispose();
  }
}
