/**
 * The DLPack data model and codec: enum values, struct layout, dtypes, the
 * WasmHost interface, and reading/writing DLPack structs in wasm memory.
 */
export {
  DLPACK_VERSION,
  DeviceType,
  DataTypeCode,
  DLPackFlag,
  KNOWN_FLAGS_MASK,
  isDeviceType,
  deviceTypeName,
  isDataTypeCode,
  dataTypeCodeName,
  type DeviceTypeName,
  type DataTypeCodeName,
} from "./constants.js";
export { LAYOUT, type StructLayout, type StructName } from "./layout.js";
export {
  Float16ArrayCtor,
  parseDType,
  formatDType,
  toDType,
  validateDType,
  dtypeEquals,
  itemsize,
  isSubByte,
  storageBytes,
  typedArrayFor,
  dtypeOfTypedArray,
  type DType,
  type TypedArray,
  type TypedArrayInfo,
  type TypedArrayConstructorLike,
} from "./dtype.js";
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
export {
  checkWasmHost,
  emscriptenHost,
  type WasmHost,
  type WasmHostMember,
  type EmscriptenModuleLike,
} from "./wasm-host.js";
export { moduleAllocator, type AllocatorSource, type ModuleAllocator } from "./module-allocator.js";
export {
  readDLTensor,
  readManagedTensorVersioned,
  readManagedTensor,
  callManagedDeleter,
  decodeManaged,
} from "./read.js";
export { toAddress } from "./memory.js";
export {
  writeDLTensor,
  writeManagedTensorVersioned,
  writeManagedTensor,
  writeManagedTrusted,
  type ManagedInput,
} from "./write.js";
export { gatherStrided } from "./strided.js";
