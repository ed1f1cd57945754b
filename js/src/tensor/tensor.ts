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
 *
 * The jobs around the class live beside it: types.ts (storage, flags,
 * inputs), create.ts (the factories' checks), cpu-view.ts (views and
 * copies of CPU bytes), gpu-pointer.ts (GPU pointer → GPUBuffer),
 * dlpack-export.ts (toManaged), ownership.ts (exactly-once release).
 */
import { WebDLPackError } from "../errors.js";
import { findPythonHandoff } from "../context/python-handoff.js";
import { trackGPUTensor } from "./track-tensor.js";
import type { DLDeviceDesc, DLTensorDesc, DType, TensorExtent, TypedArray, WasmHost } from "../dlpack/index.js";
import { TENSOR_BRAND, TENSOR_BRAND_VERSION } from "./brand.js";
import { copyOf, storageBuffer, viewOf } from "./cpu-view.js";
import { managedInit, typedArrayInit, wasmViewInit, webgpuInit } from "./create.js";
import { DEFAULT_TO_MANAGED, ExportCache, exportManaged } from "./dlpack-export.js";
import { resolveGPUPointer } from "./gpu-pointer.js";
import { watchOwner, type Ownership } from "./ownership.js";
import type { Release } from "../release.js";
import type {
  Storage,
  StorageKind,
  TensorFlags,
  TensorInit,
  FromManagedOptions,
  TensorLayoutInput,
  ToManagedOptions,
  TypedArrayTensorOptions,
  WebGPUTensorInput,
} from "./types.js";
import "../dispose-symbol.js"; // Symbol.dispose in the published .d.ts without lib esnext.disposable

/** A DLPack tensor on the JS side. See the module comment for storage kinds and ownership. */
export class Tensor {
  readonly #desc: DLTensorDesc;
  readonly #extent: TensorExtent;
  readonly #storage: Storage;
  readonly #flags: TensorFlags;
  #owner: Ownership | null;
  /**
   * This tensor's own hold on its owner's bytes (docs/ownership.md): its ledger entry (owning webgpu tensors:
   * the ledger's finalizer, scopes and device loss release it too), else its place on the finalizer safety net.
   */
  #hold: Release | null = null;
  #disposed = false;
  #viewBuffer: ArrayBufferLike | null = null;
  #view: TypedArray | null = null;
  /** The encoded struct of its exports that share its bytes (dlpack-export.ts), made on the first one. */
  #exportCache: ExportCache | null = null;

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
        this.#hold = trackGPUTensor(this, {
          owner: init.ledgerOwner,
          deviceId: init.desc.device.deviceId,
          bytes: init.extent.nbytes,
          pointer: init.desc.data,
          release: () => owner.release(),
        });
      } catch (err) {
        owner.release(); // ownership was passed in
        throw err;
      }
    }
    if (this.#hold === null) this.#hold = watchOwner(this, this.#owner);
  }

  #alive(): void {
    if (this.#hold?.released === true && !this.#disposed) this.dispose(); // released by a scope or device loss
    if (this.#disposed) {
      throw new WebDLPackError("DISPOSED", "this Tensor was disposed", { field: "tensor", expected: "a live Tensor" });
    }
  }

  /** Where the bytes are: `"wasm"`, `"js"` or `"webgpu"`. */
  /** The cross-copy brand (brand.ts): another copy of webdlpack on the page accepts this Tensor by it. */
  get [TENSOR_BRAND](): number {
    return TENSOR_BRAND_VERSION;
  }

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
    return this.#disposed || this.#hold?.released === true;
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
    const buffer = storageBuffer(this.#storage);
    if (this.#view !== null && this.#viewBuffer === buffer) return this.#view;
    const view = viewOf(this.#parts(), buffer);
    this.#viewBuffer = buffer;
    this.#view = view;
    return view;
  }

  /** What the CPU view and export read. */
  #parts(): { desc: DLTensorDesc; extent: TensorExtent; flags: TensorFlags } {
    return { desc: this.#desc, extent: this.#extent, flags: this.#flags };
  }

  /**
   * A C-contiguous copy of the elements in a new TypedArray (same type as
   * {@link Tensor.view}). Handles any strides, negative and zero included,
   * and misaligned data. Strided packed sub-byte tensors are UNSUPPORTED.
   */
  toArray(): TypedArray {
    this.#alive();
    return copyOf(this.#parts(), storageBuffer(this.#storage));
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
    return resolveGPUPointer(this.#desc.data, this.#desc.device.deviceId);
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
    this.#owner = null;
    const hold = this.#hold;
    this.#hold = null;
    hold?.release(); // runs the owner's release unless a scope or device loss already did
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
  static fromManaged(host: WasmHost, address: number, options: FromManagedOptions = {}): Tensor {
    return new Tensor(managedInit(host, address, options));
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
   * block; its deleter (one `host.addFunction` entry per host, made on the
   * host's first export and shared by all its exports) frees that block (and
   * a copy, if one was made) and releases the reference that kept this Tensor
   * (and its producer's bytes) alive — exactly once; later calls with the
   * same address do nothing.
   *
   * Bytes already in `host` memory, and GPU tensors, are shared (zero-copy).
   * Others (a `"js"` tensor, or a wasm tensor of another memory) are copied
   * C-contiguously into `host`'s heap and the IS_COPIED flag is set (and
   * READ_ONLY cleared: the copy is the consumer's); with `{copy: false}`
   * that is a COPY_REQUIRED error instead. INVALID_ARGUMENT (field `host`)
   * unless `host` is a WasmHost with buffer, malloc, free and addFunction.
   */
  toManaged(host: WasmHost, options: ToManagedOptions = DEFAULT_TO_MANAGED): number {
    this.#alive();
    if (this.#exportCache === null) this.#exportCache = new ExportCache();
    return exportManaged(this, this.#desc, this.#storage, this.#flags, this.#owner, host, options, this.#exportCache);
  }

  /**
   * A `"js"` tensor over a TypedArray's (or ArrayBuffer's) bytes, no copy.
   * `dtype` defaults to the array's own (Float32Array → float32, …) and is
   * required for an ArrayBuffer or DataView; for a TypedArray it must be a
   * dtype stored as that array's elements unless `reinterpret: true` (else
   * BAD_DTYPE). `shape` defaults to 1-D and must cover exactly the array's
   * bytes (else BAD_SHAPE). `readOnly` / `isCopied` set the READ_ONLY /
   * IS_COPIED flags (e.g. a readback made for the consumer is `isCopied`).
   * With `onRelease` the tensor owns the bytes: the hook runs exactly once,
   * on dispose (or garbage collection) after every {@link Tensor.retain}
   * hold — and before the error if the input is refused.
   * A detached (transferred) ArrayBuffer is an INVALID_ARGUMENT error.
   */
  static fromTypedArray(array: ArrayBufferView | ArrayBuffer, options: TypedArrayTensorOptions = {}): Tensor {
    return new Tensor(typedArrayInit(array, options));
  }

  /**
   * A `"wasm"` tensor over bytes already in `host` memory, no copy and no
   * ownership (the caller keeps the memory alive). Every reachable byte
   * must be inside memory. A `host` without a memory buffer, or an `input`
   * that is not an object, is INVALID_ARGUMENT naming it.
   */
  static wasmView(host: WasmHost, input: TensorLayoutInput & { data: number }): Tensor {
    return new Tensor(wasmViewInit(host, input));
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
    return new Tensor(webgpuInit(input));
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
    return owner.hold();
  }
}
