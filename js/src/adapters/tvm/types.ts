/**
 * The parts of TVM's web runtime (tvmjs, npm `@mlc-ai/web-runtime`) the TVM adapter uses, typed
 * structurally so webdlpack does not depend on the package. Checked against @mlc-ai/web-runtime
 * 0.27.0-dev0 (TVM 0.27): tvmjs's own `Instance` and `Tensor` are assignable to these (its published
 * types only; what the adapter reads beyond them is {@link TvmInternals}, checked at run time).
 */

/** A tvmjs `DLDevice` (`tvm.webgpu()`, `tvm.cpu()`). */
export interface TvmDeviceLike {
  /** DLPack device type: 1 CPU, 15 WebGPU. */
  readonly deviceType: number;
  readonly deviceId: number;
}

/** A tvmjs `Tensor` (its data lives in a GPUBuffer of the buffer table, or in tvmjs's wasm memory). */
export interface TvmTensorLike {
  /** Element type, e.g. "float32". */
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly device: TvmDeviceLike;
  /** The object handle; `getHandle(false)` is 0 once disposed. */
  getHandle(requireNotNull?: boolean): number;
  /** DLTensor.data: for a WebGPU tensor, its index in the buffer table. Throws once disposed. */
  getDataPtr(): number;
  /** Copy raw bytes in (a CPU tensor: into tvmjs's wasm memory; a GPU tensor: an upload). */
  copyFromRawBytes(data: Uint8Array): unknown;
  /** Drop this reference (the buffer goes back to tvmjs when no reference is left). */
  dispose(): void;
}

/** A tvmjs `Instance` (from `tvmjs.instantiate`); `T` is its Tensor type (tvmjs's own `Tensor` for a real one). */
export interface TvmInstanceLike<T extends TvmTensorLike = TvmTensorLike> {
  /** Run WebGPU work on `device` (any GPUDevice: webdlpack's, or a guard of it). */
  initWebGPU(device: GPUDevice): void;
  webgpu(deviceId?: number): TvmDeviceLike;
  cpu(deviceId?: number): TvmDeviceLike;
  /** A new tensor (inside a scope: `withNewScope` / `beginScope`). */
  empty(shape: number[] | number, dtype?: string, dev?: TvmDeviceLike): T;
  withNewScope<T>(action: () => T): T;
  /** A global function of the runtime (inside a scope), e.g. "vm.builtin.memory_manager.clear". */
  getGlobalFunc(name: string): (...args: unknown[]) => unknown;
  /** Take `obj` out of the current scope (throws when it is not there). */
  detachFromCurrentScope<T extends { dispose(): void }>(obj: T): T;
}

/** tvmjs's WebGPU state (`webGPUContext` of its wasm library, made by `initWebGPU`). */
export interface TvmWebGPUContextLike {
  /** The device given to `initWebGPU`. */
  readonly device: GPUDevice;
  /** Submit the dispatches tvmjs recorded but has not submitted yet. */
  flushCommands(): void;
  /** index → GPUBuffer; a WebGPU DLTensor's `data` is the index. */
  gpuBufferFromPtr(ptr: number): GPUBuffer;
  /** Put a buffer in the table, returns its index. */
  attachToBufferTable(buffer: GPUBuffer): number;
  /** tvmjs's device API allocation (a new GPUBuffer in the table). */
  deviceAllocDataSpace(nbytes: number): number;
  /** tvmjs's device API free (clears the slot and destroys the buffer). */
  deviceFreeDataSpace(ptr: number): void;
  /** Destroys every buffer in the table, then the device. */
  dispose(): void;
}

/**
 * What tvmjs's published types mark private or protected and the adapter reads, as tvmjs's runtime
 * itself does: an Instance's and a Tensor's wasm library (`lib.webGPUContext`, with the buffer table
 * and device API above), a Tensor's byte offset and scope stack (`ctx.autoDisposeScope`).
 */
export interface TvmInternals {
  lib?: { webGPUContext?: TvmWebGPUContextLike };
  byteOffset?: number | bigint;
  ctx?: { autoDisposeScope?: unknown[][] };
}
