/**
 * A tensor exported as a managed DLPack struct in a wasm host's memory
 * (`Tensor.toManaged`): shared bytes when they are in that memory or on the
 * GPU, else a copy; a deleter that runs exactly once; the exports still alive.
 */
import { WebDLPackError } from "../errors.js";
import { requireObject } from "../arguments.js";
import {
  DLPackFlag,
  checkWasmHost,
  writeManagedTrusted,
  type DLTensorDesc,
  type TypedArray,
  type WasmHost,
  type WasmHostMember,
} from "../dlpack/index.js";
import type { Ownership } from "./ownership.js";
import { bitsOf, type Storage, type TensorFlags, type ToManagedOptions } from "./types.js";

/** WasmHost members `Tensor.toManaged` uses. */
const TO_MANAGED_HOST: readonly WasmHostMember[] = ["buffer", "malloc", "free", "addFunction", "removeFunction"];

/** Tensors kept alive by managed structs exported with toManaged, until the consumer calls the deleter. */
const liveExports = new Set<{ readonly tensor: object }>();

/** Number of structs exported by `Tensor.toManaged` whose deleter has not run yet. */
export function liveExportCount(): number {
  return liveExports.size;
}

/** What an export reads from the Tensor. */
export interface ExportSource {
  /** The Tensor itself (kept alive until the deleter runs). */
  readonly tensor: object;
  readonly desc: DLTensorDesc;
  readonly storage: Storage;
  readonly flags: TensorFlags;
  readonly owner: Ownership | null;
  /** A C-contiguous copy of the elements (for bytes outside `host`'s memory). */
  copy(): TypedArray;
}

/** Write the managed struct for `source` into `host` memory and return its address (see `Tensor.toManaged`). */
export function exportManaged(source: ExportSource, host: WasmHost, options: ToManagedOptions): number {
  checkWasmHost(host, "host", TO_MANAGED_HOST);
  requireObject(options, "options", "an object {versioned?, copy?}", "bad toManaged options");
  const versioned = options.versioned ?? true;
  const { desc, storage: s, flags: f } = source;
  const inHost = s.kind === "webgpu" || (s.kind === "wasm" && (s.host === host || s.host.buffer === host.buffer));
  let copyAddr = 0;
  let data = desc.data;
  let byteOffset = desc.byteOffset;
  let strides = desc.strides;
  let flags = bitsOf(f);
  if (!inHost) {
    if (options.copy === false) {
      throw new WebDLPackError("COPY_REQUIRED", `the bytes are in ${s.kind === "js" ? "a JS ArrayBuffer" : "another wasm memory"}, not in this host's memory; exporting needs a copy`, {
        field: "options.copy",
        value: false,
        expected: "copy: true (default), or a tensor already in this host's memory",
      });
    }
    const bytes = source.copy();
    copyAddr = host.malloc(Math.max(bytes.byteLength, 1)) >>> 0;
    if (copyAddr === 0) {
      throw new WebDLPackError("OUT_OF_MEMORY", `malloc(${bytes.byteLength}) failed for the copy`, {
        field: "malloc",
        value: bytes.byteLength,
        expected: "malloc to return a non-zero address",
      });
    }
    new Uint8Array(host.buffer, copyAddr, bytes.byteLength).set(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    data = copyAddr;
    byteOffset = 0;
    strides = null;
    flags = (flags | DLPackFlag.IS_COPIED) & ~DLPackFlag.READ_ONLY;
  }
  const owner = source.owner;
  let structAddr = 0;
  let done = false;
  let fnIndex = 0;
  const entry = { tensor: source.tensor };
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
    // The Tensor's description was validated when it was made: no second validation (write-trusted.ts).
    structAddr = writeManagedTrusted(host, desc, data, byteOffset, strides, fnIndex, versioned ? flags : 0, versioned);
  } catch (err) {
    if (fnIndex !== 0) host.removeFunction(fnIndex);
    if (copyAddr !== 0) host.free(copyAddr);
    throw err;
  }
  if (inHost && owner !== null) owner.retain();
  liveExports.add(entry);
  return structAddr;
}
