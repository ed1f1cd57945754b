/**
 * The parts of LiteRT.js (`@litertjs/core`) the LiteRT adapter uses, typed
 * structurally so webdlpack does not depend on the package. Checked against
 * @litertjs/core 2.5.3: its module is accepted as it is, and its `Environment`
 * and `Tensor` types are type parameters, so the adapter gives them back.
 */

/** The element types of LiteRT.js tensors (`DType` of @litertjs/core). */
export type LiteRtDType = "float32" | "int32" | "uint8";

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

/**
 * The LiteRT.js `Tensor` class: its GPUBuffer constructor (`E`: its `Environment`, `T`: its `Tensor`).
 * The class also takes CPU data ({@link LiteRtCpuTensorConstructor}).
 */
export interface LiteRtTensorClass<
  E extends LiteRtEnvironmentLike = LiteRtEnvironmentLike,
  T extends LiteRtTensorLike = LiteRtTensorLike,
> {
  new (gpuBuffer: GPUBuffer, shape: number[], dtype: LiteRtDType, environment?: E, onDelete?: () => void): T;
}

/** LiteRT.js's `Tensor` constructor from CPU data (declared apart: its TypedArray type differs between TypeScript versions). */
export type LiteRtCpuTensorConstructor<E extends LiteRtEnvironmentLike, T extends LiteRtTensorLike> = new (
  data: Float32Array | Int32Array | Uint8Array,
  shape?: number[],
  environment?: E,
  onDelete?: () => void,
) => T;

/** The global LiteRT instance (`getGlobalLiteRt()`), once `loadLiteRt` resolved. */
export interface LiteRtInstanceLike<E extends LiteRtEnvironmentLike = LiteRtEnvironmentLike> {
  getDefaultEnvironment(): E;
  setDefaultEnvironment(environment: E): void;
}

/** The `@litertjs/core` module (`E`: its `Environment`, `T`: its `Tensor`). */
export interface LiteRtLike<
  E extends LiteRtEnvironmentLike = LiteRtEnvironmentLike,
  T extends LiteRtTensorLike = LiteRtTensorLike,
> {
  readonly Tensor: LiteRtTensorClass<E, T>;
  readonly Environment: { create(options: { webGpuDevice: GPUDevice | null }): Promise<E> };
  getGlobalLiteRt(): LiteRtInstanceLike<E>;
}
