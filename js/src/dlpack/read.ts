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
import { checkRange, dataView, heap32, memoryBuffer, toAddress, type MemorySource } from "./memory.js";
import type { WasmHost } from "./wasm-host.js";

/** Options of {@link readDLTensor}. */
export interface ReadOptions {
  /** Sub-byte elements are padded to a byte each (the versioned struct's IS_SUBBYTE_TYPE_PADDED flag). */
  subbytePadded?: boolean;
}

const TWO_32 = 4294967296;
/** Largest high word of an int64 whose value is still a safe integer (|v| <= 2^53 - 1). */
const SAFE_HIGH = 0x1fffff;

/** The int64 at `at` as an exact number, or null when it is not a safe integer. */
function int64At(view: DataView<ArrayBufferLike>, at: number): number | null {
  const hi = view.getInt32(at + 4, true);
  if (hi > SAFE_HIGH || hi < -SAFE_HIGH - 1) return null;
  const value = hi * TWO_32 + view.getUint32(at, true);
  return Number.isSafeInteger(value) ? value : null;
}

/** The uint64 at `at` as an exact number, or null when it exceeds 2^53 - 1. */
function uint64At(view: DataView<ArrayBufferLike>, at: number): number | null {
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

/** Every check of a managed struct at `addr`, then its fields: what {@link decodeManaged} returns when it has no earlier decode to reuse. */
function decodeChecked(buffer: ArrayBufferLike, addr: number, versioned: boolean): DecodedManaged {
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

/**
 * One earlier successful decode at an address: the words it was made from.
 * What {@link decodeChecked} returns, or throws, depends only on the struct's
 * bytes, the bytes of its shape and strides arrays, and the memory size — and
 * wasm memory never shrinks. So the result stays right while those words are
 * equal and the memory is at least as large.
 */
interface Remembered {
  readonly versioned: boolean;
  readonly memorySize: number;
  /** The struct's words, then the shape array's, then the strides array's (if any). */
  readonly words: readonly number[];
  readonly structWords: number;
  /** Word index of the shape / strides arrays in memory (0: none). */
  readonly shapeAt: number;
  readonly stridesAt: number;
  readonly arrayWords: number;
  readonly decoded: DecodedManaged;
}

/** Addresses remembered per memory source; the map is emptied when it reaches this size. */
const MAX_REMEMBERED = 64;
const remembered = new WeakMap<object, Map<number, Remembered>>();

function sameWords(
  heap: Uint32Array<ArrayBufferLike>,
  at: number,
  words: readonly number[],
  from: number,
  n: number,
): boolean {
  for (let i = 0; i < n; i++) if (heap[at + i] !== words[from + i]) return false;
  return true;
}

/** Whether `r` was made from the words now at `addr` (and memory is no smaller): the one place a decode is trusted unchecked. */
function unchanged(r: Remembered, heap: Uint32Array<ArrayBufferLike>, addr: number, memorySize: number): boolean {
  const w = r.words;
  return (
    memorySize >= r.memorySize &&
    sameWords(heap, addr >>> 2, w, 0, r.structWords) &&
    (r.arrayWords === 0 || sameWords(heap, r.shapeAt, w, r.structWords, r.arrayWords)) &&
    (r.stridesAt === 0 || sameWords(heap, r.stridesAt, w, r.structWords + r.arrayWords, r.arrayWords))
  );
}

/** Append `n` words of `heap` from word `at` to `words`. */
function copyWords(heap: Uint32Array<ArrayBufferLike>, at: number, words: number[], n: number): void {
  for (let i = 0; i < n; i++) words.push(heap[at + i]!);
}

function remember(
  key: object,
  heap: Uint32Array<ArrayBufferLike>,
  addr: number,
  versioned: boolean,
  memorySize: number,
  decoded: DecodedManaged,
): void {
  const L = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
  const T = addr + L.dl_tensor;
  const ndim = decoded.desc.ndim;
  const structWords = L.size >>> 2;
  const arrayWords = (ndim * INT64_SIZE) >>> 2;
  const shapeAt = ndim > 0 ? heap[(T + LAYOUT.DLTensor.shape) >>> 2]! >>> 2 : 0;
  const stridesPtr = heap[(T + LAYOUT.DLTensor.strides) >>> 2]!;
  const stridesAt = ndim > 0 && stridesPtr !== 0 ? stridesPtr >>> 2 : 0;
  // Copied word by word into a plain array: a typed array and a `subarray` per range are objects V8 makes slowly,
  // and cost more than the copy (a first decode of a 1-d tensor: 2.4 µs with them, 1.0 without, in Node).
  const words: number[] = [];
  copyWords(heap, addr >>> 2, words, structWords);
  if (arrayWords > 0) copyWords(heap, shapeAt, words, arrayWords);
  if (stridesAt !== 0) copyWords(heap, stridesAt, words, arrayWords);
  let map = remembered.get(key);
  if (map === undefined) {
    map = new Map();
    remembered.set(key, map);
  } else if (map.size >= MAX_REMEMBERED) map.clear();
  map.set(addr, { versioned, memorySize, words, structWords, shapeAt, stridesAt, arrayWords, decoded });
}

/**
 * Decode a managed struct in one pass — the tensor description with its
 * extent, validated once — for consumers that take ownership (Tensor.fromManaged).
 * Same checks and errors as {@link readManagedTensorVersioned} / {@link readManagedTensor}.
 *
 * Producers that hand tensors over in a loop write the same struct again and
 * again, usually at the same address (the freed block is the next one malloc
 * returns). So the last successful decode at each address is remembered, and
 * reused while {@link unchanged} finds every word it was made from still the
 * same (about 20 comparisons for a 1-d tensor instead of the full checks).
 * Anything else — a new address, a changed byte, a failed decode — goes
 * through every check. The result may be shared: it is frozen.
 */
export function decodeManaged(source: MemorySource | WasmHost, address: number, versioned: boolean): DecodedManaged {
  const buffer = memoryBuffer(source);
  const addr = toAddress(address);
  const heap = heap32(buffer);
  const memorySize = buffer.byteLength;
  const r = remembered.get(source)?.get(addr);
  if (r !== undefined && r.versioned === versioned && unchanged(r, heap, addr, memorySize)) return r.decoded;
  const decoded = Object.freeze(decodeChecked(buffer, addr, versioned));
  Object.freeze(decoded.extent);
  remember(source, heap, addr, versioned, memorySize, decoded);
  return decoded;
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
