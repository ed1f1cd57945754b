/**
 * The parts of LiteRT.js (`@litertjs/core`) the LiteRT adapter uses, typed
 * structurally so webdlpack does not depend on the package. Checked against
 * @litertjs/core 2.5.3.
 */

/** A LiteRT.js `Environment` (its WebGPU device and the wasm-side environment). */
export interface LiteRtEnvironmentLike {
  /** The device LiteRT runs WebGPU work on (null: CPU only). */
  readonly webGpuDevice: GPUDevice | null;
  /** Free the wasm-side environment. */
  delete(): void;
}

/** A LiteRT.js `Tensor` (the members the adapter reads). */
export interface LiteRtTensorLike {
  /** Element type and extents, e.g. `{dtype: "float32", layout: {dimensions: [4, 8]}}`. */
  readonly type: { readonly dtype: string; readonly layout: { readonly dimensions: ArrayLike<number> } };
  /** "webgpu" or "wasm" (throws for unknown buffer types). */
  readonly accelerator: string;
  /** True after `delete()`. */
  readonly deleted: boolean;
  /** The environment the tensor belongs to. */
  readonly environment: LiteRtEnvironmentLike;
  /** The GPUBuffer of a WebGPU tensor (may be larger than the data; throws for padded or strided tensors). */
  toGpuBuffer(): GPUBuffer;
  /** Free the tensor; a tensor LiteRT made (a model output) destroys its buffer. */
  delete(): void;
}

/** The LiteRT.js `Tensor` class: the GPUBuffer and TypedArray constructors. */
export interface LiteRtTensorClass {
  new (
    gpuBuffer: GPUBuffer,
    shape: number[],
    dtype: string,
    environment?: LiteRtEnvironmentLike,
    onDelete?: () => void,
  ): LiteRtTensorLike;
  new (
    data: ArrayBufferView,
    shape?: number[],
    environment?: LiteRtEnvironmentLike,
    onDelete?: () => void,
  ): LiteRtTensorLike;
}

/** The global LiteRT instance (`getGlobalLiteRt()`), once `loadLiteRt` resolved. */
export interface LiteRtInstanceLike {
  getDefaultEnvironment(): LiteRtEnvironmentLike;
  setDefaultEnvironment(environment: LiteRtEnvironmentLike): void;
}

/** The `@litertjs/core` module. */
export interface LiteRtLike {
  readonly Tensor: LiteRtTensorClass;
  readonly Environment: { create(options: { webGpuDevice: GPUDevice | null }): Promise<LiteRtEnvironmentLike> };
  getGlobalLiteRt(): LiteRtInstanceLike;
}
