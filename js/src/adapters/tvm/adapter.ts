/**
 * TVM's web runtime (tvmjs, `@mlc-ai/web-runtime`) ↔ webdlpack, on the context's shared GPUDevice.
 *
 * Conditions (checked with @mlc-ai/web-runtime 0.27.0-dev0 and models built by scripts/tvm/build.sh,
 * headless Chromium, WebGPU on SwiftShader):
 * - `tvm.initWebGPU(device)` takes any GPUDevice: {@link bindTvmToContext} gives it tvmjs's guard of
 *   the shared device (tvmjs's `dispose()` destroys its device: the guard drops only tvmjs's hold).
 * - In: a tvmjs WebGPU tensor's data is an index into tvmjs's buffer table; the adapter puts the
 *   webdlpack tensor's very GPUBuffer in a slot (tvm/table.ts). The slot is cleared, and the source
 *   released, once, when tvmjs drops the tensor. CPU tensors are copied into tvmjs's own wasm memory
 *   (not the memory webdlpack allocates CPU tensors in): counted and stated ({@link handoffInfo}).
 * - Out: tvmjs records dispatches in an encoder it submits later; another queue user reading an output
 *   before `webGPUContext.flushCommands()` reads stale data. {@link tensorFromTvm} flushes.
 *   The VM's outputs come from a pool and may be larger than their tensor: shape and dtype come
 *   from the tvmjs tensor, and it is disposed (its buffer back to the pool) only when every webdlpack
 *   holder released it.
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import { DeviceType } from "../../dlpack/constants.js";
import { checkedContiguousExtent } from "../../dlpack/desc.js";
import { parseDType, type DType } from "../../dlpack/dtype.js";
import { getContext, unwrapDevice, type WebDLPackContext } from "../../context/index.js";
import type { Tensor } from "../../tensor/index.js";
import { GPUOutputAdoptions } from "../adopt.js";
import { watchTvmMemory } from "../memory.js";
import { dtypeName } from "../dtypes.js";
import { countHandoffCopy, handOffGPUTensor, handoffCopyStats, recordHandoff } from "../handoff.js";
import { inPlaceCopyReason } from "../in-place.js";
import { BufferLease } from "../leases.js";
import { produceGPUTensor } from "../producer.js";
import { TvmBufferTable, type LentBytes } from "./table.js";
import type { TvmInstanceLike, TvmInternals, TvmTensorLike, TvmWebGPUContextLike } from "./types.js";
import { tensorToTypedArray } from "../typed-array.js";

/** Owner name of tvmjs: its device guard, its adopted buffers and tensors in the ledger. */
export const TVM_OWNER = "tvmjs";

/** Element types WGSL computes with (TVM's WebGPU target has no 64-bit or bool storage). */
export const TVM_WEBGPU_DTYPES: ReadonlySet<string> = new Set(["float32", "float16", "int32", "uint32"]);

const adoptions = new GPUOutputAdoptions<TvmTensorLike>(TVM_OWNER);

/** The adapter's name for tvmjs in messages and copy counts. */
const TVMJS = "tvmjs";

/**
 * How many hand-offs into tvmjs were copies (CPU inputs into tvmjs's memory, GPU inputs it could not lend in place
 * or that are READ_ONLY), and their bytes, since the page loaded.
 */
export function tvmCopyStats(): { readonly count: number; readonly bytes: number } {
  return handoffCopyStats(TVMJS);
}

/** tvmjs bound to one webdlpack device: tensor conversions there (`T`: the instance's Tensor type). */
export interface TvmBinding<T extends TvmTensorLike = TvmTensorLike> {
  readonly tvm: TvmInstanceLike<T>;
  readonly ctx: WebDLPackContext;
  /** webdlpack device id. */
  readonly deviceId: number;
  /** tvmjs's guard of the shared GPUDevice (`unwrapDevice` gives the real one). */
  readonly device: GPUDevice;
  /** {@link tensorToTvm} with this binding's instance and context. */
  tensorToTvm(tensor: Tensor, options?: Omit<TensorToTvmOptions, "ctx">): Promise<T>;
  /** {@link tensorFromTvm} on this binding's device. */
  tensorFromTvm(tvmTensor: TvmTensorLike): Tensor;
  /** webdlpack buffers tvmjs's table holds now (each releases its source when tvmjs drops it). */
  lentBuffers(): number;
}

function requireTvm(tvm: TvmInstanceLike<TvmTensorLike>): void {
  if (
    tvm === null ||
    typeof tvm !== "object" ||
    typeof tvm.initWebGPU !== "function" ||
    typeof tvm.empty !== "function" ||
    typeof tvm.withNewScope !== "function" ||
    typeof (tvm as TvmInternals).lib !== "object"
  ) {
    throw new WebDLPackError("INVALID_ARGUMENT", "this does not look like a tvmjs Instance", {
      field: "tvm",
      value: describeValue(tvm),
      expected: "the Instance of tvmjs.instantiate(…) (@mlc-ai/web-runtime)",
    });
  }
}

