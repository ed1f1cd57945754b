/**
 * The JS-side tensor every part of webdlpack hands around.
 *
 * A Tensor is a DLPack description (device, dtype, shape, strides,
 * byte offset, data) plus where its bytes are:
 *   - `"wasm"`:   in a {@link WasmHost}'s linear memory at address `data`;
 *   - `"js"`:     in a JS ArrayBuffer outside any wasm heap (`data` is the byte offset in it);
 *   - `"webgpu"`: in a GPUBuffer named by the GPU pointer `data` (a non-zero u32)
 *                 on webdlpack device `device.deviceId`, resolved lazily through
 *                 the page context (`getContext().gpuPointerToBuffer`).
 *
 * Ownership: a Tensor made by {@link Tensor.fromManaged} owns the managed
 * struct (one made by {@link Tensor.webgpu} with `onRelease` owns its GPU
 * pointer the same way) and calls its deleter (hook) exactly once — on {@link Tensor.dispose}, or
 * from a FinalizationRegistry if the Tensor is garbage-collected undisposed —
 * but never while a struct exported by {@link Tensor.toManaged} still uses
 * the same bytes. Any use after dispose is a `DISPOSED` error.
 */
import { kindOf, requireObject } from "./arguments.js";
import { checkAttached, checkElementType } from "./array-input.js";
import { WebDLPackError } from "./errors.js";
import { findPythonHandoff } from "./python-handoff.js";
import { getContext } from "./context/index.js";
import type { LedgerEntry } from "./context/ledger.js";
import { trackGPUTensor } from "./context/track-tensor.js";
import {
  DLPackFlag,
  DeviceType,
  callManagedDeleter,
  checkWasmHost,
  decodeManaged,
  deviceTypeName,
  dtypeOfTypedArray,
  formatDType,
  gatherStrided,
  isSubByte,
  itemsize,
  toAddress,
  toDType,
  typedArrayFor,
  validateTensorDesc,
  writeManagedTensor,
  writeManagedTensorVersioned,
  type DLDeviceDesc,
  type DLTensorDesc,
  type DType,
  type TensorExtent,
  type TypedArray,
  type WasmHost,
  type WasmHostMember,
} from "./dlpack/index.js";

// ---------------------------------------------------------------------------
// GPU pointer resolution (the page's context by default; replaceable for tests)

/** Turns a GPU pointer on a webdlpack device into its GPUBuffer (the context's pointer table). */
export type GPUPointerResolver = (pointer: number, deviceId: number) => GPUBuffer;

/**
 * The default resolver: the page-wide context's pointer table. Checks that
 * the pointer's device is the tensor's device (INVALID_POINTER otherwise);
 * the table itself reports unknown, stale and lost pointers.
 */
const contextResolver: GPUPointerResolver = (pointer, deviceId) => {
  const ctx = getContext();
  const info = ctx.gpuPointerInfo(pointer);
  if (info.deviceId !== deviceId) {
    throw new WebDLPackError("INVALID_POINTER", "the GPU pointer belongs to another device than the tensor says", {
      field: "tensor.device.device_id",
      value: deviceId,
      expected: `${info.deviceId} (the pointer's device)`,
    });
  }
  return ctx.gpuPointerToBuffer(pointer);
};

let gpuResolver: GPUPointerResolver = contextResolver;

/**
 * Replace how `tensor.gpuBuffer` resolves GPU pointers (for tests, or a host
 * with its own pointer table); null restores the default, the page context's
 * `gpuPointerToBuffer`.
 */
export function setGPUPointerResolver(resolver: GPUPointerResolver | null): void {
  if (resolver !== null && typeof resolver !== "function") {
    throw new WebDLPackError("INVALID_ARGUMENT", "resolver must be a function or null", {
      field: "resolver",
      value: typeof resolver,
    });
  }
  gpuResolver = resolver ?? contextResolver;
}

// ---------------------------------------------------------------------------
// Ownership of a managed struct received from a producer

