/**
 * The records of `Tensor.toManaged`'s exports, by host (dlpack-export.ts
 * writes the structs): each export is a holder (docs/ownership.md) whose
 * release the struct's deleter calls, once.
 *
 * Every struct exported into one host carries the same deleter: one
 * function-table entry made on the host's first export and kept with the
 * host. It finds the export by the struct's address (`self`) in the host's
 * table of records by block address (address-table.ts), so an export makes no
 * table entry; a deleter call for an address that is not a live export (a
 * second call, an address it never gave out) finds nothing to release.
 *
 * Blocks whose deleter ran are kept by the host, each with its record, for the
 * next export of their size (a few, small ones) instead of going back to
 * `free`: an export then makes no malloc and no table entry, its deleter no
 * free. The deleter is the only way a consumer gives a block back.
 */
import { checkWasmHost, type WasmHost, type WasmHostMember } from "../dlpack/index.js";
import { mallocManaged, writeTemplate, type ManagedTemplate } from "../dlpack/write.js";
import type { TrackedEntry } from "../context/ledger/entry.js";
import type { Release } from "../release.js";
import { AddressTable } from "./address-table.js";
import type { Ownership } from "./ownership.js";

/** WasmHost members `Tensor.toManaged` uses. */
const TO_MANAGED_HOST: readonly WasmHostMember[] = ["buffer", "malloc", "free", "addFunction"];

/** Number of structs exported by toManaged whose deleter has not run yet, over every host. */
let liveExports = 0;

/** Number of structs exported by `Tensor.toManaged` whose deleter has not run yet. */
export function liveExportCount(): number {
  return liveExports;
}

/**
 * Free the struct blocks `host` keeps for later exports (`Tensor.toManaged` keeps up to
 * 16 blocks of at most 512 bytes per host once their deleter ran, instead of freeing them);
 * returns how many were freed. Exports still alive are not touched.
 */
export function trimExportBlocks(host: WasmHost): number {
  const exports = typeof host === "object" && host !== null ? hosts.get(host) : undefined;
  return exports === undefined ? 0 : exports.trim();
}

/**
 * One export: a holder of the tensor's bytes until the consumer calls the
 * struct's deleter, which releases it (once): the struct is given back to its
 * host (kept for a later export, or freed) and its copy freed, then its hold
 * on the tensor's owner is released — through its ledger entry when it has one
 * (GPU bytes), whose release a device loss may have run already (the struct
 * then stays readable until the deleter gives it back).
 *
 * The one {@link Release} that is not a `Once`: a record is reused for a later
 * export once released, so an export allocates nothing (a new object per
 * export cost 4–9% of toManaged + deleter, bench/release-cost.mjs and
 * docs/ownership.md). A record the host keeps keeps its block, and its place
 * in the host's table by that block's address: a deleter call for it while it
 * is released finds it released and does nothing. Any other record leaves the
 * table when released, before it is reused.
 */
export class LiveExport implements Release {
  /** The exports of the host whose memory holds the struct; null while released. */
  exports: HostExports | null = null;
  /** The struct block's address. */
  address = 0;
  /** The block's size when the host may keep it (with this record) for a later export, else 0: freed. */
  blockBytes = 0;
  copyAddr = 0;
  /** The Tensor, kept reachable until the deleter runs. */
  tensor: object | null = null;
  /** The export's hold on the tensor's owner (null: none, e.g. a copy). */
  owner: Ownership | null = null;
  /** The ledger's "export" entry of a hold on GPU bytes (null: none); its release is the hold's. */
  entry: TrackedEntry | null = null;
  /** Frees the read-only pointer the struct names, made for this export (a READ_ONLY GPU tensor's), else null. */
  lent: (() => void) | null = null;

  /** Make this released record the live export of its block, holding `tensor` (and `owner`, through `entry` if any). */
  open(
    exports: HostExports,
    copyAddr: number,
    tensor: object,
    owner: Ownership | null,
    entry: TrackedEntry | null,
    lent: (() => void) | null = null,
  ): void {
    this.exports = exports;
    this.copyAddr = copyAddr;
    this.tensor = tensor;
    this.owner = owner;
    this.entry = entry;
    this.lent = lent;
    liveExports++;
  }

  /** True once the deleter released it (until the record is reused for another export). */
  get released(): boolean {
    return this.exports === null;
  }