/** tvmjs's WebGPU context, checked to run on the context's device `deviceId`. */
function webGPUContextOn(
  gpu: TvmWebGPUContextLike | undefined,
  ctx: WebDLPackContext,
  deviceId: number,
  field: string,
): TvmWebGPUContextLike {
  const device = ctx.getWebGPUDevice(deviceId);
  if (gpu === undefined || gpu === null || unwrapDevice(gpu.device) !== unwrapDevice(device)) {
    throw new WebDLPackError(
      "BAD_DEVICE",
      `this tvmjs instance does not run on webdlpack's webgpu:${deviceId}; its buffers cannot be shared. ` +
        "Bind it with bindTvmToContext() before running anything on the GPU",
      {
        field,
        value: gpu === undefined || gpu === null ? "no WebGPU context" : gpu.device?.label || "a different GPUDevice",
        expected: `the GPUDevice of webgpu:${deviceId}`,
      },
    );
  }
  return gpu;
}

/**
 * Run tvmjs on the context's device `deviceId` (call `ctx.setup()` first): `tvm.initWebGPU` with
 * tvmjs's guard of the shared device (its buffers count as "tvmjs" in `ctx.memory()`), and a memory-pressure
 * handler that frees the VM's pooled buffers (`vm.builtin.memory_manager.clear`). Throws BAD_DEVICE when the instance already runs WebGPU on
 * another device (tvmjs makes its WebGPU state once per instance: bind before creating the VM).
 */
export function bindTvmToContext<T extends TvmTensorLike>(
  tvm: TvmInstanceLike<T>,
  ctx: WebDLPackContext = getContext(),
  options: { deviceId?: number } = {},
): TvmBinding<T> {
  requireTvm(tvm);
  const deviceId = options.deviceId ?? 0;
  const device = ctx.getWebGPUDevice(deviceId, { owner: TVM_OWNER });
  const lib = (tvm as TvmInternals).lib ?? {};
  if (lib.webGPUContext === undefined) tvm.initWebGPU(device);
  const table = TvmBufferTable.of(webGPUContextOn(lib.webGPUContext, ctx, deviceId, "tvm.lib.webGPUContext"));
  // Under pressure tvmjs frees its VM's pooled buffers, until its dispose().
  watchTvmMemory(ctx, tvm, TVM_OWNER, () => table.disposed);
  return {
    tvm,
    ctx,
    deviceId,
    device,
    tensorToTvm: (tensor, opts) => tensorToTvm(tvm, tensor, { ...opts, ctx }),
    tensorFromTvm: (tvmTensor) => tensorFromTvm(tvmTensor, { ctx, deviceId }),
    lentBuffers: () => table.lentCount,
  };
}

/** Options of {@link tensorToTvm}. */
export interface TensorToTvmOptions {
  ctx?: WebDLPackContext;
  /**
   * "auto" (default): lend the buffer when tvmjs can read it as it is (dense, byte 0, STORAGE), else
   * copy on the GPU. "never": lend or throw COPY_REQUIRED (CPU tensors always need a copy). "always": copy.
   */
  copy?: "auto" | "never" | "always";
  /**
   * Whether the function the tensor is passed to may write it (default true: tvmjs functions may update an input
   * in place, `R.call_tir_inplace`, as KV caches do). A READ_ONLY tensor is then copied (or refused with
   * copy: "never"); pass false only when every function that gets the tvmjs tensor reads it.
   */
  mayWrite?: boolean;
}

function tvmDType(tensor: Tensor, gpu: boolean): string {
  const name = dtypeName(tensor.dtype);
  if (gpu && !TVM_WEBGPU_DTYPES.has(name)) {
    throw new WebDLPackError("UNSUPPORTED", `tvmjs's WebGPU kernels have no ${name} (webdlpack ${name} → WGSL ?)`, {
      field: "tensor.dtype",
      value: name,
      expected: [...TVM_WEBGPU_DTYPES].join(", "),
    });
  }
  return name;
}

/** A tvmjs tensor made outside any scope of the caller (the caller disposes it). */
function detachedEmpty<T extends TvmTensorLike>(
  tvm: TvmInstanceLike<T>,
  shape: readonly number[],
  dtype: string,
  gpu: boolean,
): T {
  return tvm.withNewScope(() =>
    tvm.detachFromCurrentScope(tvm.empty([...shape], dtype, gpu ? tvm.webgpu() : tvm.cpu())),
  );
}

