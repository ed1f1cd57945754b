/**
 * webdlpack adapters: ONNX Runtime Web, TensorFlow.js, LiteRT.js, Transformers.js, TVM (tvmjs),
 * TypedArray and GPUBuffer ↔ webdlpack Tensor, all on the context's shared WebGPU
 * device. Published as the subpath `webdlpack/adapters`; no framework is a
 * dependency (their objects are typed structurally, see framework-types.ts,
 * litert-types.ts and tvm/types.ts).
 *
 *   ort.ts             ONNX Runtime Web: session options on the shared device, tensors both ways
 *   transformers.ts    Transformers.js: pipeline options on the shared device, its outputs (ORT tensors) out
 *   litert.ts          LiteRT.js: its environment on the shared device, tensors both ways
 *   tvm/adapter.ts     TVM's web runtime (tvmjs): initWebGPU on the shared device, tensors both ways
 *   tvm/table.ts       webdlpack buffers lent to tvmjs through its buffer table (released once)
 *   tvm/types.ts       tvmjs's Instance and Tensor, typed structurally
 *   tfjs-backend.ts    TensorFlow.js: its WebGPU backend on the shared device, releases of adopted buffers
 *   tfjs-to.ts         TensorFlow.js: webdlpack tensors → TF.js tensors (zero-copy where TF.js can read the buffer)
 *   tfjs-from.ts       TensorFlow.js: TF.js tensors → webdlpack tensors (TF.js's buffer shared when safe)
 *   typed-array.ts     CPU Tensor → TypedArray (the other way: Tensor.fromTypedArray)
 *   gpu-buffer.ts      GPUBuffer ↔ WebGPU Tensor; GPU copy and read back helpers
 *   dtypes.ts          dtype tables between DLPack, ORT and TF.js
 *   gpu-copy.ts        the compute shader for strided copies and bool width changes
 *   producer.ts        adapter tensors as DLPack managed tensors (exactly-once release)
 *   leases.ts          counted holders of one adopted buffer
 *   adopt.ts           a framework's GPU outputs adopted as Tensors, one lease each (ORT, LiteRT)
 *   in-place.ts        whether ORT / LiteRT / tvmjs can read a tensor in place, or why a copy is needed
 *   handoff.ts         the one hand-off to a framework (in place, else refuse, else copy) and its record
 */
export {
  bindOrtToContext,
  checkOrtDevice,
  ortSessionOptions,
  tensorFromOrt,
  tensorToOrt,
  type OrtAdapterOptions,
  type OrtBinding,
  type TensorToOrtOptions,
} from "./ort.js";
export {
  bindLiteRtToContext,
  checkLiteRtEnvironment,
  tensorToLiteRt,
  tensorFromLiteRt,
  type BindLiteRtOptions,
  type LiteRtBinding,
  type TensorToLiteRtOptions,
  type TensorFromLiteRtOptions,
} from "./litert.js";
export {
  bindTvmToContext,
  tensorToTvm,
  tensorFromTvm,
  tvmCopyStats,
  TVM_WEBGPU_DTYPES,
  type TvmBinding,
  type TensorToTvmOptions,
  type TensorFromTvmOptions,
} from "./tvm/adapter.js";
export {
  transformersOptions,
  tensorFromTransformers,
  type TransformersAdapterOptions,
  type TransformersModelOptions,
  type TransformersTensorLike,
} from "./transformers.js";
export { registerTfjsWebGPUBackend, tfjsHeldBuffers, type RegisterTfjsOptions } from "./tfjs-backend.js";
export { tensorToTfjs, type TensorToTfjsOptions } from "./tfjs-to.js";
export { tensorFromTfjs, type TensorFromTfjsOptions } from "./tfjs-from.js";
export { tensorToTypedArray, type ToTypedArrayOptions } from "./typed-array.js";
export {
  tensorFromGPUBuffer,
  tensorToGPUBuffer,
  copyGPUTensor,
  readTensor,
  locateGPUTensor,
  type FromGPUBufferOptions,
  type GPUTensorLocation,
  type CopyGPUTensorOptions,
} from "./gpu-buffer.js";
export {
  ortTypeOf,
  dtypeOfOrt,
  tfjsTypeOf,
  dtypeOfTfjs,
  type TfjsTypeMapping,
} from "./dtypes.js";
export { runGpuCopy, type GpuCopyKind, type GpuSource } from "./gpu-copy.js";
export { liveProducedTensors } from "./producer.js";
export { handoffInfo, type HandoffInfo } from "./handoff.js";
export type * from "./framework-types.js";
export type * from "./litert-types.js";
export type * from "./tvm/types.js";