/**
 * Someone's bytes this Tensor uses (a producer's managed struct, or a
 * GPU allocation with a release hook): `release` runs exactly once, when the
 * last reference — the Tensor itself or one of its exports — is released.
 */
class Ownership {
  private refs = 1;
  private done = false;
  constructor(private readonly onLastRelease: () => void) {}
  /** One more user of the producer's bytes (an export). */
  retain(): void {
    this.refs++;
  }
  /** One user fewer; the last one runs the release (exactly once overall). */
  release(): void {
    if (this.done) return;
    this.refs--;
    if (this.refs > 0) return;
    this.done = true;
    this.onLastRelease();
  }
}

/** The Ownership of a managed struct: its deleter (if not NULL) is the release. */
function managedOwnership(host: WasmHost, address: number, deleter: number): Ownership {
  return new Ownership(() => {
    if (deleter !== 0) host.callVoidPointer(deleter, address);
  });
}

const stats = { finalized: 0, finalizerErrors: 0 };

const registry = new FinalizationRegistry<Ownership>((owner) => {
  stats.finalized++;
  try {
    owner.release();
  } catch {
    stats.finalizerErrors++; // nowhere to report from a finalizer; counted for tests
  }
});

/**
 * How many owning Tensors were garbage-collected without dispose (their
 * reference then released by the safety net), and how many of those
 * deleter calls threw.
 */
export function finalizerStats(): { readonly finalized: number; readonly finalizerErrors: number } {
  return { ...stats };
}

/** Tensors kept alive by managed structs exported with toManaged, until the consumer calls the deleter. */
const liveExports = new Set<{ readonly tensor: Tensor }>();

/** Number of structs exported by {@link Tensor.toManaged} whose deleter has not run yet. */
export function liveExportCount(): number {
  return liveExports.size;
}

// ---------------------------------------------------------------------------
// The Tensor

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

type Storage =
  | { readonly kind: "wasm"; readonly host: WasmHost }
  | { readonly kind: "js"; readonly buffer: ArrayBufferLike }
  | { readonly kind: "webgpu" };

interface TensorInit {
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
}

/** WasmHost members {@link Tensor.toManaged} uses. */
const TO_MANAGED_HOST: readonly WasmHostMember[] = ["buffer", "malloc", "free", "addFunction", "removeFunction"];
/** WasmHost members {@link Tensor.fromManaged} uses (memory, and the deleter call). */
const FROM_MANAGED_HOST: readonly WasmHostMember[] = ["buffer", "callVoidPointer"];
/** WasmHost members {@link Tensor.wasmView} uses. */
const VIEW_HOST: readonly WasmHostMember[] = ["buffer"];

/** Options of {@link Tensor.toManaged}. */
export interface ToManagedOptions {
  /** Export a `DLManagedTensorVersioned` (default) or the legacy `DLManagedTensor`. */
  versioned?: boolean;
  /** Allow copying bytes that are not in `host`'s memory into its heap (default true). */
  copy?: boolean;
}

/** The frozen {@link TensorFlags} of each combination of the three flag bits (shared, made once). */
const FLAG_SETS: readonly TensorFlags[] = Array.from({ length: 8 }, (_, bits) =>
  Object.freeze({
    readOnly: (bits & DLPackFlag.READ_ONLY) !== 0,
    isCopied: (bits & DLPackFlag.IS_COPIED) !== 0,
    subbytePadded: (bits & DLPackFlag.IS_SUBBYTE_TYPE_PADDED) !== 0,
  }),
);

function flagsOf(bits: number): TensorFlags {
  return FLAG_SETS[bits & 7]!;
}

/** A DLPack tensor on the JS side. See the module comment for storage kinds and ownership. */
export class Tensor {
  readonly #desc: DLTensorDesc;
  readonly #extent: TensorExtent;
  readonly #storage: Storage;
  readonly #flags: TensorFlags;
  #owner: Ownership | null;
  /** Ledger entry of this tensor's own hold (owning webgpu tensors); releasing it releases the hold. */
  #ledger: LedgerEntry | null = null;
  #disposed = false;
  #viewBuffer: ArrayBufferLike | null = null;
  #view: TypedArray | null = null;

