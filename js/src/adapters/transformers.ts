/**
 * Transformers.js (`@huggingface/transformers`) ↔ webdlpack: pipelines run on
 * the context's shared GPUDevice and their outputs become webdlpack tensors
 * over the same GPUBuffer.
 *
 * Transformers.js runs ONNX Runtime Web underneath — its own copy (4.3.1
 * depends on onnxruntime-web 1.31.0-dev and imports `onnxruntime-web/webgpu`,
 * the native WebGPU EP) — and passes `session_options` through to
 * `InferenceSession.create`, only defaulting `executionProviders`. So
 * {@link transformersOptions} gives it the ORT session options of
 * {@link ortSessionOptions}: the `webgpu` EP with the shared device. Outputs
 * come back on the CPU, so a pipeline's own post-processing (`pooling`,
 * `normalize`, `tolist()`) works as written; outputs that stay on the GPU are
 * an opt-in (`session_options.preferredOutputLocation: "gpu-buffer"`). Its
 * `Tensor` wraps an ORT tensor (`ort_tensor`), which {@link tensorFromOrt}
 * adopts as for ORT itself.
 *
 * Decoder models (with a KV cache): Transformers.js replaces
 * `preferredOutputLocation` with `{present.*: "gpu-buffer"}` — the logits come
 * back on the CPU, and the KV-cache tensors stay on the GPU but belong to
 * Transformers.js (it disposes them on the next step and after `generate`).
 * See docs/integration.md.
 *
 * The adapter meets Transformers.js itself only through its `env` (options.env of
 * {@link transformersOptions}): a Transformers.js older than the floor (compat/versions.ts)
 * is UNSUPPORTED there, naming its `env.version`. Without `env` the version is not checked.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { getContext, type WebDLPackContext } from "../context/index.js";
import type { Tensor } from "../tensor/index.js";
import type { OrtSessionOptions, OrtTensorLike } from "./framework-types.js";
import { checkFrameworkVersion } from "./compat/versions.js";
import { ortSessionOptions, tensorFromOrt, type OrtAdapterOptions } from "./ort.js";
import { TRANSFORMERS_OWNER } from "./producer.js";

/** A Transformers.js `Tensor` (the members the adapter reads). */
export interface TransformersTensorLike {
  /** The ONNX Runtime tensor it wraps. */
  readonly ort_tensor: OrtTensorLike;
  dispose(): void;
}

/** Options for `pipeline(task, model, options)` / `from_pretrained(model, options)` (only what the adapter sets). */
export interface TransformersModelOptions {
  device?: string;
  session_options?: OrtSessionOptions;
  [key: string]: unknown;
}

/** What {@link transformersOptions} returns for `extra` of type `X`: Transformers.js's own options type accepts it. */
export type TransformersOptionsFor<X> = Omit<X, "device" | "session_options"> & {
  device: "webgpu";
  session_options: OrtSessionOptions;
};

/** Options of {@link transformersOptions}. */
export interface TransformersAdapterOptions {
  /** webdlpack device id (default 0). */
  deviceId?: number;
  /**
   * Transformers.js's `env` (`import { env } from "@huggingface/transformers"`): its `version` is checked
   * against the supported range (UNSUPPORTED if older). Not given, or without a version: not checked.
   */
  env?: { readonly version?: unknown };
}

/**
 * Options for Transformers.js `pipeline()` / `from_pretrained()` that run the
 * model on the context's device `deviceId` (default 0): `device: "webgpu"` and
 * `session_options` from {@link ortSessionOptions} (merged with `extra.session_options`).
 * Any other `device` in `extra` is a BAD_DEVICE error; a Transformers.js whose
 * `options.env.version` is older than the floor, UNSUPPORTED.
 *
 * Outputs come back on the CPU (`preferredOutputLocation: "cpu"`), as Transformers.js's
 * post-processing needs: `await extractor(text, {pooling: "mean", normalize: true})` and
 * `out.tolist()` work unchanged. To keep outputs on the GPU and hand them on with
 * {@link tensorFromTransformers}, opt in with
 * `extra.session_options.preferredOutputLocation: "gpu-buffer"` (then pool yourself, e.g. in TF.js).
 */
export function transformersOptions<X extends TransformersModelOptions = Record<never, never>>(
  ctx: WebDLPackContext = getContext(),
  extra: X = {} as X,
  options: TransformersAdapterOptions = {},
): TransformersOptionsFor<X> {
  checkFrameworkVersion("@huggingface/transformers", options.env?.version, "env.version");
  if (extra.device !== undefined && extra.device !== "webgpu") {
    throw new WebDLPackError(
      "BAD_DEVICE",
      `Transformers.js device "${extra.device}" does not run on webdlpack's shared WebGPU device`,
      {
        field: "extra.device",
        value: extra.device,
        expected: '"webgpu" (or none)',
      },
    );
  }
  const session = extra.session_options ?? {};
  const located = { ...session, preferredOutputLocation: session.preferredOutputLocation ?? "cpu" };
  return {
    ...extra,
    device: "webgpu",
    session_options: ortSessionOptions(ctx, located, { deviceId: options.deviceId, owner: TRANSFORMERS_OWNER }),
  };
}

/**
 * A Transformers.js tensor (e.g. a `feature-extraction` output with
 * `pooling: "none"` from a pipeline made with GPU outputs, see {@link transformersOptions})
 * as a webdlpack Tensor: on "gpu-buffer", a WebGPU Tensor over
 * the very same GPUBuffer, adopted like an ORT output (see {@link tensorFromOrt}:
 * the ORT tensor is disposed when the last holder releases it; do not call
 * `dispose()` on the Transformers.js tensor yourself); on "cpu", a CPU Tensor
 * over its data.
 */
export function tensorFromTransformers(tensor: TransformersTensorLike, options: OrtAdapterOptions = {}): Tensor {
  const ort = (tensor as { ort_tensor?: unknown } | null)?.ort_tensor;
  if (ort === null || typeof ort !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected a Transformers.js Tensor (with an ort_tensor)", {
      field: "tensor.ort_tensor",
      value: describeValue(ort),
      expected: "an ONNX Runtime tensor",
    });
  }
  return tensorFromOrt(ort as OrtTensorLike, options);
}
