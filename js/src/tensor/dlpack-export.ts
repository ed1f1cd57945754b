/**
 * A tensor exported as a managed DLPack struct in a wasm host's memory
 * (`Tensor.toManaged`): shared bytes when they are in that memory or on the
 * GPU, else a copy; a deleter that runs exactly once; the exports still alive.
 *
 * Every struct exported into one host carries the same deleter: one
 * function-table entry made on the host's first export and kept with the
 * host. It finds the export by the struct's address (`self`) in the host's
 * table of live exports (address-table.ts), so an export makes no closure and no table entry —
 * only one small record, reused after its deleter ran. A deleter call for an
 * address that is not a live export (a second call) does nothing.
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
import { MARK_RELEASED, type LedgerEntry } from "../context/ledger/entry.js";
import { trackExport } from "../context/ledger/track-tensor.js";
import { AddressTable } from "./address-table.js";
import type { Ownership } from "./ownership.js";
import { bitsOf, type Storage, type TensorFlags, type ToManagedOptions } from "./types.js";

/** WasmHost members `Tensor.toManaged` uses. */
const TO_MANAGED_HOST: readonly WasmHostMember[] = ["buffer", "malloc", "free", "addFunction"];

/** The options `Tensor.toManaged` gets when none are given (checked once here, not per call). */
export const DEFAULT_TO_MANAGED: ToManagedOptions = Object.freeze({});

/** One live export: what its deleter releases. Records are reused once released. */
interface LiveExport {
  /** The Tensor, kept alive until the deleter runs (null in a spare record). */
  tensor: object | null;
  /** The copy's block in the host's heap, or 0 when the struct shares the tensor's bytes. */
  copyAddr: number;
  /** The hold on the tensor's owner that the export took (null: none). */
  owner: Ownership | null;
  /** The ledger's "export" entry of a hold on GPU bytes (null: none). */
  entry: LedgerEntry | null;
}

/** Released records kept for the next exports (bounded: a burst of exports does not stay in memory). */
const spareRecords: LiveExport[] = [];
const MAX_SPARE_RECORDS = 64;

/** Number of structs exported by toManaged whose deleter has not run yet, over every host. */
let liveExports = 0;

/** Number of structs exported by `Tensor.toManaged` whose deleter has not run yet. */
export function liveExportCount(): number {
  return liveExports;
}

/** One host's exports: its shared deleter's table index and its live exports by struct address. */
class HostExports {
  readonly live = new AddressTable<LiveExport>();
  readonly deleter: number;

  constructor(private readonly host: WasmHost) {
    this.deleter = host.addFunction((self: number) => this.release(self)) >>> 0;
  }

  /** The deleter of every struct exported into this host: frees the export at `self` once. */
  release(self: number): void {
    const address = self >>> 0;
    const record = this.live.delete(address);
    if (record === undefined) return; // not a live export: its deleter ran already
    liveExports--;
    const { copyAddr, owner, entry } = record;
    record.tensor = null;
    record.owner = null;
    record.entry = null;
    entry?.[MARK_RELEASED]("dispose");
    if (spareRecords.length < MAX_SPARE_RECORDS) spareRecords.push(record);
    try {
      this.host.free(address);
      if (copyAddr !== 0) this.host.free(copyAddr);
    } finally {
      if (owner !== null) owner.release();
    }
  }
}

/** Each host's exports, made on its first export (after checking the host once). */
const hosts = new WeakMap<object, HostExports>();

function exportsOf(host: WasmHost): HostExports {
  const known = typeof host === "object" && host !== null ? hosts.get(host) : undefined;
  if (known !== undefined) return known;
  checkWasmHost(host, "host", TO_MANAGED_HOST);
  const made = new HostExports(host);
  hosts.set(host, made);
  return made;
}

/** What an export needs of the Tensor besides its fields: a C-contiguous copy of its elements. */
export interface ExportedTensor {
  toArray(): TypedArray;
  readonly nbytes: number;
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
 * Write the managed struct for `tensor` (its description, storage, flags and
 * owner given) into `host` memory and return its address (see `Tensor.toManaged`).
 */
export function exportManaged(
  tensor: ExportedTensor,
  desc: DLTensorDesc,
  storage: Storage,
  tensorFlags: TensorFlags,
  owner: Ownership | null,
  host: WasmHost,
  options: ToManagedOptions,
): number {
  const exports = exportsOf(host);
  if (options !== DEFAULT_TO_MANAGED)
    requireObject(options, "options", "an object {versioned?, copy?, holder?}", "bad toManaged options");
  const versioned = options.versioned ?? true;
  const inHost =
    storage.kind === "webgpu" ||
    (storage.kind === "wasm" && (storage.host === host || storage.host.buffer === host.buffer));
  let copyAddr = 0;
  let structAddr: number;
  let flags = bitsOf(tensorFlags);
  if (inHost) {
    // The Tensor's description was validated when it was made: no second validation (write.ts writeManagedTrusted).
    structAddr = writeManagedTrusted(
      host,
      desc,
      desc.data,
      desc.byteOffset,
      desc.strides,
      exports.deleter,
      versioned ? flags : 0,
      versioned,
    );
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
    flags = (flags | DLPackFlag.IS_COPIED) & ~DLPackFlag.READ_ONLY;
    try {
      structAddr = writeManagedTrusted(
        host,
        desc,
        copyAddr,
        0,
        null,
        exports.deleter,
        versioned ? flags : 0,
        versioned,
      );
    } catch (err) {
      host.free(copyAddr);
      throw err;
    }
  }
  const hold = inHost ? owner : null; // a copy needs no hold on the tensor's bytes
  if (hold !== null) hold.retain();
  const record = spareRecords.pop() ?? { tensor: null, copyAddr: 0, owner: null, entry: null };
  record.tensor = tensor;
  record.copyAddr = copyAddr;
  record.owner = hold;
  record.entry =
    hold !== null && storage.kind === "webgpu" ? trackHolder(record, desc, tensor.nbytes, options.holder) : null;
  exports.live.set(structAddr, record);
  liveExports++;
  return structAddr;
}

/**
 * The ledger entry of an export's hold on GPU bytes: the consumer is listed
 * as a holder until the deleter runs (which marks the entry released). If the
 * ledger releases it first (device loss), only the hold is dropped: the struct
 * stays readable until the consumer's deleter call frees it.
 */
function trackHolder(
  record: LiveExport,
  desc: DLTensorDesc,
  bytes: number,
  holder: string | undefined,
): LedgerEntry | null {
  return trackExport({
    owner: holder,
    deviceId: desc.device.deviceId,
    bytes,
    pointer: desc.data,
    release: () => {
      const held = record.owner;
      record.owner = null;
      record.entry = null;
      held?.release();
    },
  });
}