  private constructor(init: TensorInit) {
    this.#desc = init.desc;
    this.#extent = init.extent;
    this.#storage = init.storage;
    this.#flags = init.flags;
    this.#owner = init.owner;
    if (this.#owner === null) return;
    if (init.ledgerOwner !== undefined) {
      const owner = this.#owner;
      try {
        // The ledger's finalizer (not `registry`) then releases a dropped tensor and reports the leak.
        this.#ledger = trackGPUTensor(this, {
          owner: init.ledgerOwner, deviceId: init.desc.device.deviceId, bytes: init.extent.nbytes, pointer: init.desc.data,
          release: () => owner.release(),
        });
      } catch (err) {
        owner.release(); // ownership was passed in
        throw err;
      }
    }
    if (this.#ledger === null) registry.register(this, this.#owner, this);
  }

  #alive(): void {
    if (this.#ledger?.released === true && !this.#disposed) this.dispose(); // released by a scope or device loss
    if (this.#disposed) {
      throw new WebDLPackError("DISPOSED", "this Tensor was disposed", { field: "tensor", expected: "a live Tensor" });
    }
  }

  /** Where the bytes are: `"wasm"`, `"js"` or `"webgpu"`. */
  get storage(): StorageKind {
    this.#alive();
    return this.#storage.kind;
  }
  /** The device (`kDLCPU` for wasm and js storage, `kDLWebGPU` for webgpu). */
  get device(): DLDeviceDesc {
    this.#alive();
    return this.#desc.device;
  }
  /** Element type. */
  get dtype(): DType {
    this.#alive();
    return this.#desc.dtype;
  }
  /** Number of dimensions. */
  get ndim(): number {
    this.#alive();
    return this.#desc.ndim;
  }
  /** Extents. */
  get shape(): readonly number[] {
    this.#alive();
    return this.#desc.shape;
  }
  /** Strides in elements, or null for C-contiguous. */
  get strides(): readonly number[] | null {
    this.#alive();
    return this.#desc.strides;
  }
  /** Bytes from `data` to the first element. */
  get byteOffset(): number {
    this.#alive();
    return this.#desc.byteOffset;
  }
  /** wasm address (wasm), byte offset into the ArrayBuffer (js), or GPU pointer (webgpu); unsigned. */
  get data(): number {
    this.#alive();
    return this.#desc.data;
  }
  /** DLPack flags. */
  get flags(): TensorFlags {
    this.#alive();
    return this.#flags;
  }
  /** Number of elements. */
  get size(): number {
    this.#alive();
    return this.#extent.count;
  }
  /** Bytes the elements take stored contiguously (packed for sub-byte dtypes unless padded). */
  get nbytes(): number {
    this.#alive();
    return this.#extent.nbytes;
  }
  /** True if the elements are C-contiguous (null strides, or strides equal to row-major ones). */
  get isContiguous(): boolean {
    this.#alive();
    return this.#extent.contiguous;
  }
  /** The WasmHost of a `"wasm"` tensor, else null. */
  get host(): WasmHost | null {
    this.#alive();
    return this.#storage.kind === "wasm" ? this.#storage.host : null;
  }
  /** True once {@link Tensor.dispose} ran (or the ledger released it: scope end, device loss). */
  get disposed(): boolean {
    return this.#disposed || this.#ledger?.released === true;
  }

