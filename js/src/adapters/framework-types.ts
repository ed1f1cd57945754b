/**
 * The parts of ONNX Runtime Web and TensorFlow.js the adapters use, typed
 * structurally, so webdlpack has no dependency on either package's types.
 * Checked against onnxruntime-web 1.30.0 and @tensorflow/tfjs-core /
 * tfjs-backend-webgpu 4.22.0: their own modules and classes are accepted as
 * they are (tests/types/frameworks/app.ts compiles a user's app with no cast),
 * and the namespaces are type parameters, so the adapters give back the
 * frameworks' own tensor types (a `tf.Tensor`, an `ort.Tensor`).
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

/** The element types `ort.Tensor.fromGpuBuffer` takes (onnxruntime-common `Tensor.GpuBufferDataTypes`). */
export type OrtGpuBufferDataType = "float32" | "float16" | "int32" | "int64" | "uint32" | "uint8" | "bool";

/** Options of `ort.Tensor.fromGpuBuffer`. */
export interface OrtFromGpuBufferOptions {
  dataType: OrtGpuBufferDataType;
  dims: readonly number[];
  /** Called by `tensor.dispose()`. */
  dispose?: () => void;
}

/** The `ort.Tensor` class; `T` is its tensor type (`ort.Tensor`). */
export interface OrtTensorClass<T extends OrtTensorLike = OrtTensorLike> {
  new (type: string, data: unknown, dims?: readonly number[]): T;
  fromGpuBuffer(buffer: GPUBuffer, options: OrtFromGpuBufferOptions): T;
}

/** The `ort` namespace (the WebGPU build: `onnxruntime-web/webgpu`); `T` is its tensor type (`ort.Tensor`). */
export interface OrtLike<T extends OrtTensorLike = OrtTensorLike> {
  readonly Tensor: OrtTensorClass<T>;
  /** `env.webgpu.device`: a GPUDevice once set (ORT 1.30 declares it as a Promise). */
  readonly env: { webgpu: { device?: unknown } };
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
  resource?: GPUBuffer | GPUTexture | GPUExternalTexture | null;
  external?: boolean;
}

/**
 * `WebGPUBackend` from @tensorflow/tfjs-backend-webgpu, as its public type declares it: `device`, and
 * members the adapters test for before use (falling back to TF.js's public copy, `dataToGPU`, when one is
 * missing).
 */
export interface TfjsWebGPUBackendLike {
  readonly device?: GPUDevice;
  tensorMap?: { get(dataId: TfjsDataId): TfjsWebGPUTensorData | undefined; has(dataId: TfjsDataId): boolean };
  endComputePassEncoder?: () => void;
  submitQueue?: () => void;
  dispose?: () => void;
}

/**
 * The members of a `WebGPUBackend` that TF.js declares private and the adapters still use, each tested
 * before use: whether work is recorded but not submitted, and the hook that tells when a buffer is let go.
 */
export interface TfjsWebGPUBackendInternals extends TfjsWebGPUBackendLike {
  commandEncoder?: GPUCommandEncoder | null;
  releaseResource?: (dataId: TfjsDataId) => void;
}

/** The `WebGPUBackend` class; `B` is its instance type. */
export type TfjsWebGPUBackendClass<B extends TfjsWebGPUBackendLike = TfjsWebGPUBackendLike> = new (
  device: GPUDevice,
  adapterInfo?: GPUAdapterInfo,
) => B;

/** TF.js element types (`tf.DataType`). */
export type TfjsDataType = "float32" | "int32" | "bool" | "complex64" | "string";

/** The backend registry of the `tf` namespace (all that registering a backend needs). */
export interface TfjsBackendsLike {
  backend(): unknown;
  getBackend(): string;
  findBackend(name: string): unknown;
  findBackendFactory(name: string): unknown;
  registerBackend(name: string, factory: () => unknown, priority?: number): boolean;
  removeBackend(name: string): void;
  setBackend(name: string): Promise<boolean>;
  copyRegisteredKernels?(registeredBackendName: string, newBackendName: string): void;
}

/** The `tf` namespace (@tensorflow/tfjs-core or @tensorflow/tfjs); `T` is its tensor type (`tf.Tensor`). */
export interface TfjsLike<T extends TfjsTensorLike = TfjsTensorLike> extends TfjsBackendsLike {
  tensor(
    values: { buffer: GPUBuffer; zeroCopy?: boolean } | ArrayLike<number>,
    shape?: number[],
    dtype?: TfjsDataType,
  ): T;
  // Generic like TF.js's own, so that `T` is inferred from `tensor` alone.
  clone<K extends T>(x: K): K;
  cast<K extends T>(x: K, dtype: TfjsDataType): K;
  keep<K extends T>(x: K): K;
}