  /** The deleter's release: give back the struct (and free the copy), then release the hold. True if this call released. */
  release(): boolean {
    const exports = this.exports;
    if (exports === null) return false;
    const { copyAddr, owner, entry, lent } = this;
    this.exports = null;
    this.tensor = null;
    this.owner = null;
    this.entry = null;
    this.lent = null;
    liveExports--;
    try {
      exports.giveBack(this);
      if (copyAddr !== 0) exports.host.free(copyAddr);
    } finally {
      lent?.(); // (it reports its own failure: never throws)
      if (entry !== null) entry.release();
      else owner?.release();
    }
    return true;
  }
}

/** Released records without a block, kept for the next exports (bounded: a burst of exports does not stay in memory). */
const spareRecords: LiveExport[] = [];
const MAX_SPARE_RECORDS = 64;

/** Records with their struct blocks one host keeps for later exports, at most this many over all sizes. */
const MAX_KEPT_BLOCKS = 16;
/** Only blocks up to this size are kept (a versioned struct of up to 28 dimensions); bigger ones are freed. */
const MAX_KEPT_BLOCK_BYTES = 512;

/**
 * One host's exports: its shared deleter's table index, its export records by
 * struct address (live ones, and released ones it keeps with their blocks for
 * later exports of that block size), and a view of its memory to write them.
 */
export class HostExports {
  readonly blocks = new AddressTable<LiveExport>();
  readonly deleter: number;
  /** Released records with their blocks, by block size / 8. */
  readonly #kept: LiveExport[][] = [];
  #keptCount = 0;
  /** Its memory as words, replaced when an address lies past its end (grown memory; a detached view has length 0). */
  #heap: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

  constructor(readonly host: WasmHost) {
    this.deleter = host.addFunction((self: number) => this.blocks.get(self >>> 0)?.release()) >>> 0;
  }

  /**
   * A released record whose block holds `template`: a kept one with a block of its size, else one
   * with a new block (malloc'd; in the table from now on). The caller makes it live.
   */
  place(template: ManagedTemplate, versioned: boolean): LiveExport {
    const bytes = template.bytes;
    const kept = this.#kept[bytes >>> 3];
    let record: LiveExport;
    if (kept !== undefined && kept.length > 0) {
      record = kept.pop()!;
      this.#keptCount--;
    } else {
      const address = mallocManaged(this.host, bytes, versioned);
      record = spareRecords.pop() ?? new LiveExport();
      record.address = address;
      record.blockBytes = bytes;
      this.blocks.set(address, record);
    }
    const address = record.address;
    let heap = this.#heap;
    if (address + bytes > heap.byteLength) {
      const buffer = this.host.buffer; // after malloc, which may have grown memory
      heap = this.#heap = new Uint32Array(buffer, 0, buffer.byteLength >>> 2);
    }
    writeTemplate(heap, address, template);
    return record;
  }

  /** A released record with `address`, a block malloc'd and written by the caller (a copy's struct): in the table. */
  adopt(address: number): LiveExport {
    const record = spareRecords.pop() ?? new LiveExport();
    record.address = address;
    record.blockBytes = 0;
    this.blocks.set(address, record);
    return record;
  }

  /** Take back a record whose deleter ran: kept with its block when there is room, else out of the table, block freed. */
  giveBack(record: LiveExport): void {
    const bytes = record.blockBytes;
    if (bytes !== 0 && bytes <= MAX_KEPT_BLOCK_BYTES && this.#keptCount < MAX_KEPT_BLOCKS) {
      let kept = this.#kept[bytes >>> 3];
      if (kept === undefined) {
        kept = [];
        this.#kept[bytes >>> 3] = kept;
      }
      kept.push(record);
      this.#keptCount++;
    } else {
      this.#drop(record);
    }
  }

  /** Free every kept block; returns how many. */
  trim(): number {
    const count = this.#keptCount;
    for (const kept of this.#kept) while (kept !== undefined && kept.length > 0) this.#drop(kept.pop()!);
    this.#keptCount = 0;
    return count;
  }

  /** A released record leaves the table and its block is freed. */
  #drop(record: LiveExport): void {
    const address = record.address;
    this.blocks.delete(address);
    if (spareRecords.length < MAX_SPARE_RECORDS) spareRecords.push(record);
    this.host.free(address);
  }
}

/** Each host's exports, made on its first export (after checking the host once). */
const hosts = new WeakMap<object, HostExports>();

/** `host`'s exports; on its first export, INVALID_ARGUMENT (field `host`) unless it has what toManaged uses. */
export function exportsOf(host: WasmHost): HostExports {
  const known = typeof host === "object" && host !== null ? hosts.get(host) : undefined;
  if (known !== undefined) return known;
  checkWasmHost(host, "host", TO_MANAGED_HOST);
  const made = new HostExports(host);
  hosts.set(host, made);
  return made;
}
