/**
 * Encoding DLPack structs into wasm linear memory (JS → wasm): one writer of
 * the bytes ({@link fillDLTensor}, {@link fillManaged}) behind every entry.
 *
 * Whether the description needs checking is decided by which entry is
 * called, and nowhere else: {@link writeDLTensor}, {@link writeManagedTensorVersioned}
 * and {@link writeManagedTensor} take a description from outside and validate
 * it with the rules the reader applies before a byte is written, so whatever
 * they write, `read*` accepts; {@link managedTemplate} and {@link writeManagedTrusted}
 * take a description webdlpack validated already (a Tensor's own, exported again
 * and again: wasm memory never shrinks, so it stays valid) and encode it as it is
 * — the template once per Tensor, host and struct kind, copied to each export's
 * block by {@link writeTemplate}. Int64 fields go in as two 32-bit halves, not through BigInt.
 */
import { WebDLPackError } from "../errors.js";
import { DLPACK_VERSION, DLPackFlag, KNOWN_FLAGS_MASK } from "./constants.js";
import { validateTensorDesc, type DLPackVersionDesc, type DLTensorDesc, type DLTensorInput } from "./desc.js";
import { rowMajorStrides } from "./extent.js";
import { INT64_SIZE, LAYOUT } from "./layout.js";
import { checkRange, dataView, memoryBuffer, toAddress, type MemorySource } from "./memory.js";
import type { WasmHost } from "./wasm-host.js";

/** Where {@link writeDLTensor} puts the shape and strides arrays. */
export interface ArrayAddresses {
  /** Address for `ndim` int64 shape entries (8-aligned); may be 0 when ndim is 0. */
  readonly shape: number;
  /** Address for `ndim` int64 strides (8-aligned), or 0 to write a NULL strides pointer. */
  readonly strides: number;
}

/** Options shared by the writers. */
export interface WriteOptions {
  /** Sub-byte elements are padded to a byte each (affects the size check only). */
  subbytePadded?: boolean;
}

const TWO_32 = 4294967296;

/** A safe integer as a little-endian int64 (two's complement for negative strides). */
function setInt64(view: DataView<ArrayBufferLike>, at: number, value: number): void {
  view.setUint32(at, value >>> 0, true);
  view.setUint32(at + 4, Math.floor(value / TWO_32) >>> 0, true);
}

/**
 * The one writer of a `DLTensor`'s bytes: the struct at `addr`, `desc.shape`
 * at `shapeAt` and, unless `stridesAt` is 0 (a NULL strides pointer),
 * `strides` there (row-major ones when `strides` is null). `data` and
 * `byteOffset` replace the description's (an export of a copy writes the
 * copy's). Nothing is checked.
 */
function fillDLTensor(
  view: DataView<ArrayBufferLike>,
  addr: number,
  desc: DLTensorDesc,
  data: number,
  byteOffset: number,
  strides: readonly number[] | null,
  shapeAt: number,
  stridesAt: number,
): void {
  const L = LAYOUT.DLTensor;
  const D = LAYOUT.DLDataType;
  const ndim = desc.ndim;
  let step = 1;
  for (let i = ndim - 1; i >= 0; i--) {
    const extent = desc.shape[i]!;
    setInt64(view, shapeAt + i * INT64_SIZE, extent);
    if (stridesAt !== 0) setInt64(view, stridesAt + i * INT64_SIZE, strides === null ? step : strides[i]!);
    step *= Math.max(extent, 1); // row-major as extent.ts rowMajorStrides: a 0 extent counts as 1
  }
  view.setUint32(addr + L.data, data >>> 0, true);
  view.setInt32(addr + L.device + LAYOUT.DLDevice.device_type, desc.device.deviceType, true);
  view.setInt32(addr + L.device + LAYOUT.DLDevice.device_id, desc.device.deviceId, true);
  view.setInt32(addr + L.ndim, ndim, true);
  view.setUint8(addr + L.dtype + D.code, desc.dtype.code);
  view.setUint8(addr + L.dtype + D.bits, desc.dtype.bits);
  view.setUint16(addr + L.dtype + D.lanes, desc.dtype.lanes, true);
  view.setUint32(addr + L.shape, shapeAt >>> 0, true);
  view.setUint32(addr + L.strides, stridesAt >>> 0, true);
  setInt64(view, addr + L.byte_offset, byteOffset);
}

