/**
 * The transfers room's calls (readback, readbackInto, upload, copyBuffer,
 * clearBuffer, transferStats): the pointer's entry from the pointer table,
 * argument checks against its buffer, then the device's one
 * {@link DeviceTransfers} (transfers/).
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import type { DeviceRecord, DeviceRegistry } from "../devices/registry.js";
import type { BufferEntry, BufferTable } from "../pointers/buffer-table.js";
import type { GPUPointer } from "../pointers/pointer-format.js";
import { checksInFlight, pendingBufferCheck } from "../pointers/register-check.js";
import { flushQueueUsers, queueUsers } from "./queue-users.js";
import { readOnlyPointerError } from "../pointers/read-only.js";
import {
  hostLength,
  hostView,
  resolveRange,
  transfersFor,
  type ByteRange,
  type CopyRange,
  type HostBytes,
  type ReadbackRange,
  type ReadbackTarget,
  type ReadSink,
  type TransferStats,
} from "./index.js";
import type { DeviceTransfers } from "./index.js";
import { GPUUsage } from "../ground/create.js";
import { createBufferAs, WEBDLPACK_OWNER } from "../ground/meter.js";
import type { KnownBuffer } from "../ground/buffer-facts.js";

/** The transfer calls of one context: pointers resolved in its table, devices in its registry. */
export class ContextTransfers {
  readonly #table: BufferTable;
  readonly #devices: DeviceRegistry;

  constructor(table: BufferTable, devices: DeviceRegistry) {
    this.#table = table;
    this.#devices = devices;
  }

