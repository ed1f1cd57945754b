/**
 * The JS-side tensor: the class (tensor.ts) and the jobs around it.
 *
 *   tensor.ts         the Tensor class: description, storage, lifetime, the factories and exports
 *   types.ts          storage kinds, DLPack flags, the factories' inputs
 *   create.ts         the factories' checks and decoding (managed struct, TypedArray, wasm view, GPU pointer)
 *   array-input.ts    TypedArray inputs: detached buffers, element types a dtype may be stored as
 *   cpu-view.ts       views and contiguous copies of bytes in wasm memory or an ArrayBuffer
 *   gpu-pointer.ts    GPU pointer → GPUBuffer (the page context, or a resolver a test sets)
 *   dlpack-export.ts  toManaged: a managed DLPack struct in a wasm host's memory
 *   export-records.ts toManaged's exports by host: records, kept struct blocks, the shared deleter
 *   address-table.ts  values by wasm address with no allocation per add/remove (export records)
 *   ownership.ts      exactly-once release of a producer's bytes; the finalizer safety net
 *   track-tensor.ts   a GPU tensor's hold (and a DLPack export's) as an entry of the page context's ledger
 *   brand.ts          how a Tensor is known across copies of webdlpack (Symbol.for("webdlpack.tensor"))
 */
export { Tensor } from "./tensor.js";
export { TENSOR_BRAND, TENSOR_BRAND_VERSION, isBrandedTensor, looksLikeTensor, type BrandedTensor } from "./brand.js";
export type {
  StorageKind,
  TensorFlags,
  TensorLayoutInput,
  TypedArrayTensorOptions,
  ToManagedOptions,
  FromManagedOptions,
  WebGPUTensorInput,
} from "./types.js";
export { setGPUPointerResolver, type GPUPointerResolver } from "./gpu-pointer.js";
export { finalizerStats } from "./ownership.js";
export { liveExportCount, trimExportBlocks } from "./export-records.js";
