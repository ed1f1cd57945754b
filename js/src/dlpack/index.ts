/**
 * The DLPack data model and codec: enum values, struct layout, dtypes, the
 * WasmHost interface, and reading/writing DLPack structs in wasm memory.
 */
export * from "./constants.js";
export * from "./layout.js";
export * from "./dtype.js";
export { computeExtent, contiguousStrides, elementCount, type TensorExtent } from "./extent.js";
export {
  validateTensorDesc,
  type DLDeviceDesc,
  type DLTensorDesc,
  type DLPackVersionDesc,
  type ManagedTensorDesc,
  type DLTensorInput,
  type ValidateOptions,
} from "./desc.js";
export * from "./wasm-host.js";
export { moduleAllocator, type AllocatorSource, type ModuleAllocator } from "./module-allocator.js";
export * from "./codec.js";
export * from "./strided.js";
