/**
 * Encoding DLPack structs into wasm linear memory (JS → wasm): one writer of
 * the bytes ({@link fillDLTensor}, {@link encodeManaged}) behind every entry.
 *
 * Whether the description needs checking is decided by which entry is
 * called, and nowhere else: {@link writeDLTensor}, {@link writeManagedTensorVersioned}
 * and {@link writeManagedTensor} take a description from outside and validate
 * it with the rules the reader applies before a byte is written, so whatever
 * they write, `read*` accepts; {@link writeManagedTrusted} takes a description
 * webdlpack validated already (a Tensor's own, exported again and again: wasm
 * memory never shrinks, so it stays valid) and writes it as it is. Int64
 * fields go in as two 32-bit halves, not through BigInt.
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
  return encodeManaged(
    host,
    versioned,
    desc,
    desc.data,
    desc.byteOffset,
    desc.strides,
    withStrides,
    managerCtx,
    deleter,
    flags,
    major,
    minor,
  );
}

/**
 * The one writer of a managed struct: malloc ONE block for the struct, then
 * the shape, then the strides (when `withStrides`), and fill it. Nothing is
 * checked but malloc's result (OUT_OF_MEMORY; INVALID_POINTER if misaligned).
 */
function encodeManaged(
  host: WasmHost,
  versioned: boolean,
  desc: DLTensorDesc,
  data: number,
  byteOffset: number,
  strides: readonly number[] | null,
  withStrides: boolean,
  managerCtx: number,
  deleter: number,
  flags: number,
  major: number,
  minor: number,
): number {
  const L = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
  const arrayBytes = desc.ndim * INT64_SIZE;
  const total = L.size + arrayBytes + (withStrides ? arrayBytes : 0);
  const addr = host.malloc(total) >>> 0;
  if (addr === 0 || addr % L.align !== 0) {
    if (addr !== 0) host.free(addr);
    const name = versioned ? "DLManagedTensorVersioned" : "DLManagedTensor";
    throw addr === 0
      ? new WebDLPackError("OUT_OF_MEMORY", `malloc(${total}) failed for a ${name}`, { field: "malloc", value: total })
      : new WebDLPackError("INVALID_POINTER", "malloc returned a misaligned address", {
          field: "malloc",
          value: addr,
          expected: `a multiple of ${L.align}`,
        });
  }
  const view = dataView(host.buffer); // after malloc, which may have grown memory
  const shapeAt = addr + L.size;
  fillDLTensor(
    view,
    addr + L.dl_tensor,
    desc,
    data,
    byteOffset,
    strides,
    shapeAt,
    withStrides ? shapeAt + arrayBytes : 0,
  );
  view.setUint32(addr + L.manager_ctx, managerCtx >>> 0, true);
  view.setUint32(addr + L.deleter, deleter >>> 0, true);
  if (versioned) {
    const V = LAYOUT.DLManagedTensorVersioned;
    view.setUint32(addr + V.version + LAYOUT.DLPackVersion.major, major >>> 0, true);
    view.setUint32(addr + V.version + LAYOUT.DLPackVersion.minor, minor >>> 0, true);
    view.setUint32(addr + V.flags, flags >>> 0, true);
    view.setUint32(addr + V.flags + 4, 0, true);
  }
  return addr;
}

/**
 * The trusted entry: a managed struct (versioned unless `versioned` is false)
 * for `desc`, which must be a description webdlpack validated (a Tensor's),
 * with `data`, `byteOffset` and `strides` as given (the Tensor's own, or those
 * of a C-contiguous copy of it: the copy's address, 0, null); strides are always
 * written. `flags` must be known DLPack flag bits (0 for the legacy struct);
 * `deleter` a function-table index. Returns the struct's address; OUT_OF_MEMORY if malloc fails.
 */
export function writeManagedTrusted(
  host: WasmHost,
  desc: DLTensorDesc,
  data: number,
  byteOffset: number,
  strides: readonly number[] | null,
  deleter: number,
  flags: number,
  versioned: boolean,
): number {
  const v = DLPACK_VERSION;
  return encodeManaged(host, versioned, desc, data, byteOffset, strides, true, 0, deleter, flags, v.major, v.minor);
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