  #buffer(): ArrayBufferLike {
    const s = this.#storage;
    if (s.kind === "webgpu") {
      throw new WebDLPackError("UNSUPPORTED", "the bytes of a WebGPU tensor are on the GPU; use gpuBuffer", {
        field: "tensor.storage",
        value: "webgpu",
        expected: "a wasm or js tensor",
      });
    }
    return s.kind === "wasm" ? s.host.buffer : s.buffer;
  }

  /** Guard against a JS ArrayBuffer detached or transferred since construction (wasm memory only grows). */
  #checkInside(buffer: ArrayBufferLike): void {
    if (this.#extent.count === 0) return;
    const first = this.#desc.data + this.#desc.byteOffset;
    if (first + this.#extent.lowByte < 0 || first + this.#extent.highByte > buffer.byteLength) {
      throw new WebDLPackError("OUT_OF_BOUNDS", "tensor bytes are outside the buffer (was it detached or transferred?)", {
        field: "tensor.data",
        value: this.#desc.data,
        expected: `bytes [${first + this.#extent.lowByte}, ${first + this.#extent.highByte}) inside ${buffer.byteLength}`,
      });
    }
  }

  /**
   * A TypedArray over exactly this tensor's bytes (no copy), of the type
   * {@link typedArrayFor} gives (complex: interleaved re/im; packed sub-byte:
   * a Uint8Array of the packed bytes). Re-derived whenever the memory buffer
   * changed (wasm memory growth detaches the old one) — so do not keep it
   * across calls into wasm; read `tensor.view` again.
   * @throws BAD_STRIDES if not contiguous (use {@link Tensor.toArray});
   *   UNSUPPORTED for webgpu tensors, or if the first byte is not aligned for the TypedArray
   */
  get view(): TypedArray {
    this.#alive();
    const buffer = this.#buffer();
    if (this.#view !== null && this.#viewBuffer === buffer) return this.#view;
    if (!this.#extent.contiguous) {
      throw new WebDLPackError("BAD_STRIDES", "a strided tensor has no single TypedArray view; toArray() copies it", {
        field: "tensor.strides",
        value: this.#desc.strides?.join(","),
        expected: "C-contiguous strides",
      });
    }
    const info = typedArrayFor(this.#desc.dtype, "tensor.dtype");
    const start = this.#desc.data + this.#desc.byteOffset;
    const count = this.#extent.count;
    const packed = isSubByte(this.#desc.dtype) && !this.#flags.subbytePadded;
    const length = packed ? this.#extent.nbytes : count * info.perElement;
    let view: TypedArray;
    if (count === 0) {
      view = new info.ctor(0);
    } else {
      this.#checkInside(buffer);
      if (start % info.ctor.BYTES_PER_ELEMENT !== 0) {
        throw new WebDLPackError("UNSUPPORTED", `the first element is not ${info.ctor.BYTES_PER_ELEMENT}-byte aligned for ${info.ctor.name}; toArray() copies it`, {
          field: "tensor.data + byteOffset",
          value: start,
          expected: `a multiple of ${info.ctor.BYTES_PER_ELEMENT}`,
        });
      }
      view = new info.ctor(buffer, start, length);
    }
    this.#viewBuffer = buffer;
    this.#view = view;
    return view;
  }

  /**
   * A C-contiguous copy of the elements in a new TypedArray (same type as
   * {@link Tensor.view}). Handles any strides, negative and zero included,
   * and misaligned data. Strided packed sub-byte tensors are UNSUPPORTED.
   */
  toArray(): TypedArray {
    this.#alive();
    const buffer = this.#buffer();
    const info = typedArrayFor(this.#desc.dtype, "tensor.dtype");
    const { count, nbytes, contiguous } = this.#extent;
    const out = new Uint8Array(nbytes);
    const first = this.#desc.data + this.#desc.byteOffset;
    const packed = isSubByte(this.#desc.dtype) && !this.#flags.subbytePadded;
    this.#checkInside(buffer);
    if (count > 0) {
      if (packed) {
        if (!contiguous) {
          throw new WebDLPackError("UNSUPPORTED", "strided packed sub-byte tensors cannot be copied element-wise", {
            field: "tensor.strides",
            value: this.#desc.strides?.join(","),
            expected: "contiguous strides for packed sub-byte dtypes",
          });
        }
        out.set(new Uint8Array(buffer, first, nbytes));
      } else {
        const strides = this.#desc.strides ?? null;
        const src = new Uint8Array(buffer);
        if (strides === null) out.set(src.subarray(first, first + nbytes));
        else gatherStrided(src, first, this.#desc.shape, strides, itemsize(this.#desc.dtype), out);
      }
    }
    return new info.ctor(out.buffer, 0, packed ? nbytes : count * info.perElement);
  }

  /**
   * The GPUBuffer of a webgpu tensor, resolved now (never cached: the
   * pointer may go stale) through the page context's pointer table, or the
   * resolver set with {@link setGPUPointerResolver}.
   * @throws UNSUPPORTED for CPU tensors; INVALID_POINTER if the pointer's
   *   device is not the tensor's; whatever the table throws (STALE_POINTER, DEVICE_LOST, …)
   */
  get gpuBuffer(): GPUBuffer {
    this.#alive();
    if (this.#storage.kind !== "webgpu") {
      throw new WebDLPackError("UNSUPPORTED", "only WebGPU tensors have a GPUBuffer", {
        field: "tensor.storage",
        value: this.#storage.kind,
        expected: "webgpu",
      });
    }
    return gpuResolver(this.#desc.data, this.#desc.device.deviceId);
  }

  /**
   * Stop using this tensor. For a tensor from {@link Tensor.fromManaged},
   * releases the producer's struct: its deleter runs now, or — if a struct
   * exported with {@link Tensor.toManaged} still shares these bytes — when
   * that export's deleter runs. Calling it twice is a no-op.
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#view = null;
    this.#viewBuffer = null;
    const owner = this.#owner;
    this.#owner = null;
    const entry = this.#ledger;
    this.#ledger = null;
    if (entry !== null) entry.release(); // runs owner.release() unless a scope or device loss already did
    else if (owner !== null) {
      registry.unregister(this);
      owner.release();
    }
  }

  /** Same as {@link Tensor.dispose}, for `using t = …`. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /**
   * Take a managed DLPack struct from `host` memory (ownership moves to the
   * new Tensor). Supports CPU (bytes in `host` memory) and WebGPU tensors.
   *
   * If decoding fails, the struct's deleter is still called — ownership was
   * transferred with the address — and the decode error is rethrown. (When
   * the struct itself is unreadable — NULL, misaligned or outside memory —
   * no deleter can be found, and only the error is thrown; likewise when
   * `host` is not a WasmHost: INVALID_ARGUMENT, field `host`.)
   */
  static fromManaged(host: WasmHost, address: number, options: { versioned?: boolean } = {}): Tensor {
    checkWasmHost(host, "host", FROM_MANAGED_HOST);
    requireObject(options, "options", "an object {versioned?}", "bad fromManaged options");
    const versioned = options.versioned ?? true;
    const addr = toAddress(address);
    let decoded;
    try {
      decoded = decodeManaged(host, addr, versioned);
      const t = decoded.desc.device.deviceType;
      if (t !== DeviceType.kDLCPU && t !== DeviceType.kDLWebGPU) {
        throw new WebDLPackError("BAD_DEVICE", `webdlpack tensors live on kDLCPU or kDLWebGPU, not ${deviceTypeName(t)}`, {
          field: "DLTensor.device.device_type",
          value: t,
          expected: "kDLCPU (1) or kDLWebGPU (15)",
        });
      }
    } catch (err) {
      try {
        callManagedDeleter(host, addr, { versioned });
      } catch {
        // The struct is unreadable: there is no deleter we could call.
      }
      throw err;
    }
    const { desc, extent } = decoded;
    const cpu = desc.device.deviceType === DeviceType.kDLCPU;
    return new Tensor({
      desc,
      extent,
      storage: cpu ? { kind: "wasm", host } : { kind: "webgpu" },
      flags: flagsOf(decoded.flags),
      owner: managedOwnership(host, addr, decoded.deleter),
    });
  }

  /**
   * Hand this tensor to Python: a `webdlpack.Tensor` (PyProxy) over the same
   * bytes when they live in that Pyodide's heap or on the GPU (zero-copy),
   * else over a copy with IS_COPIED set (`{copy: false}` then throws
   * COPY_REQUIRED). This tensor stays valid; Python's reference keeps the
   * bytes alive until Python drops it. Needs `await loadWebDLPack(pyodide)`
   * first; with several Pyodide instances, say which in `options.pyodide`.
   */
  toPython(options: { pyodide?: object; copy?: boolean } = {}): unknown {
    this.#alive();
    const handoff = findPythonHandoff(options.pyodide);
    return handoff.toPython(this as never, options.copy === undefined ? {} : { copy: options.copy });
  }

  /**
   * Export this tensor as a managed DLPack struct in `host` memory and
   * return its address. The struct and its shape/strides are one malloc
   * block; its deleter (a `host.addFunction` entry) frees that block (and a
   * copy, if one was made), removes itself from the table and releases the
   * reference that kept this Tensor (and its producer's bytes) alive —
   * exactly once; later calls do nothing.
   *
   * Bytes already in `host` memory, and GPU tensors, are shared (zero-copy).
   * Others (a `"js"` tensor, or a wasm tensor of another memory) are copied
   * C-contiguously into `host`'s heap and the IS_COPIED flag is set (and
   * READ_ONLY cleared: the copy is the consumer's); with `{copy: false}`
   * that is a COPY_REQUIRED error instead. INVALID_ARGUMENT (field `host`)
   * unless `host` is a WasmHost with buffer, malloc, free, addFunction and removeFunction.
   */
  toManaged(host: WasmHost, options: ToManagedOptions = {}): number {
    this.#alive();
    checkWasmHost(host, "host", TO_MANAGED_HOST);
    requireObject(options, "options", "an object {versioned?, copy?}", "bad toManaged options");
    const versioned = options.versioned ?? true;
    const desc = this.#desc;
    const s = this.#storage;
    const inHost = s.kind === "webgpu" || (s.kind === "wasm" && (s.host === host || s.host.buffer === host.buffer));
    let copyAddr = 0;
    let data = desc.data;
    let byteOffset = desc.byteOffset;
    let strides = desc.strides;
    let flags =
      (this.#flags.readOnly ? DLPackFlag.READ_ONLY : 0) |
      (this.#flags.isCopied ? DLPackFlag.IS_COPIED : 0) |
      (this.#flags.subbytePadded ? DLPackFlag.IS_SUBBYTE_TYPE_PADDED : 0);
    if (!inHost) {
      if (options.copy === false) {
        throw new WebDLPackError("COPY_REQUIRED", `the bytes are in ${s.kind === "js" ? "a JS ArrayBuffer" : "another wasm memory"}, not in this host's memory; exporting needs a copy`, {
          field: "options.copy",
          value: false,
          expected: "copy: true (default), or a tensor already in this host's memory",
        });
      }
      const bytes = this.toArray();
      copyAddr = host.malloc(Math.max(bytes.byteLength, 1)) >>> 0;
      if (copyAddr === 0) {
        throw new WebDLPackError("OUT_OF_MEMORY", `malloc(${bytes.byteLength}) failed for the copy`, {
          field: "malloc",
          value: bytes.byteLength,
        });
      }
      new Uint8Array(host.buffer, copyAddr, bytes.byteLength).set(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      data = copyAddr;
      byteOffset = 0;
      strides = null;
      flags = (flags | DLPackFlag.IS_COPIED) & ~DLPackFlag.READ_ONLY;
    }
    const owner = this.#owner;
    let structAddr = 0;
    let done = false;
    let fnIndex = 0;
    const entry = { tensor: this as Tensor };
    const deleter = (self: number): void => {
      if (done) return;
      done = true;
      liveExports.delete(entry);
      try {
        host.free(structAddr !== 0 ? structAddr : self);
        if (copyAddr !== 0) host.free(copyAddr);
        host.removeFunction(fnIndex);
      } finally {
        if (inHost && owner !== null) owner.release();
      }
    };
    try {
      fnIndex = host.addFunction(deleter);
      const input = {
        data,
        device: desc.device,
        dtype: desc.dtype,
        shape: desc.shape,
        strides,
        byteOffset,
        deleter: fnIndex,
        flags: versioned ? flags : 0,
      };
      structAddr = versioned ? writeManagedTensorVersioned(host, input) : writeManagedTensor(host, input);
    } catch (err) {
      if (fnIndex !== 0) host.removeFunction(fnIndex);
      if (copyAddr !== 0) host.free(copyAddr);
      throw err;
    }
    if (inHost && owner !== null) owner.retain();
    liveExports.add(entry);
    return structAddr;
  }

  /**
   * A `"js"` tensor over a TypedArray's (or ArrayBuffer's) bytes, no copy.
   * `dtype` defaults to the array's own (Float32Array → float32, …) and is
   * required for an ArrayBuffer or DataView; for a TypedArray it must be a
   * dtype stored as that array's elements unless `reinterpret: true` (else
   * BAD_DTYPE). `shape` defaults to 1-D and must cover exactly the array's
   * bytes (else BAD_SHAPE). `readOnly` / `isCopied` set the READ_ONLY /
   * IS_COPIED flags (e.g. a readback made for the consumer is `isCopied`).
   * A detached (transferred) ArrayBuffer is an INVALID_ARGUMENT error.
   */
  static fromTypedArray(array: ArrayBufferView | ArrayBuffer, options: TypedArrayTensorOptions = {}): Tensor {
    const isBuffer = array instanceof ArrayBuffer;
    if (!isBuffer && !ArrayBuffer.isView(array)) {
      throw new WebDLPackError("INVALID_ARGUMENT", "expected a TypedArray or ArrayBuffer", {
        field: "array", value: kindOf(array), expected: "a TypedArray (not a DataView) or an ArrayBuffer with options.dtype" });
    }
    requireObject(options, "options", "an object {shape?, dtype?, reinterpret?, readOnly?, isCopied?}", "bad fromTypedArray options");
    const buffer = isBuffer ? array : array.buffer;
    checkAttached(buffer, array);
    const dtype = options.dtype !== undefined ? toDType(options.dtype) : isBuffer ? undefined : dtypeOfTypedArray(array);
    if (dtype === undefined) {
      throw new WebDLPackError("BAD_DTYPE", "an ArrayBuffer carries no element type; pass dtype", {
        field: "dtype", value: undefined, expected: 'a dtype for the ArrayBuffer, e.g. {dtype: "float32"}' });
    }
    if (!isBuffer && options.dtype !== undefined) checkElementType(array, dtype, options.reinterpret === true);
    const offset = isBuffer ? 0 : array.byteOffset;
    const byteLength = array.byteLength;
    const size = itemsize(dtype);
    // Default 1-D: as many elements as the bytes hold (packed for sub-byte dtypes).
    const shape = options.shape ?? [isSubByte(dtype) ? Math.floor((byteLength * 8) / (dtype.bits * dtype.lanes)) : Math.floor(byteLength / size)];
    const { desc, extent } = validateTensorDesc(
      { data: offset, device: { deviceType: DeviceType.kDLCPU, deviceId: 0 }, dtype, shape },
      { allowNullData: true, field: "tensor" }, // that the shape covers exactly the array is checked below
    );
    if (extent.nbytes !== byteLength) {
      throw new WebDLPackError("BAD_SHAPE", `shape × ${formatDType(dtype)} does not cover the array`, {
        field: "shape",
        value: shape.join(","),
        expected: `a shape whose bytes equal the array's ${byteLength} (this one needs ${extent.nbytes})`,
      });
    }
    return new Tensor({
      desc,
      extent,
      storage: { kind: "js", buffer },
      flags: flagsOf((options.readOnly ? DLPackFlag.READ_ONLY : 0) | (options.isCopied ? DLPackFlag.IS_COPIED : 0)),
      owner: null,
    });
  }

  /**
   * A `"wasm"` tensor over bytes already in `host` memory, no copy and no
   * ownership (the caller keeps the memory alive). Every reachable byte
   * must be inside memory. A `host` without a memory buffer, or an `input`
   * that is not an object, is INVALID_ARGUMENT naming it.
   */
  static wasmView(host: WasmHost, input: TensorLayoutInput & { data: number }): Tensor {
    checkWasmHost(host, "host", VIEW_HOST);
    requireObject(input, "input", "an object {data, dtype, shape, strides?, byteOffset?, readOnly?}", "bad wasmView input");
    const { desc, extent } = validateTensorDesc(
      {
        data: toAddress(input.data, "data"),
        device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
        dtype: input.dtype,
        shape: input.shape,
        strides: input.strides ?? null,
        byteOffset: input.byteOffset ?? 0,
      },
      { memorySize: host.buffer.byteLength, field: "tensor" },
    );
    return new Tensor({
      desc,
      extent,
      storage: { kind: "wasm", host },
      flags: flagsOf(input.readOnly ? DLPackFlag.READ_ONLY : 0),
      owner: null,
    });
  }

  /**
   * A `"webgpu"` tensor naming GPU pointer `pointer` (non-zero u32) on
   * webdlpack device `deviceId`. The GPUBuffer is resolved lazily by
   * {@link Tensor.gpuBuffer}.
   *
   * Without `onRelease` no ownership is taken: the caller keeps the pointer
   * alive. With `onRelease` the Tensor owns it like {@link Tensor.fromManaged}
   * owns a struct: the hook runs exactly once, when the Tensor is disposed (or
   * garbage-collected undisposed) and every {@link Tensor.toManaged} export
   * and {@link Tensor.retain} hold of it has been released — typically
   * `() => getContext().freeWebGPU(pointer)`. If the description is invalid,
   * `onRelease` runs before the error is thrown (ownership was passed in).
   * An `input` that is not an object is INVALID_ARGUMENT, field `input`.
   */
  static webgpu(input: WebGPUTensorInput): Tensor {
    requireObject(input, "input", "an object {pointer, deviceId, dtype, shape, strides?, byteOffset?, onRelease?, …}", "bad Tensor.webgpu input");
    const onRelease = input.onRelease;
    if (onRelease !== undefined && typeof onRelease !== "function") {
      throw new WebDLPackError("INVALID_ARGUMENT", "onRelease must be a function", {
        field: "onRelease", value: typeof onRelease, expected: "() => void, or undefined" });
    }
    let desc: DLTensorDesc;
    let extent: TensorExtent;
    try {
      const pointer = toAddress(input.pointer, "pointer");
      if (pointer === 0) {
        throw new WebDLPackError("NULL_POINTER", "a GPU pointer is never 0", { field: "pointer", value: 0, expected: "a non-zero GPU pointer" });
      }
      ({ desc, extent } = validateTensorDesc(
        {
          data: pointer,
          device: { deviceType: DeviceType.kDLWebGPU, deviceId: input.deviceId },
          dtype: input.dtype,
          shape: input.shape,
          strides: input.strides ?? null,
          byteOffset: input.byteOffset ?? 0,
        },
        { field: "tensor" },
      ));
    } catch (err) {
      onRelease?.();
      throw err;
    }
    const flags = (input.readOnly ? DLPackFlag.READ_ONLY : 0) | (input.isCopied ? DLPackFlag.IS_COPIED : 0);
    return new Tensor({
      desc,
      extent,
      storage: { kind: "webgpu" },
      flags: flagsOf(flags),
      owner: onRelease === undefined ? null : new Ownership(onRelease),
      ledgerOwner: input.owner ?? "js",
    });
  }

  /**
   * Keep this tensor's bytes alive for one more holder (e.g. a framework
   * tensor made from it without a copy) and return that holder's release
   * (idempotent). The tensor's own release (producer deleter, `onRelease`)
   * then waits for the Tensor's dispose AND every such release. A tensor
   * that owns nothing (a plain `Tensor.webgpu`/`wasmView`) returns a release
   * that does nothing: the caller's own care keeps its bytes alive.
   */
  retain(): () => void {
    this.#alive();
    const owner = this.#owner;
    if (owner === null) return () => undefined;
    owner.retain();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      owner.release();
    };
  }
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
