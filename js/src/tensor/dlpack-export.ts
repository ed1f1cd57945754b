/**
 * A tensor exported as a managed DLPack struct in a wasm host's memory
 * (`Tensor.toManaged`): shared bytes when they are in that memory or on the
 * GPU, else a copy; a deleter that runs exactly once; the exports still alive.
 *
 * Every struct exported into one host carries the same deleter: one
 * function-table entry made on the host's first export and kept with the
 * host. It finds the export by the struct's address (`self`) in the host's
 * table of live exports (address-table.ts), so an export makes no table entry.
 * Each export is a holder (docs/ownership.md) whose release the deleter calls;
 * a deleter call for an address that is not a live export (a second call)
 * finds nothing to release.
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
import type { LedgerEntry } from "../context/ledger/entry.js";
import type { Release } from "../release.js";
import { trackExport } from "../context/ledger/track-tensor.js";
import { AddressTable } from "./address-table.js";
import type { Ownership } from "./ownership.js";
import { bitsOf, type Storage, type TensorFlags, type ToManagedOptions } from "./types.js";

/** WasmHost members `Tensor.toManaged` uses. */
const TO_MANAGED_HOST: readonly WasmHostMember[] = ["buffer", "malloc", "free", "addFunction"];

/** The options `Tensor.toManaged` gets when none are given (checked once here, not per call). */
export const DEFAULT_TO_MANAGED: ToManagedOptions = Object.freeze({});

/** Number of structs exported by toManaged whose deleter has not run yet, over every host. */
let liveExports = 0;

/** Number of structs exported by `Tensor.toManaged` whose deleter has not run yet. */
export function liveExportCount(): number {
  return liveExports;
}

/**
 * One export: a holder of the tensor's bytes until the consumer calls the
 * struct's deleter, which releases it (once): the struct and its copy are
 * freed, then its hold on the tensor's owner is released — through its ledger
 * entry when it has one (GPU bytes), whose release a device loss may have run
 * already (the struct then stays readable until the deleter frees it).
 *
 * The one {@link Release} that is not a `Once`: a record is reused for
 * a later export once released, so an export allocates nothing (a new object
 * per export cost 4–9% of toManaged + deleter, bench/release-cost.mjs and docs/ownership.md).
 * That is safe because the host's live table is the only way to a record: the
 * deleter takes it out of the table before releasing it.
 */
class LiveExport implements Release {
  /** The host whose memory holds the struct; null once released. */
  host: WasmHost | null = null;
  address = 0;
  copyAddr = 0;
  /** The Tensor, kept reachable until the deleter runs. */
  tensor: object | null = null;
  /** The export's hold on the tensor's owner (null: none, e.g. a copy). */
  owner: Ownership | null = null;
  /** The ledger's "export" entry of a hold on GPU bytes (null: none); its release is the hold's. */
  entry: LedgerEntry | null = null;

  /** True once the deleter released it (until the record is reused for another export). */
  get released(): boolean {
    return this.host === null;
  }

  /** The deleter's release: free the struct (and copy), then release the hold. True if this call released. */
  release(): boolean {
    const host = this.host;
    if (host === null) return false;
    const { address, copyAddr, owner, entry } = this;
    this.host = null;
    this.tensor = null;
    this.owner = null;
    this.entry = null;
    liveExports--;
    if (spareRecords.length < MAX_SPARE_RECORDS) spareRecords.push(this);
    try {
      host.free(address);
      if (copyAddr !== 0) host.free(copyAddr);
    } finally {
      if (entry !== null) entry.release();
      else owner?.release();
    }
    return true;
  }
}

/** Released records kept for the next exports (bounded: a burst of exports does not stay in memory). */
const spareRecords: LiveExport[] = [];
const MAX_SPARE_RECORDS = 64;

/** One host's exports: its shared deleter's table index and its live exports by struct address. */
class HostExports {
  readonly live = new AddressTable<LiveExport>();
  readonly deleter: number;

  constructor(host: WasmHost) {
    this.deleter = host.addFunction((self: number) => this.live.delete(self >>> 0)?.release()) >>> 0;
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
  const entry =
    hold !== null && storage.kind === "webgpu" ? trackHolder(desc, tensor.nbytes, options.holder, hold) : null;
  const record = spareRecords.pop() ?? new LiveExport();
  record.host = host;
  record.address = structAddr;
  record.copyAddr = copyAddr;
  record.tensor = tensor;
  record.owner = hold;
  record.entry = entry;
  exports.live.set(structAddr, record);
  liveExports++;
  return structAddr;
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
): LedgerEntry | null {
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