/**
 * A webdlpack tensor as a tvmjs tensor (pass it to a VM function; dispose it when done).
 *
 * - WebGPU tensor → a tvmjs WebGPU tensor whose buffer-table slot holds the very same GPUBuffer, when
 *   it is dense at byte 0 with STORAGE usage; the source stays alive until tvmjs drops the tensor (the
 *   caller's dispose and any reference the VM kept). Otherwise a GPU copy ({@link handoffInfo} says why); a
 *   READ_ONLY tensor is copied too (tvmjs functions may write their inputs) unless `mayWrite: false`.
 * - CPU tensor → a tvmjs CPU tensor in tvmjs's own wasm memory: a copy (IS_COPIED; "never" throws
 *   COPY_REQUIRED). Both copies count in {@link tvmCopyStats}.
 */
export async function tensorToTvm<T extends TvmTensorLike>(
  tvm: TvmInstanceLike<T>,
  tensor: Tensor,
  options: TensorToTvmOptions = {},
): Promise<T> {
  requireTvm(tvm);
  const ctx = options.ctx ?? getContext();
  const copy = options.copy ?? "auto";
  if (tensor.device.deviceType === DeviceType.kDLCPU) {
    const dtype = tvmDType(tensor, false);
    if (copy === "never") {
      throw new WebDLPackError("COPY_REQUIRED", "tvmjs computes on CPU data in its own wasm memory only", {
        field: "tensor.device",
        value: "cpu",
        expected: "a WebGPU tensor, or copy: 'auto' | 'always'",
      });
    }
    const data = tensorToTypedArray(tensor, { copy: "auto" });
    const out = detachedEmpty(tvm, tensor.shape, dtype, false);
    out.copyFromRawBytes(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    countHandoffCopy(TVMJS, data.byteLength);
    recordHandoff(out, "tvmjs's wasm memory is its own: CPU data is copied into it");
    return out;
  }
  const dtype = tvmDType(tensor, true);
  const lib = (tvm as TvmInternals).lib ?? {};
  const gpu = webGPUContextOn(lib.webGPUContext, ctx, tensor.device.deviceId, "tvm.lib.webGPUContext");
  const table = TvmBufferTable.of(gpu);
  return handOffGPUTensor(tensor, ctx, {
    name: TVMJS,
    copy,
    mayWrite: options.mayWrite ?? true,
    expected: "a contiguous tensor at byte 0 with STORAGE usage",
    inPlace: (loc) => inPlaceCopyReason(tensor, loc, "tvmjs's buffer table"),
    make: ({ buffer, release, copied }) =>
      table.lend(buffer, lentBytes(copied ?? tensor, release), () => detachedEmpty(tvm, tensor.shape, dtype, true)),
  });
}

/** The bytes of `lent` (the source, or the copy made for tvmjs) as a slot of tvmjs's table holds them. */
function lentBytes(lent: Tensor, release: () => void): LentBytes {
  const { data: pointer, nbytes, shape, dtype } = lent;
  return {
    pointer,
    deviceId: lent.device.deviceId,
    nbytes,
    readOnly: lent.flags.readOnly,
    lease: new BufferLease(() => `webdlpack tensor ${shape.join("x")} ${dtypeName(dtype)} lent to tvmjs`, release),
  };
}

/** Options of {@link tensorFromTvm}. */
export interface TensorFromTvmOptions {
  ctx?: WebDLPackContext;
  /** webdlpack device id of the device tvmjs runs on (default 0). */
  deviceId?: number;
}

function checkTvmTensor(t: TvmTensorLike): void {
  if (
    t === null ||
    typeof t !== "object" ||
    typeof t.getDataPtr !== "function" ||
    typeof t.getHandle !== "function" ||
    typeof t.dtype !== "string"
  ) {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected a tvmjs Tensor", {
      field: "tvmTensor",
      value: describeValue(t),
      expected: "a Tensor of @mlc-ai/web-runtime",
    });
  }
  if (t.getHandle(false) === 0) {
    throw new WebDLPackError("DISPOSED", "this tvmjs tensor was disposed", {
      field: "tvmTensor.getHandle()",
      value: 0,
      expected: "a live tensor",
    });
  }
  if (t.device?.deviceType !== DeviceType.kDLWebGPU) {
    throw new WebDLPackError("UNSUPPORTED", "a tvmjs tensor outside WebGPU has no GPUBuffer to share", {
      field: "tvmTensor.device.deviceType",
      value: t.device?.deviceType,
      expected: `${DeviceType.kDLWebGPU} (WebGPU; read a CPU tensor with tvmTensor.toArray(), a copy)`,
    });
  }
  const offset = Number((t as TvmInternals).byteOffset ?? 0);
  if (offset !== 0) {
    throw new WebDLPackError("UNSUPPORTED", "a tvmjs tensor view at a byte offset cannot be shared", {
      field: "tvmTensor.byteOffset",
      value: offset,
      expected: "0",
    });
  }
}