  /**
   * `ptr`'s usable entry (pointers/buffer-table.ts) for `operation`, once every library that records GPU work on its
   * device and submits it later (tvmjs) submitted it: the transfer then queues after that work (queue-users.ts).
   */
  #entry(ptr: GPUPointer, operation: string): BufferEntry {
    const entry = this.#table.usable(ptr, operation);
    if (queueUsers !== 0) flushQueueUsers(entry.device.device);
    return entry;
  }

  /** `ctx.readback(ptr, range)`. Not async (a throw becomes the rejection): no promise hops beyond the read's own. */
  readback(ptr: GPUPointer, range?: ReadbackRange): Promise<ArrayBuffer> {
    try {
      const entry = this.#entry(ptr, "readback");
      const wait = checksInFlight === 0 ? null : pendingBufferCheck(entry.buffer, ptr, entry.device.id);
      if (wait === null) return readbackEntry(entry, range);
      return this.#afterCheck(wait, ptr, "readback").then((checked) => readbackEntry(checked, range));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `ctx.readbackInto(ptr, target, range)`. Not async (a throw becomes the rejection): no extra promise per call. */
  readbackInto(ptr: GPUPointer, target: ReadbackTarget, range?: ReadbackRange): Promise<void> {
    try {
      const entry = this.#entry(ptr, "readbackInto");
      const wait = checksInFlight === 0 ? null : pendingBufferCheck(entry.buffer, ptr, entry.device.id);
      if (wait === null) return readbackEntryInto(entry, target, range);
      return this.#afterCheck(wait, ptr, "readbackInto").then((checked) => readbackEntryInto(checked, target, range));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `ptr`'s entry once its buffer's register check (still running when the read was asked for) let it through. */
  async #afterCheck(wait: Promise<WebDLPackError | null>, ptr: GPUPointer, operation: string): Promise<BufferEntry> {
    const refused = await wait;
    if (refused !== null) throw refused;
    return this.#entry(ptr, operation);
  }

  /** {@link #entry} of a pointer webdlpack writes through: refused (BAD_FLAGS) when it is read-only (read-only.ts). */
  #writable(ptr: GPUPointer, operation: string): BufferEntry {
    const entry = this.#entry(ptr, operation);
    if (entry.readOnly === true) throw readOnlyPointerError(ptr, operation);
    return entry;
  }

  /** `ctx.upload(ptr, source, range)`. */
  upload(ptr: GPUPointer, source: ReadbackTarget, range?: Pick<ReadbackRange, "byteOffset">): void {
    const entry = this.#writable(ptr, "upload");
    uploadFrom(transfersOf(entry), entry, source, range);
  }

  /** `ctx.copyBuffer(src, dst, range)`. */
  copyBuffer(src: GPUPointer, dst: GPUPointer, range?: CopyRange): void {
    copyEntries(this.#entry(src, "copyBuffer"), this.#writable(dst, "copyBuffer"), range);
  }

  /** `ctx.clearBuffer(ptr, range)`. */
  clearBuffer(ptr: GPUPointer, range?: ReadbackRange): void {
    clearEntry(this.#writable(ptr, "clearBuffer"), range);
  }

  /**
   * Run a small upload, readback into an array and readback into a new one, and an upload and a readback with
   * wasm memory, once on device `record` (setup's new device 0), before setup resolves, through the very code of
   * ctx.upload / ctx.readbackInto / ctx.readback — the pointer's table entry included — on an untracked pointer to a
   * scratch buffer, freed and destroyed after. The uploads are below every measured size class (they change no
   * class's first-call way and make no staging); the readbacks take staging made ready at setup. A device's first copy and map, and the first pass through this
   * code after setup's measurement (unoptimized, its object shapes not yet seen), made a page's first small transfer
   * 2–4× its second (SwiftShader, Node, first calls on fresh devices); paid here, not by the page's first transfer.
   */
  async warmUp(transfers: DeviceTransfers, record: DeviceRecord): Promise<void> {
    const usage = GPUUsage.COPY_SRC | GPUUsage.COPY_DST;
    const buffer = createBufferAs(
      transfers.device,
      { size: WARM_UP_BYTES, usage, label: "webdlpack warm-up" },
      WEBDLPACK_OWNER,
    );
    let ptr: GPUPointer | undefined;
    try {
      ptr = this.#table.insert(
        {
          buffer,
          device: record,
          requestedSize: WARM_UP_BYTES,
          owned: false,
          owner: undefined,
          ownerLabel: WEBDLPACK_OWNER,
          onRelease: undefined,
          pooled: false,
          size: WARM_UP_BYTES,
          usage,
        },
        false,
        false,
      );
      const host = new Uint8Array(WARM_UP_BYTES);
      this.upload(ptr, host.subarray(0, WARM_UP_UPLOAD_BYTES));
      await this.readbackInto(ptr, host);
      await this.readback(ptr);
      // Wasm memory too (Python's and C's transfers, and pages that keep tensors there): its own checks and views.
      if (typeof WebAssembly === "object") {
        const wasm = { memory: new WebAssembly.Memory({ initial: 1 }), address: 0, byteLength: WARM_UP_BYTES };
        this.upload(ptr, { ...wasm, byteLength: WARM_UP_UPLOAD_BYTES });
        await this.readbackInto(ptr, wasm);
      }
    } finally {
      if (ptr !== undefined) this.#table.free(ptr);
      buffer.destroy();
    }
    await transfers.settleStaging(); // setup leaves no staging work to run during the page's first transfer
  }

  /** `ctx.transferStats(deviceId)`. */
  transferStats(deviceId = 0): TransferStats {
    const record = this.#devices.record(deviceId);
    return transfersFor(record.device, record.adapterInfo).stats();
  }
}

/**
 * The transfers of an entry's device, kept on the entry after its first transfer (a property load instead of a
 * WeakMap lookup through the device record); asked for again once that object was released (device unregistered).
 */
function transfersOf(entry: BufferEntry): DeviceTransfers {
  const kept = entry.transfers as DeviceTransfers | undefined;
  if (kept !== undefined && !kept.released) return kept;
  const found = transfersFor(entry.device.device, entry.device.adapterInfo);
  entry.transfers = found;
  return found;
}

/** Default length: up to the requested size (an allocation's), or undefined when `range` gives one. */
function defaultLength(requestedSize: number, range: ByteRange | undefined): number | undefined {
  if (range?.byteLength !== undefined) return undefined;
  const offset = typeof range?.byteOffset === "number" ? range.byteOffset : 0;
  return Math.max(0, requestedSize - offset);
}

/** ctx.readback: bytes of the entry's buffer in a new ArrayBuffer, after all submitted work (throws: see readbackInto). */
function readbackEntry(entry: BufferEntry, range: ByteRange | undefined): Promise<ArrayBuffer> {
  // The common call, the whole allocation: its requested size (never above the buffer's), nothing to resolve.
  if (range === undefined) return transfersOf(entry).readNewKnown(entry, 0, entry.requestedSize);
  const { offset, length } = resolveRange(range, entry.size, defaultLength(entry.requestedSize, range));
  return transfersOf(entry).readNewKnown(entry, offset, length);
}

/** ctx.readbackInto: straight into the caller's memory, piece by piece, no intermediate array. */
function readbackEntryInto(entry: BufferEntry, target: HostBytes, range: ByteRange | undefined): Promise<void> {
  return readInto(transfersOf(entry), entry, target, range);
}

/** {@link readbackEntryInto} of `source` on the device of `transfers` (also the setup's warm-up). */
function readInto(
  transfers: DeviceTransfers,
  source: KnownBuffer,
  target: HostBytes,
  range: ByteRange | undefined,
): Promise<void> {
  // Not async: the caller (ctx.readbackInto) turns a throw here into its rejection; one async frame less.
  if (range === undefined && ArrayBuffer.isView(target) && target.byteLength <= source.size) {
    // The common call, a whole view from byte 0: nothing to resolve (the sink checks the view per piece).
    return transfers.readKnown(source, 0, target.byteLength, sinkInto(target));
  }
  const wasm = range === undefined ? wholeWasmSink(target, source.size) : null;
  if (wasm !== null) return transfers.readKnown(source, 0, target.byteLength, wasm);
  const length = range?.byteLength ?? hostLength(target, "readbackInto");
  let offset = 0;
  // Wasm memory, whole (the common call from Python and C): nothing to resolve when it fits.
  if (range !== undefined || length > source.size) {
    const whole = range === undefined ? { byteLength: length } : { ...range, byteLength: length };
    offset = resolveRange(whole, source.size, length).offset;
  }
  hostView(target, length); // refuse a bad target before queueing work
  return transfers.readKnown(source, offset, length, sinkInto(target));
}

/**
 * The sink of the common wasm target — `{memory, address, byteLength}` with a WebAssembly.Memory, an integer address
 * and a safe-integer length no longer than the source, inside the memory — read whole from byte 0 (Python's and C's
 * readbacks): checked with one read of the memory's buffer and no view made. {@link hostLength} and
 * {@link hostView}'s checks and view cost 5–6 µs of a 1 KiB readback where the code runs cold (SwiftShader, Node,
 * bench/gpu/small-readback.mjs-style variants: a hand-written readback 130 µs, with hostView before it 136 µs).
 * Null for anything else: the general path checks it, with its typed errors.
 */
function wholeWasmSink(target: HostBytes, sourceSize: number): ReadSink | null {
  const { memory, address, byteLength } = target as { memory?: unknown; address?: unknown; byteLength?: unknown };
  if (typeof WebAssembly === "undefined" || !(memory instanceof WebAssembly.Memory)) return null;
  if (typeof address !== "number" || !Number.isInteger(address) || typeof byteLength !== "number") return null;
  if (!Number.isSafeInteger(byteLength) || byteLength < 0 || byteLength > sourceSize) return null;
  const start = address >>> 0;
  if (start + byteLength > memory.buffer.byteLength) return null;
  return memorySink(memory, start);
}

/**
 * The sink into wasm memory from `start`, a range already checked: a view of the memory's current buffer per piece
 * (memory may grow between pieces, never shrink, so the range stays inside it).
 */
function memorySink(memory: WebAssembly.Memory, start: number): ReadSink {
  return (bytes, at) => new Uint8Array(memory.buffer, start + at, bytes.byteLength).set(bytes);
}

/**
 * Where a readback's pieces land in `target` (checked by {@link hostView} already): a Uint8Array takes them as they
 * are; a WebAssembly.Memory range through a view of its current buffer made per piece (memory may grow between
 * pieces, never shrink: the range checked stays inside it), the memory and address as they were at the call; other
 * targets through {@link hostView} per piece, which checks again.
 */
function sinkInto(target: HostBytes): ReadSink {
  if (target instanceof Uint8Array) return viewSink(target);
  if (
    !ArrayBuffer.isView(target) &&
    typeof WebAssembly !== "undefined" &&
    target.memory instanceof WebAssembly.Memory
  ) {
    return memorySink(target.memory, target.address >>> 0);
  }
  return (bytes, at) => hostView(target, bytes.byteLength, at).set(bytes);
}

/** The sink of a Uint8Array target: the bytes as they are, after the size check {@link hostView} makes (a detached or shrunk view throws its typed error). */
function viewSink(target: Uint8Array): ReadSink {
  return (bytes, at) => {
    if (target.byteLength < at + bytes.byteLength) hostView(target, bytes.byteLength, at);
    target.set(bytes, at);
  };
}

/** ctx.upload: the bytes of `source` into `target` at range.byteOffset, taken before this returns (also the warm-up). */
function uploadFrom(
  transfers: DeviceTransfers,
  target: KnownBuffer,
  source: HostBytes,
  range: Pick<ByteRange, "byteOffset"> | undefined,
): void {
  if (range === undefined && source instanceof Uint8Array) {
    transfers.upload(target, 0, source); // the common call: from byte 0 (upload checks the fit), the view as it is
    return;
  }
  const length = hostLength(source, "upload");
  const { offset } = resolveRange({ byteOffset: range?.byteOffset ?? 0, byteLength: 0 }, target.size, 0);
  transfers.upload(target, offset, hostView(source, length));
}

/** Bytes of the warm-up's readback: this small, it takes the read staging made ready at setup (none is made). */
const WARM_UP_BYTES = 64 * 1024;
/** Bytes of the warm-up's upload: below every size class setup measured, a plain writeBuffer that changes nothing. */
const WARM_UP_UPLOAD_BYTES = 1024;

/** ctx.copyBuffer: GPU → GPU between two entries of one device, submitted now. */
function copyEntries(src: BufferEntry, dst: BufferEntry, range: CopyRange | undefined): void {
  if (range !== undefined && (range === null || typeof range !== "object")) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad copyBuffer range", {
      field: "range",
      value: describeValue(range),
      expected: "an object {srcOffset?, dstOffset?, byteLength?} or undefined",
    });
  }
  if (src.device !== dst.device) {
    throw new WebDLPackError("BAD_DEVICE", "a GPU copy stays on one device", {
      field: "dst",
      value: dst.device.id,
      expected: `a pointer on device ${src.device.id} (the source's)`,
    });
  }
  const srcOffset = checkedCount(range?.srcOffset ?? 0, "srcOffset");
  const dstOffset = checkedCount(range?.dstOffset ?? 0, "dstOffset");
  const length = checkedCount(range?.byteLength ?? Math.max(0, src.requestedSize - srcOffset), "byteLength");
  transfersOf(src).copy(src.buffer, srcOffset, dst.buffer, dstOffset, length);
}

/** ctx.clearBuffer: zero a byte range (default: the whole buffer), submitted now. */
function clearEntry(entry: BufferEntry, range: ByteRange | undefined): void {
  const { offset, length } = resolveRange(range, entry.size, undefined);
  transfersOf(entry).clear(entry.buffer, offset, length);
}

function checkedCount(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", `bad ${field}`, {
      field,
      value: describeValue(value),
      expected: "a safe integer >= 0",
    });
  }
  return value;
}
