/**
 * The DLPack codec: read and write DLPack structs in wasm linear memory.
 * Reading lives in `read.ts` (wasm → JS), writing in `write.ts` (JS → wasm);
 * both apply the checks in `desc.ts`. Where a check is skipped, one function
 * says so by its name and makes that decision alone: `writeManagedTrusted`
 * (a Tensor's own description, validated when it was made), `decodeManagedCached`
 * (the same bytes as a decode that passed every check: decode-cache.ts) and
 * `trustedWebGPUDesc` (an adapter's own parts, desc.ts).
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
export {
  writeDLTensor,
  writeManagedTensorVersioned,
  writeManagedTensor,
  writeManagedTrusted,
  type ArrayAddresses,
  type WriteOptions,
  type ManagedInput,
} from "./write.js";
