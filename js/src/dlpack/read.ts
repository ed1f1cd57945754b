/**
 * Decoding DLPack structs from wasm linear memory (wasm → JS).
 *
 * Every read is checked before it happens: the struct address is non-NULL,
 * aligned as C requires and inside memory; ndim is in [0, MAX_NDIM]; the
 * shape/strides arrays are aligned and inside memory; int64 values are exact;
 * and for CPU tensors every reachable byte lies inside memory. A malformed
 * struct gives a `WebDLPackError`, never a RangeError and never a wrong answer.
 */
import { WebDLPackError } from "../errors.js";
import { DLPackFlag, KNOWN_FLAGS_MASK, DLPACK_VERSION, MAX_NDIM } from "./constants.js";
import { validateTensorDesc, type DLPackVersionDesc, type DLTensorDesc, type ManagedTensorDesc } from "./desc.js";
import type { TensorExtent } from "./extent.js";
import { INT64_SIZE, LAYOUT } from "./layout.js";
import type { WasmHost } from "./wasm-host.js";

/** Anything the reader can read from: a memory buffer, or an object with a current `buffer` (a WasmHost, a WebAssembly.Memory). */
export type MemorySource = ArrayBuffer | SharedArrayBuffer | { readonly buffer: ArrayBuffer | SharedArrayBuffer };

/** The buffer behind a {@link MemorySource}, read now (so after any growth). */
export function memoryBuffer(source: MemorySource): ArrayBuffer | SharedArrayBuffer {
  if (source instanceof ArrayBuffer) return source;
  if (typeof SharedArrayBuffer !== "undefined" && source instanceof SharedArrayBuffer) return source;
  const buffer = (source as { buffer?: unknown } | null)?.buffer;
  if (
    buffer instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer)
  ) {
    return buffer;
  }
  throw new WebDLPackError(
    "INVALID_ARGUMENT",
    "expected an ArrayBuffer or an object with a .buffer (WasmHost, Memory)",
    {
      field: "memory",
      value: typeof source,
    },
  );
}

/**
 * Normalise an address argument to an unsigned 32-bit integer. Accepts
 * integers in [-2^31, 2^32) (a negative one is a signed view of a high
 * address and is reinterpreted with `>>> 0`); anything else is INVALID_ARGUMENT.
 */
export function toAddress(value: number, field = "address"): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < -0x80000000 || value > 0xffffffff) {
    throw new WebDLPackError("INVALID_ARGUMENT", "address must be a 32-bit integer", {
      field,
      value,
      expected: "an integer in [0, 2^32)",
    });
  }
  return value >>> 0;
}

/** Check that `[address, address + size)` is a non-NULL, `align`-aligned range inside memory. */
export function checkRange(address: number, size: number, align: number, memorySize: number, field: string): void {
  if (address === 0) {
    throw new WebDLPackError("NULL_POINTER", "pointer is NULL", { field, value: 0, expected: "a non-NULL address" });
  }
  if (address % align !== 0) {
    throw new WebDLPackError("INVALID_POINTER", `pointer is not ${align}-byte aligned`, {
      field,
      value: address,
      expected: `a multiple of ${align}`,
    });
  }
  if (address + size > memorySize) {
    throw new WebDLPackError("OUT_OF_BOUNDS", `[${address}, ${address + size}) is outside wasm memory`, {
      field,
      value: address,
      expected: `address + ${size} <= memory size ${memorySize}`,
    });
  }
}

/** Options of {@link readDLTensor}. */
export interface ReadOptions {
  /** Sub-byte elements are padded to a byte each (the versioned struct's IS_SUBBYTE_TYPE_PADDED flag). */
  subbytePadded?: boolean;
}

let viewBuffer: ArrayBufferLike | null = null;
let viewOfBuffer: DataView | null = null;

/** A DataView over `buffer`, reused while the memory's buffer stays the same one (growth replaces it). */
function dataView(buffer: ArrayBufferLike): DataView {
  if (buffer !== viewBuffer || viewOfBuffer === null) {
    viewOfBuffer = new DataView(buffer);
    viewBuffer = buffer;
  }
  return viewOfBuffer;
}

const TWO_32 = 4294967296;
/** Largest high word of an int64 whose value is still a safe integer (|v| <= 2^53 - 1). */
const SAFE_HIGH = 0x1fffff;

/** The int64 at `at` as an exact number, or null when it is not a safe integer. */
function int64At(view: DataView, at: number): number | null {
  const hi = view.getInt32(at + 4, true);
  if (hi > SAFE_HIGH || hi < -SAFE_HIGH - 1) return null;
  const value = hi * TWO_32 + view.getUint32(at, true);
  return Number.isSafeInteger(value) ? value : null;
}

/** The uint64 at `at` as an exact number, or null when it exceeds 2^53 - 1. */
function uint64At(view: DataView, at: number): number | null {
  const hi = view.getUint32(at + 4, true);
  return hi > SAFE_HIGH ? null : hi * TWO_32 + view.getUint32(at, true);
}

