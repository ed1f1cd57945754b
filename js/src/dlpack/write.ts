/**
 * Encoding DLPack structs into wasm linear memory (JS → wasm).
 *
 * The description is validated with the same rules the reader applies before
 * a single byte is written, so whatever this writes, `read*` accepts.
 */
import { WebDLPackError } from "../errors.js";
import { DLPACK_VERSION, DLPackFlag, KNOWN_FLAGS_MASK } from "./constants.js";
import { validateTensorDesc, type DLPackVersionDesc, type DLTensorDesc, type DLTensorInput } from "./desc.js";
import { rowMajorStrides } from "./extent.js";
import { INT64_SIZE, LAYOUT } from "./layout.js";
import { checkRange, memoryBuffer, toAddress, type MemorySource } from "./read.js";
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

function writeStruct(view: DataView, addr: number, desc: DLTensorDesc, shapeAt: number, stridesAt: number): void {
  const L = LAYOUT.DLTensor;
  const D = LAYOUT.DLDataType;
  for (let i = 0; i < desc.ndim; i++) {
    view.setBigInt64(shapeAt + i * INT64_SIZE, BigInt(desc.shape[i]!), true);
    if (stridesAt !== 0) view.setBigInt64(stridesAt + i * INT64_SIZE, BigInt(desc.strides![i]!), true);
  }
  view.setUint32(addr + L.data, desc.data >>> 0, true);
  view.setInt32(addr + L.device + LAYOUT.DLDevice.device_type, desc.device.deviceType, true);
  view.setInt32(addr + L.device + LAYOUT.DLDevice.device_id, desc.device.deviceId, true);
  view.setInt32(addr + L.ndim, desc.ndim, true);
  view.setUint8(addr + L.dtype + D.code, desc.dtype.code);
  view.setUint8(addr + L.dtype + D.bits, desc.dtype.bits);
  view.setUint16(addr + L.dtype + D.lanes, desc.dtype.lanes, true);
  view.setUint32(addr + L.shape, shapeAt >>> 0, true);
  view.setUint32(addr + L.strides, stridesAt >>> 0, true);
  view.setBigUint64(addr + L.byte_offset, BigInt(desc.byteOffset), true);
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
  writeStruct(new DataView(buffer), addr, full, shapeAt, stridesAt);
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

function writeManaged(host: WasmHost, input: ManagedInput, versioned: boolean): number {
  const L = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
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
  const arrayBytes = desc.ndim * INT64_SIZE;
  const total = L.size + arrayBytes + (withStrides ? arrayBytes : 0);
  const addr = host.malloc(total) >>> 0;
  if (addr === 0) {
    throw new WebDLPackError("OUT_OF_MEMORY", `malloc(${total}) failed for a ${name}`, {
      field: "malloc",
      value: total,
    });
  }
  if (addr % L.align !== 0) {
    host.free(addr);
    throw new WebDLPackError("INVALID_POINTER", "malloc returned a misaligned address", {
      field: "malloc",
      value: addr,
      expected: `a multiple of ${L.align}`,
    });
  }
  try {
    const view = new DataView(memoryBuffer(host)); // re-derived: malloc may have grown memory
    const shapeAt = addr + L.size;
    const stridesAt = withStrides ? shapeAt + arrayBytes : 0;
    const full: DLTensorDesc =
      withStrides && desc.strides === null ? { ...desc, strides: rowMajorStrides(desc.shape) } : desc;
    writeStruct(view, addr + L.dl_tensor, full, shapeAt, stridesAt);
    view.setUint32(addr + L.manager_ctx, managerCtx, true);
    view.setUint32(addr + L.deleter, deleter, true);
    if (versioned) {
      const V = LAYOUT.DLManagedTensorVersioned;
      view.setUint32(addr + V.version + LAYOUT.DLPackVersion.major, major, true);
      view.setUint32(addr + V.version + LAYOUT.DLPackVersion.minor, minor, true);
      view.setBigUint64(addr + V.flags, BigInt(flags), true);
    }
  } catch (err) {
    host.free(addr);
    throw err;
  }
  return addr;
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
