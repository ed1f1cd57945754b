/**
 * The DLPack codec: read and write DLPack structs in wasm linear memory.
 * Reading lives in `read.ts` (wasm → JS), writing in `write.ts` (JS → wasm);
 * both apply the checks in `desc.ts`.
 */
export {
  readDLTensor,
  readManagedTensorVersioned,
  readManagedTensor,
  callManagedDeleter,
  decodeManaged,
  memoryBuffer,
  toAddress,
  checkRange,
  type MemorySource,
  type ReadOptions,
  type DecodedManaged,
} from "./read.js";
export { decodeManagedCached } from "./decode-cache.js";
export { writeManagedTrusted } from "./write-trusted.js";
export {
  writeDLTensor,
  writeManagedTensorVersioned,
  writeManagedTensor,
  type ArrayAddresses,
  type WriteOptions,
  type ManagedInput,
} from "./write.js";