/** A decoded DLTensor and its extent (what {@link validateTensorDesc} returns). */
interface Decoded {
  desc: DLTensorDesc;
  extent: TensorExtent;
}

function decodeDLTensor(buffer: ArrayBufferLike, addr: number, subbytePadded: boolean): Decoded {
  const memorySize = buffer.byteLength;
  const L = LAYOUT.DLTensor;
  checkRange(addr, L.size, L.align, memorySize, "DLTensor");
  const view = dataView(buffer);

  const ndim = view.getInt32(addr + L.ndim, true);
  if (ndim < 0 || ndim > MAX_NDIM) {
    throw new WebDLPackError("BAD_NDIM", "ndim out of range", {
      field: "DLTensor.ndim",
      value: ndim,
      expected: `0 <= ndim <= ${MAX_NDIM}`,
    });
  }
  const shapePtr = view.getUint32(addr + L.shape, true);
  const stridesPtr = view.getUint32(addr + L.strides, true);
  const shape: number[] = new Array<number>(ndim);
  if (ndim > 0) {
    checkRange(shapePtr, ndim * INT64_SIZE, INT64_SIZE, memorySize, "DLTensor.shape");
    for (let i = 0; i < ndim; i++) {
      const at = shapePtr + i * INT64_SIZE;
      const d = int64At(view, at);
      if (d === null || d < 0) {
        const big = view.getBigInt64(at, true);
        if (big < 0n) {
          throw new WebDLPackError("BAD_SHAPE", "negative dimension", {
            field: `DLTensor.shape[${i}]`,
            value: big,
            expected: ">= 0",
          });
        }
        throw new WebDLPackError("SIZE_OVERFLOW", "dimension too large", {
          field: `DLTensor.shape[${i}]`,
          value: big,
          expected: "<= 2^53 - 1",
        });
      }
      shape[i] = d;
    }
  }
  let strides: number[] | null = null;
  if (stridesPtr !== 0 && ndim > 0) {
    checkRange(stridesPtr, ndim * INT64_SIZE, INT64_SIZE, memorySize, "DLTensor.strides");
    strides = new Array<number>(ndim);
    for (let i = 0; i < ndim; i++) {
      const at = stridesPtr + i * INT64_SIZE;
      const s = int64At(view, at);
      if (s === null) {
        throw new WebDLPackError("BAD_STRIDES", "stride too large", {
          field: `DLTensor.strides[${i}]`,
          value: view.getBigInt64(at, true),
          expected: "|stride| <= 2^53 - 1",
        });
      }
      strides[i] = s;
    }
  }
  const byteOffset = uint64At(view, addr + L.byte_offset);
  if (byteOffset === null) {
    throw new WebDLPackError("SIZE_OVERFLOW", "byte_offset too large", {
      field: "DLTensor.byte_offset",
      value: view.getBigUint64(addr + L.byte_offset, true),
      expected: "<= 2^53 - 1",
    });
  }
  const D = LAYOUT.DLDataType;
  const dtypeAt = addr + L.dtype;
  return validateTensorDesc(
    {
      data: view.getUint32(addr + L.data, true),
      device: {
        deviceType: view.getInt32(addr + L.device + LAYOUT.DLDevice.device_type, true),
        deviceId: view.getInt32(addr + L.device + LAYOUT.DLDevice.device_id, true),
      },
      dtype: {
        code: view.getUint8(dtypeAt + D.code),
        bits: view.getUint8(dtypeAt + D.bits),
        lanes: view.getUint16(dtypeAt + D.lanes, true),
      },
      shape,
      strides,
      byteOffset,
    },
    { memorySize, subbytePadded },
  );
}

/**
 * Decode the 40-byte `DLTensor` at `address`.
 * @param source the wasm memory (a WasmHost, WebAssembly.Memory or ArrayBuffer)
 * @param address unsigned address of the struct (8-byte aligned)
 * @returns a frozen {@link DLTensorDesc}
 * @throws WebDLPackError naming the `DLTensor.*` field at fault
 */
export function readDLTensor(source: MemorySource, address: number, options: ReadOptions = {}): DLTensorDesc {
  return decodeDLTensor(memoryBuffer(source), toAddress(address), options.subbytePadded ?? false).desc;
}

/** A decoded managed struct: the tensor, its extent, and what the managed struct adds. */
export interface DecodedManaged extends Decoded {
  /** `version` (null for the legacy struct). */
  version: DLPackVersionDesc | null;
  managerCtx: number;
  /** Function-table index of the deleter, 0 for none. */
  deleter: number;
  /** DLPackFlag bits (0 for the legacy struct). */
  flags: number;
}

/**
 * Decode a managed struct in one pass — the tensor description with its
 * extent, validated once — for consumers that take ownership (Tensor.fromManaged).
 * Same checks and errors as {@link readManagedTensorVersioned} / {@link readManagedTensor}.
 */
