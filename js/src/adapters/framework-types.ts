/**
 * The parts of ONNX Runtime Web and TensorFlow.js the adapters use, typed
 * structurally, so webdlpack has no dependency on either package's types.
 * Checked against onnxruntime-web 1.30.0 and @tensorflow/tfjs-core /
 * tfjs-backend-webgpu 4.22.0.
 */

// ---- ONNX Runtime Web -------------------------------------------------------

/** Where an ORT tensor's data is (`ort.Tensor.location`). */
export type OrtDataLocation = "none" | "cpu" | "cpu-pinned" | "texture" | "gpu-buffer" | "ml-tensor";

/** An `ort.Tensor` (the members the adapters read). */
export interface OrtTensorLike {
  /** Element type name, e.g. "float32". */
  readonly type: string;
  /** Extents. */
  readonly dims: readonly number[];
  /** Where the data is. */
  readonly location: OrtDataLocation;
  /** CPU data (location "cpu" / "cpu-pinned"). */
  readonly data?: unknown;
  /** GPU data (location "gpu-buffer"). */
  readonly gpuBuffer?: GPUBuffer;
  /** Release the data; a GPU output's buffer goes back to ORT's pool. */
  dispose(): void;
}

/** Options of `ort.Tensor.fromGpuBuffer`. */
export interface OrtFromGpuBufferOptions {
  dataType: string;
  dims: readonly number[];
  /** Called by `tensor.dispose()`. */
  dispose?: () => void;
}

/** The `ort.Tensor` class. */
export interface OrtTensorClass {
  new (type: string, data: unknown, dims?: readonly number[]): OrtTensorLike;
  fromGpuBuffer(buffer: GPUBuffer, options: OrtFromGpuBufferOptions): OrtTensorLike;
}

/** The `ort` namespace (the WebGPU build: `onnxruntime-web/webgpu`). */
export interface OrtLike {
  readonly Tensor: OrtTensorClass;
  readonly env: { webgpu: { device?: GPUDevice | undefined; [key: string]: unknown }; [key: string]: unknown };
}

/** One entry of `executionProviders` in ORT session options. */
export type OrtExecutionProvider = string | { name: string; device?: unknown; [key: string]: unknown };

/** ORT session options (only the members the adapters touch are typed). */
export interface OrtSessionOptions {
  executionProviders?: readonly OrtExecutionProvider[];
  preferredOutputLocation?: OrtDataLocation | Record<string, OrtDataLocation>;
  [key: string]: unknown;
}

// ---- TensorFlow.js -----------------------------------------------------------

/** A TF.js `DataId` (an opaque object key). */
export type TfjsDataId = object;

/** What `tf.Tensor.dataToGPU()` returns on the WebGPU backend. */
export interface TfjsGPUData {
  buffer?: GPUBuffer;
  /** The tensor that owns `buffer`; dispose it when done. */
  tensorRef: TfjsTensorLike;
}

/** A `tf.Tensor` (the members the adapters use). */
export interface TfjsTensorLike {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly size: number;
  readonly dataId: TfjsDataId;
  readonly isDisposed: boolean;
  data(): Promise<ArrayLike<number> | Uint8Array[]>;
  dataToGPU(options?: object): TfjsGPUData;
  dispose(): void;
}

/** The per-tensor record of the WebGPU backend (`backend.tensorMap.get(dataId)`). */
export interface TfjsWebGPUTensorData {
  dtype: string;
  shape: readonly number[];
  values: unknown;
  refCount: number;
  resource?: GPUBuffer | GPUTexture | null;
  external?: boolean;
}

/**
 * `WebGPUBackend` from @tensorflow/tfjs-backend-webgpu. Besides `device`, the
 * members are internal to TF.js; the adapters test for each before use and fall
 * back to TF.js's public copy (`dataToGPU`) when one is missing.
 */
export interface TfjsWebGPUBackendLike {
  readonly device?: GPUDevice;
  tensorMap?: { get(dataId: TfjsDataId): TfjsWebGPUTensorData | undefined; has(dataId: TfjsDataId): boolean };
  commandEncoder?: GPUCommandEncoder | null;
  endComputePassEncoder?: () => void;
  submitQueue?: () => void;
  releaseResource?: (dataId: TfjsDataId) => void;
  dispose?: () => void;
}

/** The `WebGPUBackend` class. */
export type TfjsWebGPUBackendClass = new (
  device: GPUDevice,
  adapterInfo?: GPUAdapterInfo | object,
) => TfjsWebGPUBackendLike;

/** The `tf` namespace (@tensorflow/tfjs-core). */
export interface TfjsLike {
  tensor(
    values: { buffer: GPUBuffer; zeroCopy?: boolean } | ArrayLike<number>,
    shape?: readonly number[],
    dtype?: string,
  ): TfjsTensorLike;
  clone(x: TfjsTensorLike): TfjsTensorLike;
  cast(x: TfjsTensorLike, dtype: string): TfjsTensorLike;
  keep<T extends TfjsTensorLike>(x: T): T;
  backend(): unknown;
  getBackend(): string;
  findBackend(name: string): unknown;
  findBackendFactory(name: string): unknown;
  registerBackend(name: string, factory: () => unknown, priority?: number): boolean;
  removeBackend(name: string): void;
  setBackend(name: string): Promise<boolean>;
  copyRegisteredKernels?(registeredBackendName: string, newBackendName: string): void;
}
