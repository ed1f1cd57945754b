/**
 * How the adapters hand a GPU buffer to webdlpack: as an owning WebGPU Tensor.
 *
 * An adopted buffer must stay alive until every holder lets go (ORT reuses a
 * disposed output's buffer). `Tensor.webgpu({..., onRelease})` gives exactly
 * that: the Tensor runs the adapter's release exactly once — on `dispose()`,
 * from its garbage-collection safety net, or when the last `toManaged` export
 * of it (e.g. to Python) or `retain()` hold is released — and carries the
 * READ_ONLY / IS_COPIED flags the adapter sets. Each such tensor is a "tensor"
 * entry of the context's lifetime ledger under its framework's name.
 */
import type { AllocOptions, WebDLPackContext } from "../context/index.js";
import type { DLTensorDesc } from "../dlpack/desc.js";
import type { TensorExtent } from "../dlpack/extent.js";
import { prevalidatedWebGPUInput } from "../tensor/create.js";
import { Tensor, type WebGPUTensorInput } from "../tensor/index.js";

/** Owner name of ONNX Runtime Web: its device guard, its adopted buffers and tensors in the ledger. */
export const ORT_OWNER = "onnxruntime-web";
/** Owner name of TensorFlow.js: its device guard, its adopted buffers and tensors in the ledger. */
export const TFJS_OWNER = "tfjs";
/** The owner of Transformers.js's device guard (its own copy of ORT), as `ctx.memory()` lists it. */
export const TRANSFORMERS_OWNER = "transformers.js";
/** Owner name of buffers and tensors the adapters make themselves (GPU copies, uploads). */
export const ADAPTERS_OWNER = "webdlpack.adapters";

/**
 * What {@link produceGPUTensor} needs: a `Tensor.webgpu` input whose release
 * is required (`release` instead of `onRelease`) and whose ledger owner is the framework's name.
 */
export interface ProducedGPUTensor extends Omit<WebGPUTensorInput, "onRelease" | "owner"> {
  /** Runs exactly once when the Tensor and every export of it are released. */
  release: () => void;
  /** The framework the tensor comes from (its owner in the context's lifetime ledger), e.g. "onnxruntime-web". */
  owner: string;
}

/** Adapter-made tensors whose release has not run yet. */
let live = 0;

/** Number of adapter-made tensors whose release has not run yet (for tests and leak checks). */
export function liveProducedTensors(): number {
  return live;
}

/**
 * Make a webdlpack WebGPU Tensor over `pointer` whose release runs once when the
 * Tensor and all its exports are done. If the description is invalid, `release`
 * runs before the error is thrown (ownership was passed in).
 */
export function produceGPUTensor(input: ProducedGPUTensor): Tensor {
  const { release, ...layout } = input;
  live++;
  const onRelease = (): void => {
    live--;
    release();
  };
  return Tensor.webgpu({ ...layout, pointer: input.pointer >>> 0, onRelease });
}

/**
 * {@link produceGPUTensor} for a description the adapter built and checked itself (desc.ts trustedWebGPUDesc: an adopted
 * framework output's): the Tensor is made without validating it again.
 */
export function producePrevalidatedGPUTensor(
  desc: DLTensorDesc,
  extent: TensorExtent,
  release: () => void,
  owner: string,
): Tensor {
  live++;
  return Tensor.webgpu(
    prevalidatedWebGPUInput(
      desc,
      extent,
      () => {
        live--;
        release();
      },
      owner,
    ),
  );
}

/** What {@link produceCopiedGPUTensor} makes: the new tensor's layout (contiguous from byte 0) and owner. */
export interface CopiedGPUTensor extends Pick<ProducedGPUTensor, "dtype" | "shape" | "owner"> {
  /** Bytes to allocate (at least 4, as WebGPU storage buffers need). */
  nbytes: number;
  /** Allocation options: device, usage, label (the owner defaults to {@link ADAPTERS_OWNER}). */
  alloc: AllocOptions & { deviceId: number };
}

/**
 * A new buffer of the context, filled by `fill(pointer)` (an upload or a GPU copy), as an owning IS_COPIED Tensor
 * that frees the buffer when released. If allocating or filling throws, the buffer is freed (when its device is
 * already gone there is nothing left to free) and the error is thrown: nothing is left behind.
 */
export async function produceCopiedGPUTensor(
  ctx: WebDLPackContext,
  made: CopiedGPUTensor,
  fill: (pointer: number) => unknown,
): Promise<Tensor> {
  const pointer = await ctx.allocWebGPUChecked(Math.max(made.nbytes, 4), { owner: ADAPTERS_OWNER, ...made.alloc });
  try {
    await fill(pointer);
  } catch (err) {
    try {
      ctx.freeWebGPU(pointer);
    } catch {
      // already released (its device was lost): nothing left to free
    }
    throw err;
  }
  return produceGPUTensor({
    pointer,
    deviceId: made.alloc.deviceId,
    dtype: made.dtype,
    shape: made.shape,
    isCopied: true,
    release: () => ctx.freeWebGPU(pointer),
    owner: made.owner,
  });
}