/**
 * Write a 40-byte `DLTensor` at `address`, and its shape/strides arrays at
 * `arrays.shape` / `arrays.strides`. If `desc.strides` is null and
 * `arrays.strides` is non-zero, C-contiguous strides are written there.
 * Validates the description (for CPU tensors: against this memory) first.
 */
export function writeDLTensor(
  target: MemorySource,
  address: number,
  input: DLTensorInput,
  arrays: ArrayAddresses,
  options: WriteOptions = {},
): DLTensorDesc {
  const buffer = memoryBuffer(target);
  const { desc } = validateTensorDesc(input, {
    memorySize: buffer.byteLength,
    subbytePadded: options.subbytePadded ?? false,
  });
  const addr = toAddress(address);
  checkRange(addr, LAYOUT.DLTensor.size, LAYOUT.DLTensor.align, buffer.byteLength, "DLTensor");
  const shapeAt = toAddress(arrays.shape, "shape address");
  let stridesAt = toAddress(arrays.strides, "strides address");
  if (desc.ndim > 0) {
    checkRange(shapeAt, desc.ndim * INT64_SIZE, INT64_SIZE, buffer.byteLength, "DLTensor.shape");
    if (stridesAt !== 0)
      checkRange(stridesAt, desc.ndim * INT64_SIZE, INT64_SIZE, buffer.byteLength, "DLTensor.strides");
  } else {
    stridesAt = 0;
  }
  const full: DLTensorDesc =
    desc.strides === null && stridesAt !== 0 ? { ...desc, strides: rowMajorStrides(desc.shape) } : desc;
  fillDLTensor(dataView(buffer), addr, desc, desc.data, desc.byteOffset, desc.strides, shapeAt, stridesAt);
  return full;
}

/** What a managed struct carries besides the tensor. */
export interface ManagedInput extends DLTensorInput {
  /** `manager_ctx`; default 0. */
  readonly managerCtx?: number;
  /** Function-table index of `void deleter(self)`; default 0 (no deleter). */
  readonly deleter?: number;
  /** DLPackFlag bits (versioned only); default 0. */
  readonly flags?: number;
  /** Version to write (versioned only); default {@link DLPACK_VERSION}. */
  readonly version?: DLPackVersionDesc;
  /**
   * Write strides explicitly even when `strides` is null (default true):
   * consumers that require a strides array get one; NULL is written only if false.
   */
  readonly explicitStrides?: boolean;
}

function checkFlags(flags: number): number {
  if (!Number.isInteger(flags) || flags < 0 || (flags & ~KNOWN_FLAGS_MASK) !== 0) {
    throw new WebDLPackError("BAD_FLAGS", "unknown flag bits", {
      field: "DLManagedTensorVersioned.flags",
      value: flags,
      expected: `only bits 0x${KNOWN_FLAGS_MASK.toString(16)}`,
    });
  }
  return flags;
}

function u32(value: number | undefined, field: string): number {
  if (value === undefined) return 0;
  return toAddress(value, field);
}

/** The checked entry: every field of `input` checked, the description validated, then {@link encodeManaged}. */
function writeManaged(host: WasmHost, input: ManagedInput, versioned: boolean): number {
  const name = versioned ? "DLManagedTensorVersioned" : "DLManagedTensor";
  const flags = versioned ? checkFlags(input.flags ?? 0) : 0;
  if (!versioned && (input.flags ?? 0) !== 0) {
    throw new WebDLPackError("BAD_FLAGS", "the legacy DLManagedTensor has no flags", {
      field: "flags",
      value: input.flags,
    });
  }
  const version = input.version ?? DLPACK_VERSION;
  const major = u32(version.major, `${name}.version.major`);
  const minor = u32(version.minor, `${name}.version.minor`);
  const managerCtx = u32(input.managerCtx, `${name}.manager_ctx`);
  const deleter = u32(input.deleter, `${name}.deleter`);
  // Validate against the memory as it is now: memory only grows, so this stays true after malloc.
  const { desc } = validateTensorDesc(input, {
    memorySize: memoryBuffer(host).byteLength,
    subbytePadded: (flags & DLPackFlag.IS_SUBBYTE_TYPE_PADDED) !== 0,
  });
  const withStrides = desc.strides !== null || (input.explicitStrides ?? true);
  const fields = { data: desc.data, byteOffset: desc.byteOffset, strides: desc.strides, withStrides };
  return encodeManaged(host, versioned, desc, { ...fields, managerCtx, deleter, flags, major, minor });
}

