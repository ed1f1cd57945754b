/**
 * A tensor exported as a managed DLPack struct in a wasm host's memory
 * (`Tensor.toManaged`): shared bytes when they are in that memory or on the
 * GPU, else a copy; a deleter that runs exactly once; the exports still alive.
 *
 * The struct block of a shared-bytes export is the same bytes every time but
 * for the two words pointing at its own shape and strides: a Tensor keeps it
 * encoded ({@link ExportCache}, write.ts `managedTemplate`) and each export
 * copies it into a block its host gives (a kept one, or a new one). Each export
 * is a record its host keeps until the deleter releases it (export-records.ts).
 */
import { reportUncaught, WebDLPackError } from "../errors.js";
import { requireObject } from "../arguments.js";
import { getContext } from "../context/index.js";
import { DLPackFlag, writeManagedTrusted, type DLTensorDesc, type TypedArray, type WasmHost } from "../dlpack/index.js";
import { managedTemplate, type ManagedTemplate } from "../dlpack/write.js";
import type { TrackedEntry } from "../context/ledger/entry.js";
import { trackExport } from "./track-tensor.js";
import { exportsOf, type HostExports, type LiveExport } from "./export-records.js";
import type { Ownership } from "./ownership.js";
import { bitsOf, type Storage, type TensorFlags, type ToManagedOptions } from "./types.js";

/** The options `Tensor.toManaged` gets when none are given (checked once here, not per call). */
export const DEFAULT_TO_MANAGED: ToManagedOptions = Object.freeze({});

/** What an export needs of the Tensor besides its fields: a C-contiguous copy of its elements. */
export interface ExportedTensor {
  toArray(): TypedArray;
  readonly nbytes: number;
}

/**
 * A read-only pointer to the buffer of a READ_ONLY WebGPU tensor, for one export (context/pointers/read-only.ts): its
 * consumer — Python, C, JS importing the struct — can read through it and never write, while the pointer the tensor
 * was made over keeps its owner's writes. Null where the export names the tensor's own pointer as before: it is
 * read-only already, not the page context's (a resolver of the page's own), on a lost device, or the context is
 * an older copy's that has no read-only pointers.
 */
function lendReadOnly(desc: DLTensorDesc): { pointer: number; free: () => void } | null {
  const ctx = getContext();
  let info: { deviceId: number; deviceLost: boolean; readOnly?: boolean };
  try {
    info = ctx.gpuPointerInfo(desc.data);
  } catch {
    return null; // not a pointer of the page context: the page's resolver knows it (gpu-pointer.ts)
  }
  if (info.readOnly !== false || info.deviceLost) return null;
  const pointer = ctx.registerGPUBuffer(ctx.gpuPointerToBuffer(desc.data), {
    readOnly: true,
    tracked: false, // the export's own ledger entry lists the consumer
    deviceId: info.deviceId,
    owner: "read-only export",
  });
  const free = (): void => {
    try {
      ctx.freeWebGPU(pointer);
    } catch (err) {
      reportUncaught(err, "freeing a read-only export's pointer"); // a deleter never throws into its consumer
    }
  };
  return { pointer, free };
}

/** Copy `tensor`'s elements into a new block of `host`'s heap; returns its address. */
function copyIntoHost(tensor: ExportedTensor, host: WasmHost): number {
  const bytes = tensor.toArray();
  const copyAddr = host.malloc(Math.max(bytes.byteLength, 1)) >>> 0;
  if (copyAddr === 0) {
    throw new WebDLPackError("OUT_OF_MEMORY", `malloc(${bytes.byteLength}) failed for the copy`, {
      field: "malloc",
      value: bytes.byteLength,
      expected: "malloc to return a non-zero address",
    });
  }
  new Uint8Array(host.buffer, copyAddr, bytes.byteLength).set(
    new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  );
  return copyAddr;
}

/**
 * What a Tensor keeps of its exports that shared its bytes: the host and
 * struct kind of the last one and its encoded block (the Tensor's description
 * never changes, nor does a host's deleter), so the next such export into
 * that host only copies the block.
 */
export class ExportCache {
  host: WasmHost | null = null;
  exports: HostExports | null = null;
  versioned = true;
  template: ManagedTemplate | null = null;
}

/**
 * Write the managed struct for `tensor` (its description, storage, flags and
 * owner given) into `host` memory and return its address (see `Tensor.toManaged`);
 * `cache` is the Tensor's own.
 */
