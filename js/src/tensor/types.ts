/**
 * The shapes a Tensor is described by: where its bytes are (storage), its
 * DLPack flags, the inputs of its factories and export, and the record the
 * factories hand the constructor.
 */
import { DLPackFlag, type DLTensorDesc, type DType, type TensorExtent, type WasmHost } from "../dlpack/index.js";
import type { Ownership } from "./ownership.js";

/** Where a tensor's bytes are. */
export type StorageKind = "wasm" | "js" | "webgpu";

/** DLPack flags of a tensor, as booleans. */
export interface TensorFlags {
  /** READ_ONLY: do not write through this tensor (advisory in JS: views are still writable). */
  readonly readOnly: boolean;
  /** IS_COPIED: the producer made this copy for us. */
  readonly isCopied: boolean;
  /** IS_SUBBYTE_TYPE_PADDED: sub-byte elements take a byte each. */
  readonly subbytePadded: boolean;
}

/** Where a tensor's bytes are, with what it needs to reach them. */
export type Storage =
  | { readonly kind: "wasm"; readonly host: WasmHost }
  | { readonly kind: "js"; readonly buffer: ArrayBufferLike }
  | { readonly kind: "webgpu" };

/** What the factories hand the Tensor constructor. */
export interface TensorInit {
  desc: DLTensorDesc;
  extent: TensorExtent;
  storage: Storage;
  flags: TensorFlags;
  owner: Ownership | null;
  /** Owner label: put this tensor's hold in the context's lifetime ledger (owning webgpu tensors). */
  ledgerOwner?: string | undefined;
}

/** Shape/dtype arguments shared by the factories. */
export interface TensorLayoutInput {
  /** A {@link DType} or a name such as `"float32"`. */
  dtype: DType | string;
  shape: readonly number[];
  /** Strides in elements; omitted/null = C-contiguous. */
  strides?: readonly number[] | null;
  /** Bytes from `data` to the first element; default 0. */
  byteOffset?: number;
  /** Mark the tensor READ_ONLY; default false. */
  readOnly?: boolean;
}

/** Options of {@link Tensor.fromTypedArray}. */
export interface TypedArrayTensorOptions {
  /** Extents (default 1-D over the whole array). Must cover the array's bytes exactly. */
  shape?: readonly number[];
  /**
   * Element type. Default: the TypedArray's own (Float32Array → float32, …);
   * required for an ArrayBuffer or DataView. For a TypedArray it must be a
   * dtype stored as that TypedArray (see {@link typedArrayFor}: a Uint8Array
   * as bool or float8, a Uint16Array as float16 or bfloat16, a Float32Array as
   * complex64 or float32x4, …), else BAD_DTYPE — unless `reinterpret` is set.
   */
  dtype?: DType | string;
  /**
   * Opt in to viewing the array's bytes as a dtype its elements are not
   * (e.g. the bytes of a Float32Array as float64, or as int32 bit patterns).
   * Default false: such a dtype is a BAD_DTYPE error.
   */
  reinterpret?: boolean;
  /** Set READ_ONLY. */
  readOnly?: boolean;
  /** Set IS_COPIED (e.g. a readback made for the consumer). */
  isCopied?: boolean;
  /**
   * Make the tensor own the bytes: `onRelease` runs exactly once, when the
   * tensor is disposed (or garbage-collected undisposed) and every
   * `retain()` hold is released — e.g. to give a pooled buffer back, or (for
   * a tensor another thread sent) to tell the sender. If the array or
   * options are refused, it runs before the error is thrown.
   */
  onRelease?: () => void;
}

/** Options of {@link Tensor.toManaged}. */
export interface ToManagedOptions {
  /** Export a `DLManagedTensorVersioned` (default) or the legacy `DLManagedTensor`. */
  versioned?: boolean;
  /** Allow copying bytes that are not in `host`'s memory into its heap (default true). */
  copy?: boolean;
  /**
   * Who receives the struct (e.g. "python"): the ledger lists an export of GPU
   * bytes as an `"export"` entry under this label until its deleter runs
   * (default "dlpack-export").
   */
  holder?: string;
}

/** Options of `Tensor.fromManaged`. */
export interface FromManagedOptions {
  /** Read a `DLManagedTensorVersioned` (default) or the legacy `DLManagedTensor`. */
  versioned?: boolean;
  /** Who made the struct (e.g. "python"): a GPU tensor's ledger entry is under this label (default "dlpack"). */
  owner?: string;
}

/** What {@link Tensor.webgpu} takes. */
export interface WebGPUTensorInput extends TensorLayoutInput {
  /** GPU pointer (non-zero u32) from the context's table. */
  pointer: number;
  /** webdlpack device id of the pointer. */
  deviceId: number;
  /** Set IS_COPIED: this buffer is a copy made for the consumer. */
  isCopied?: boolean;
  /** Runs exactly once when the Tensor and all its exports/retains are released (ownership). */
  onRelease?: () => void;
  /**
   * Who made it, for the context's lifetime ledger (default `"js"`; the adapters
   * pass their framework's name). A tensor with `onRelease` is listed in
   * `ctx.ledger.entries()` as a `"tensor"` entry with this owner, its device,
   * bytes and pointer until it is disposed; a scope or device loss releasing
   * that entry disposes the tensor; dropping it undisposed is a leak in `ctx.leaks()`.
   */
  owner?: string;
}

/** The frozen {@link TensorFlags} of each combination of the three flag bits (shared, made once). */
const FLAG_SETS: readonly TensorFlags[] = Array.from({ length: 8 }, (_, bits) =>
  Object.freeze({
    readOnly: (bits & DLPackFlag.READ_ONLY) !== 0,
    isCopied: (bits & DLPackFlag.IS_COPIED) !== 0,
    subbytePadded: (bits & DLPackFlag.IS_SUBBYTE_TYPE_PADDED) !== 0,
  }),
);

/** The shared frozen {@link TensorFlags} of DLPack flag `bits`. */
export function flagsOf(bits: number): TensorFlags {
  return FLAG_SETS[bits & 7]!;
}

/** The DLPack flag bits of `flags` (the inverse of {@link flagsOf}). */
export function bitsOf(flags: TensorFlags): number {
  return (
    (flags.readOnly ? DLPackFlag.READ_ONLY : 0) |
    (flags.isCopied ? DLPackFlag.IS_COPIED : 0) |
    (flags.subbytePadded ? DLPackFlag.IS_SUBBYTE_TYPE_PADDED : 0)
  );
}
