/**
 * The DLPack codec: read and write DLPack structs in wasm linear memory.
 * Reading lives in `read.ts` (wasm → JS), writing in `write.ts` (JS → wasm),
 * memory access in `memory.ts`; both apply the checks in `desc.ts`. Where a
 * check is skipped, one function makes that decision alone: `managedTemplate` and
 * `writeManagedTrusted` (a Tensor's own description, validated when it was made), read.ts's `unchanged`
 * (inside `decodeManaged`: the same words as a decode there that passed every
 * check) and `trustedWebGPUDesc` (an adapter's own parts, desc.ts).
 */
export {
  readDLTensor,
  readManagedTensorVersioned,
  readManagedTensor,
  callManagedDeleter,
  decodeManaged,
  type ReadOptions,
  type DecodedManaged,
} from "./read.js";
export { memoryBuffer, toAddress, checkRange, type MemorySource } from "./memory.js";
export {
  writeDLTensor,
  writeManagedTensorVersioned,
  writeManagedTensor,
  writeManagedTrusted,
  type ArrayAddresses,
  type WriteOptions,
  type ManagedInput,
} from "./write.js";