export function decodeManaged(source: MemorySource | WasmHost, address: number, versioned: boolean): DecodedManaged {
  const buffer = memoryBuffer(source);
  const addr = toAddress(address);
  if (!versioned) {
    const L = LAYOUT.DLManagedTensor;
    checkRange(addr, L.size, L.align, buffer.byteLength, "DLManagedTensor");
    const { desc, extent } = decodeDLTensor(buffer, addr + L.dl_tensor, false);
    const view = dataView(buffer);
    return {
      desc,
      extent,
      version: null,
      managerCtx: view.getUint32(addr + L.manager_ctx, true),
      deleter: view.getUint32(addr + L.deleter, true),
      flags: 0,
    };
  }
  const L = LAYOUT.DLManagedTensorVersioned;
  checkRange(addr, L.size, L.align, buffer.byteLength, "DLManagedTensorVersioned");
  const view = dataView(buffer);
  const major = view.getUint32(addr + L.version + LAYOUT.DLPackVersion.major, true);
  const minor = view.getUint32(addr + L.version + LAYOUT.DLPackVersion.minor, true);
  if (major !== DLPACK_VERSION.major) {
    throw new WebDLPackError(
      "VERSION_MISMATCH",
      "unsupported DLPack major version; the struct was still handed over, so its deleter must be called " +
        "(callManagedDeleter(host, address) does only that)",
      { field: "DLManagedTensorVersioned.version.major", value: major, expected: `${DLPACK_VERSION.major}` },
    );
  }
  const flagsLow = view.getUint32(addr + L.flags, true);
  if (view.getUint32(addr + L.flags + 4, true) !== 0 || (flagsLow & ~KNOWN_FLAGS_MASK) !== 0) {
    const flags = view.getBigUint64(addr + L.flags, true);
    throw new WebDLPackError("BAD_FLAGS", "unknown flag bits set", {
      field: "DLManagedTensorVersioned.flags",
      value: `0x${flags.toString(16)}`,
      expected: `only bits 0x${KNOWN_FLAGS_MASK.toString(16)} (READ_ONLY, IS_COPIED, IS_SUBBYTE_TYPE_PADDED)`,
    });
  }
  const { desc, extent } = decodeDLTensor(
    buffer,
    addr + L.dl_tensor,
    (flagsLow & DLPackFlag.IS_SUBBYTE_TYPE_PADDED) !== 0,
  );
  return {
    desc,
    extent,
    version: { major, minor },
    managerCtx: view.getUint32(addr + L.manager_ctx, true),
    deleter: view.getUint32(addr + L.deleter, true),
    flags: flagsLow,
  };
}

function managed(address: number, d: DecodedManaged): ManagedTensorDesc {
  return Object.freeze({
    ...d.desc,
    address,
    version: d.version === null ? null : Object.freeze({ ...d.version }),
    managerCtx: d.managerCtx,
    deleter: d.deleter,
    flags: d.flags,
  });
}

/**
 * Decode the 64-byte `DLManagedTensorVersioned` at `address` (DLPack ≥ 1.0).
 *
 * A major version other than 1 is VERSION_MISMATCH: nothing past the version
 * is read, and the consumer (who owns the struct now) must still call its
 * deleter — use {@link callManagedDeleter}, which reads only that field.
 * Unknown flag bits are BAD_FLAGS.
 */
export function readManagedTensorVersioned(source: MemorySource | WasmHost, address: number): ManagedTensorDesc {
  return managed(toAddress(address), decodeManaged(source, address, true));
}

/**
 * Decode the 48-byte legacy `DLManagedTensor` (pre-1.0, unversioned) at
 * `address`. `version` is null and `flags` 0 in the result.
 */
export function readManagedTensor(source: MemorySource | WasmHost, address: number): ManagedTensorDesc {
  return managed(toAddress(address), decodeManaged(source, address, false));
}

/**
 * Call a managed struct's deleter and read nothing else — what a consumer
 * must do with a struct it took but cannot use (version mismatch, bad
 * fields). Reads `deleter` at its fixed offset (12 versioned, 44 legacy) and
 * calls it with the struct's address if it is not NULL.
 * @returns true if a deleter was called; false for a NULL struct or NULL deleter
 * @throws WebDLPackError if the struct itself lies outside memory (then nothing can be called)
 */
export function callManagedDeleter(host: WasmHost, address: number, options: { versioned?: boolean } = {}): boolean {
  const addr = toAddress(address);
  if (addr === 0) return false;
  const versioned = options.versioned ?? true;
  const L = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
  const buffer = memoryBuffer(host);
  checkRange(addr, L.size, L.align, buffer.byteLength, versioned ? "DLManagedTensorVersioned" : "DLManagedTensor");
  const deleter = new DataView(buffer).getUint32(addr + L.deleter, true);
  if (deleter === 0) return false;
  host.callVoidPointer(deleter, addr);
  return true;
}