/** The managed struct's layout: versioned or legacy. */
function layoutOf(versioned: boolean): typeof LAYOUT.DLManagedTensorVersioned | typeof LAYOUT.DLManagedTensor {
  return versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
}

/** Bytes of one managed struct block: the struct, then the shape, then the strides (when `withStrides`). */
function blockBytes(versioned: boolean, ndim: number, withStrides: boolean): number {
  const arrayBytes = ndim * INT64_SIZE;
  return layoutOf(versioned).size + arrayBytes + (withStrides ? arrayBytes : 0);
}

/**
 * `host.malloc(bytes)` for a managed struct block: OUT_OF_MEMORY if it returns 0,
 * INVALID_POINTER (the block freed) if the address is not aligned for the struct.
 */
export function mallocManaged(host: WasmHost, bytes: number, versioned: boolean): number {
  const L = layoutOf(versioned);
  const addr = host.malloc(bytes) >>> 0;
  if (addr === 0 || addr % L.align !== 0) {
    if (addr !== 0) host.free(addr);
    const name = versioned ? "DLManagedTensorVersioned" : "DLManagedTensor";
    throw addr === 0
      ? new WebDLPackError("OUT_OF_MEMORY", `malloc(${bytes}) failed for a ${name}`, { field: "malloc", value: bytes })
      : new WebDLPackError("INVALID_POINTER", "malloc returned a misaligned address", {
          field: "malloc",
          value: addr,
          expected: `a multiple of ${L.align}`,
        });
  }
  return addr;
}

/** What a managed struct holds besides its tensor's description. */
interface ManagedFields {
  /** `data`, `byte_offset` and strides to write instead of the description's (a copy's); null strides: row-major. */
  readonly data: number;
  readonly byteOffset: number;
  readonly strides: readonly number[] | null;
  /** Whether the block holds a strides array (else the strides pointer is NULL). */
  readonly withStrides: boolean;
  readonly managerCtx: number;
  /** Function-table index of `void deleter(self)`. */
  readonly deleter: number;
  /** DLPackFlag bits and the version (the versioned struct only). */
  readonly flags: number;
  readonly major: number;
  readonly minor: number;
}

/** The fields of a struct webdlpack exports: strides always written, manager_ctx 0, the current version. */
function exportFields(
  data: number,
  byteOffset: number,
  strides: readonly number[] | null,
  deleter: number,
  flags: number,
): ManagedFields {
  const { major, minor } = DLPACK_VERSION;
  return { data, byteOffset, strides, withStrides: true, managerCtx: 0, deleter, flags, major, minor };
}

/**
 * The one writer of a managed struct's bytes: the struct at `addr`, then its
 * shape, then its strides (when `f.withStrides`), as {@link blockBytes} lays them out.
 * Nothing is checked.
 */
function fillManaged(
  view: DataView<ArrayBufferLike>,
  addr: number,
  versioned: boolean,
  desc: DLTensorDesc,
  f: ManagedFields,
): void {
  const L = layoutOf(versioned);
  const shapeAt = addr + L.size;
  const stridesAt = f.withStrides ? shapeAt + desc.ndim * INT64_SIZE : 0;
  fillDLTensor(view, addr + L.dl_tensor, desc, f.data, f.byteOffset, f.strides, shapeAt, stridesAt);
  view.setUint32(addr + L.manager_ctx, f.managerCtx >>> 0, true);
  view.setUint32(addr + L.deleter, f.deleter >>> 0, true);
  if (versioned) {
    const V = LAYOUT.DLManagedTensorVersioned;
    view.setUint32(addr + V.version + LAYOUT.DLPackVersion.major, f.major >>> 0, true);
    view.setUint32(addr + V.version + LAYOUT.DLPackVersion.minor, f.minor >>> 0, true);
    view.setUint32(addr + V.flags, f.flags >>> 0, true);
    view.setUint32(addr + V.flags + 4, 0, true);
  }
}

/** malloc ONE block for the struct and its arrays ({@link mallocManaged}) and fill it ({@link fillManaged}). */
function encodeManaged(host: WasmHost, versioned: boolean, desc: DLTensorDesc, f: ManagedFields): number {
  const addr = mallocManaged(host, blockBytes(versioned, desc.ndim, f.withStrides), versioned);
  fillManaged(dataView(host.buffer), addr, versioned, desc, f); // the buffer after malloc, which may have grown memory
  return addr;
}