export function exportManaged(
  tensor: ExportedTensor,
  desc: DLTensorDesc,
  storage: Storage,
  tensorFlags: TensorFlags,
  owner: Ownership | null,
  host: WasmHost,
  options: ToManagedOptions,
  cache: ExportCache,
): number {
  const known = cache.template !== null && cache.host === host; // shared bytes with this host before
  const exports = known ? cache.exports! : exportsOf(host);
  if (options !== DEFAULT_TO_MANAGED)
    requireObject(options, "options", "an object {versioned?, copy?, holder?}", "bad toManaged options");
  const versioned = options.versioned ?? true;
  const inHost =
    known ||
    storage.kind === "webgpu" ||
    (storage.kind === "wasm" && (storage.host === host || storage.host.buffer === host.buffer));
  if (inHost && !versioned && tensorFlags.readOnly) {
    // A legacy struct has no flags: its consumer (NumPy through a legacy capsule, Python's memoryview) would write.
    throw new WebDLPackError(
      "UNSUPPORTED",
      "a READ_ONLY tensor cannot be exported as a legacy struct (it has no flags)",
      {
        field: "options.versioned",
        value: false,
        expected: "versioned: true (DLManagedTensorVersioned carries READ_ONLY), or a copy of the tensor",
      },
    );
  }
  let copyAddr = 0;
  let record: LiveExport;
  const lent = inHost && storage.kind === "webgpu" && tensorFlags.readOnly ? lendReadOnly(desc) : null;
  if (lent !== null) {
    // The struct names the read-only pointer: written for this export (the tensor's template names its own).
    try {
      const struct = { byteOffset: desc.byteOffset, strides: desc.strides, deleter: exports.deleter, versioned };
      const flags = bitsOf(tensorFlags);
      record = exports.adopt(writeManagedTrusted(host, desc, { ...struct, data: lent.pointer, flags }));
    } catch (err) {
      lent.free();
      throw err;
    }
  } else if (inHost) {
    // The Tensor's description was validated when it was made: no second validation (write.ts managedTemplate).
    let template = cache.template;
    if (!known || cache.versioned !== versioned || template === null) {
      template = managedTemplate(desc, exports.deleter, versioned ? bitsOf(tensorFlags) : 0, versioned);
      cache.host = host;
      cache.exports = exports;
      cache.versioned = versioned;
      cache.template = template;
    }
    record = exports.place(template, versioned);
  } else {
    if (options.copy === false) {
      throw new WebDLPackError(
        "COPY_REQUIRED",
        `the bytes are in ${storage.kind === "js" ? "a JS ArrayBuffer" : "another wasm memory"}, not in this host's memory; exporting needs a copy`,
        {
          field: "options.copy",
          value: false,
          expected: "copy: true (default), or a tensor already in this host's memory",
        },
      );
    }
    copyAddr = copyIntoHost(tensor, host);
    const flags = (bitsOf(tensorFlags) | DLPackFlag.IS_COPIED) & ~DLPackFlag.READ_ONLY;
    let structAddr: number;
    try {
      structAddr = writeManagedTrusted(host, desc, {
        data: copyAddr,
        byteOffset: 0,
        strides: null,
        deleter: exports.deleter,
        flags: versioned ? flags : 0,
        versioned,
      });
    } catch (err) {
      host.free(copyAddr);
      throw err;
    }
    record = exports.adopt(structAddr);
  }
  const hold = inHost ? owner : null; // a copy needs no hold on the tensor's bytes
  let entry: TrackedEntry | null = null;
  if (hold !== null) {
    hold.add();
    if (storage.kind === "webgpu") {
      try {
        entry = trackHolder(desc, tensor.nbytes, options.holder, hold);
      } catch (err) {
        exports.giveBack(record); // the struct was never handed out
        lent?.free();
        hold.release();
        throw err;
      }
    }
  }
  record.open(exports, copyAddr, tensor, hold, entry, lent === null ? null : lent.free);
  return record.address;
}

/**
 * The ledger entry of an export's hold on GPU bytes: the consumer is listed as a holder until the
 * deleter runs; the entry's release (by the deleter, or the ledger at device loss) releases the hold.
 */
function trackHolder(
  desc: DLTensorDesc,
  bytes: number,
  holder: string | undefined,
  owner: Ownership,
): TrackedEntry | null {
  return trackExport({
    owner: holder,
    deviceId: desc.device.deviceId,
    bytes,
    pointer: desc.data,
    release: () => {
      owner.release();
    },
  });
}