/**
 * A tvmjs WebGPU tensor (e.g. a VM output) as a webdlpack Tensor over the very same GPUBuffer, with
 * tvmjs's shape and dtype. tvmjs's recorded work is submitted first (`flushCommands`), so any queue
 * user after this sees the results. The tvmjs tensor now belongs to webdlpack: it is taken out of
 * tvmjs's current scope (when it is there) and disposed once this Tensor, every other Tensor made
 * from it and every zero-copy consumer of them have released it. Do not dispose it yourself.
 * `tvm.dispose()` before that leaves its buffer alive; the last holder then destroys it (tvm/table.ts).
 *
 * An in-place function's output (its data is a buffer webdlpack lent with {@link tensorToTvm}) becomes a Tensor over
 * the lent tensor's own pointer, sharing the lease of the lent bytes (they live until the slot, the source and every
 * such output let go), with the lent tensor's flags and tvmjs's shape and dtype.
 *
 * Throws BAD_DEVICE when its instance is not on the context's device `deviceId`, UNSUPPORTED for CPU
 * tensors and views at an offset, BAD_SHAPE / BAD_NDIM for a bad shape.
 */
export function tensorFromTvm(tvmTensor: TvmTensorLike, options: TensorFromTvmOptions = {}): Tensor {
  checkTvmTensor(tvmTensor);
  const ctx = options.ctx ?? getContext();
  const deviceId = options.deviceId ?? 0;
  const internals = tvmTensor as TvmInternals;
  const gpu = webGPUContextOn(internals.lib?.webGPUContext, ctx, deviceId, "tvmTensor.lib.webGPUContext");
  gpu.flushCommands();
  const dtype = parseDType(tvmTensor.dtype, "tvmTensor.dtype");
  const shape = Array.from(tvmTensor.shape, Number);
  const table = TvmBufferTable.of(gpu);
  const slot = tvmTensor.getDataPtr();
  const lent = table.lentAt(slot);
  if (lent !== undefined) return tensorOverLent(tvmTensor, lent, dtype, shape, deviceId);
  const adopted = adoptions.isAdopted(tvmTensor);
  // The last holder's release: the tvmjs tensor's dispose; once adopted, through the table (tvmjs may be gone by then).
  let release = (): void => tvmTensor.dispose();
  const out = adoptions.tensor(
    tvmTensor,
    {
      buffer: () => gpu.gpuBufferFromPtr(tvmTensor.getDataPtr()),
      dtype,
      shape,
      get label() {
        return `tvmjs tensor ${shape.join("x")} ${tvmTensor.dtype}`;
      },
      field: "webGPUContext.gpuBufferFromPtr(tvmTensor.getDataPtr())",
      shapeField: "tvmTensor.shape",
      giveBack: () => release(),
    },
    ctx,
    deviceId,
  );
  if (!adopted) {
    release = table.adopt(slot, release);
    detachFromScope(internals);
  }
  return out;
}

/**
 * A tvmjs tensor whose data is a buffer webdlpack lent it (an in-place function's output is its input): a Tensor
 * over the lent pointer, sharing the lease of the lent bytes; the tvmjs tensor is disposed when it is released.
 */
function tensorOverLent(
  tvmTensor: TvmTensorLike,
  lent: LentBytes,
  dtype: DType,
  shape: number[],
  deviceId: number,
): Tensor {
  if (lent.deviceId !== deviceId) {
    throw new WebDLPackError("BAD_DEVICE", "this tvmjs tensor's buffer was lent from another device id", {
      field: "options.deviceId",
      value: deviceId,
      expected: `${lent.deviceId}`,
    });
  }
  const extent = checkedContiguousExtent(dtype, shape, "tvmTensor.shape");
  if (extent.nbytes > lent.nbytes) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "this tvmjs tensor is larger than the webdlpack tensor lent for it", {
      field: "tvmTensor.shape",
      value: shape.join("x"),
      expected: `at most ${lent.nbytes} bytes (the lent tensor's)`,
    });
  }
  const hold = lent.lease.hold();
  detachFromScope(tvmTensor as TvmInternals);
  return produceGPUTensor({
    pointer: lent.pointer,
    deviceId,
    dtype,
    shape,
    readOnly: lent.readOnly,
    release: () => {
      tvmTensor.dispose();
      hold();
    },
    owner: TVM_OWNER,
  });
}

/** Take an adopted tvmjs tensor out of tvmjs's current scope, so the scope's end does not dispose it. */
function detachFromScope(t: TvmInternals): void {
  const scopes = t.ctx?.autoDisposeScope;
  const current = scopes?.[scopes.length - 1];
  if (current === undefined) return;
  const at = current.indexOf(t);
  if (at >= 0) current[at] = undefined;
}