/**
 * A managed struct block encoded once, to be copied to any address: its words as
 * {@link fillManaged} writes them at address 0, and which two words are addresses
 * inside the block (the shape and strides pointers) that {@link writeTemplate} moves.
 */
export interface ManagedTemplate {
  /** The block's words (its byte length is a multiple of 8). */
  readonly words: Uint32Array;
  /** The block's size in bytes. */
  readonly bytes: number;
  /** Word index of `dl_tensor.shape` (holds the shape's offset in the block). */
  readonly shapeWord: number;
  /** Word index of `dl_tensor.strides` (holds the strides' offset in the block). */
  readonly stridesWord: number;
}

/**
 * The trusted template entry: the block of a managed struct (versioned unless
 * `versioned` is false) for `desc`, which must be a description webdlpack
 * validated (a Tensor's), with its own data, byte offset and strides (always
 * written), manager_ctx 0, `deleter` a function-table index and `flags` known
 * DLPack flag bits (0 for the legacy struct). Write it with {@link writeTemplate}.
 */
export function managedTemplate(
  desc: DLTensorDesc,
  deleter: number,
  flags: number,
  versioned: boolean,
): ManagedTemplate {
  const bytes = blockBytes(versioned, desc.ndim, true);
  const words = new Uint32Array(bytes / 4);
  const fields = exportFields(desc.data, desc.byteOffset, desc.strides, deleter, flags);
  fillManaged(new DataView(words.buffer), 0, versioned, desc, fields);
  const tensorAt = layoutOf(versioned).dl_tensor;
  return {
    words,
    bytes,
    shapeWord: (tensorAt + LAYOUT.DLTensor.shape) / 4,
    stridesWord: (tensorAt + LAYOUT.DLTensor.strides) / 4,
  };
}

/**
 * Copy `template` to `addr` (8-aligned) through `heap`, a view of the whole memory
 * (`heap.length * 4 >= addr + template.bytes`), and point its shape and strides at
 * the arrays there. Nothing is checked.
 */
export function writeTemplate(heap: Uint32Array<ArrayBufferLike>, addr: number, template: ManagedTemplate): void {
  const at = addr >>> 2;
  heap.set(template.words, at);
  heap[at + template.shapeWord] = template.words[template.shapeWord]! + addr;
  heap[at + template.stridesWord] = template.words[template.stridesWord]! + addr;
}

/** Where a trusted struct's elements are and how it is released ({@link writeManagedTrusted}). */
export interface TrustedStruct {
  /** The elements' address (a C-contiguous copy's). */
  data: number;
  /** Bytes from `data` to the first element. */
  byteOffset: number;
  /** Strides in elements, or null for C-contiguous (always written). */
  strides: readonly number[] | null;
  /** The deleter: a function-table index. */
  deleter: number;
  /** Known DLPack flag bits (0 for the legacy struct). */
  flags: number;
  /** `DLManagedTensorVersioned` (true) or the legacy `DLManagedTensor`. */
  versioned: boolean;
}

/**
 * The trusted entry for a copy's struct: a managed struct for `desc`, which must be a description webdlpack
 * validated (a Tensor's), with the data, offset, strides, deleter and flags of `struct` as given (a C-contiguous
 * copy's: the copy's address, 0, null). Returns the struct's address; OUT_OF_MEMORY if malloc fails.
 */
export function writeManagedTrusted(host: WasmHost, desc: DLTensorDesc, struct: TrustedStruct): number {
  const { data, byteOffset, strides, deleter, flags, versioned } = struct;
  return encodeManaged(host, versioned, desc, exportFields(data, byteOffset, strides, deleter, flags));
}

/**
 * Allocate and fill a `DLManagedTensorVersioned` in `host` memory: the 64-byte
 * struct followed by its shape and strides arrays, all in ONE malloc block,
 * so the deleter frees everything with one `free(self)`.
 * @returns the struct's address (8-aligned)
 * @throws WebDLPackError (validation codes, BAD_FLAGS, OUT_OF_MEMORY)
 */
export function writeManagedTensorVersioned(host: WasmHost, input: ManagedInput): number {
  return writeManaged(host, input, true);
}

/** Like {@link writeManagedTensorVersioned}, for the 48-byte legacy `DLManagedTensor` (no version, no flags). */
export function writeManagedTensor(host: WasmHost, input: ManagedInput): number {
  return writeManaged(host, input, false);
}
