/**
 * The context's transfer methods (readback, readbackInto, upload, copyBuffer,
 * clearBuffer, transferStats): argument checks against the pointer's buffer,
 * then the device's one {@link DeviceTransfers} (transfers/). The context
 * resolves pointers to entries; this file owns what happens next.
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import type { BufferEntry } from "../pointers/buffer-table.js";
import {
  hostLength,
  hostView,
  resolveRange,
  transfersFor,
  type ByteRange,
  type CopyRange,
  type HostBytes,
} from "./index.js";
import type { DeviceTransfers } from "./index.js";
import { bufferFacts } from "./buffer-facts.js";

/** The transfers of an entry's device. */
export function transfersOf(entry: BufferEntry): DeviceTransfers {
  return transfersFor(entry.device.device, entry.device.adapterInfo);
}

/** Default length: up to the requested size (an allocation's), or undefined when `range` gives one. */
function defaultLength(requestedSize: number, range: ByteRange | undefined): number | undefined {
  if (range?.byteLength !== undefined) return undefined;
  const offset = typeof range?.byteOffset === "number" ? range.byteOffset : 0;
  return Math.max(0, requestedSize - offset);
}

/** ctx.readback: bytes of the entry's buffer in a new ArrayBuffer, after all submitted work. */
export async function readbackEntry(entry: BufferEntry, range: ByteRange | undefined): Promise<ArrayBuffer> {
  const { offset, length } = resolveRange(
    range,
    bufferFacts(entry.buffer).size,
    defaultLength(entry.requestedSize, range),
  );
  return transfersOf(entry).readNew(entry.buffer, offset, length);
}

/** ctx.readbackInto: straight into the caller's memory, piece by piece, no intermediate array. */
export function readbackEntryInto(entry: BufferEntry, target: HostBytes, range: ByteRange | undefined): Promise<void> {
  // Not async: the caller (ctx.readbackInto, async) turns a throw here into its rejection; one async frame less.
  const length = range?.byteLength ?? hostLength(target, "readbackInto");
  const { offset } = resolveRange({ ...(range ?? {}), byteLength: length }, bufferFacts(entry.buffer).size, length);
  hostView(target, length); // refuse a bad target before queueing work
  return transfersOf(entry).read(entry.buffer, offset, length, (bytes, at) =>
    hostView(target, bytes.byteLength, at).set(bytes),
  );
}

/** ctx.upload: the bytes of `source` into the entry's buffer at range.byteOffset, taken before this returns. */
export function uploadEntry(
  entry: BufferEntry,
  source: HostBytes,
  range: Pick<ByteRange, "byteOffset"> | undefined,
): void {
  const length = hostLength(source, "upload");
  const { offset } = resolveRange(
    { byteOffset: range?.byteOffset ?? 0, byteLength: 0 },
    bufferFacts(entry.buffer).size,
    0,
  );
  transfersOf(entry).write(entry.buffer, offset, hostView(source, length));
}

/** ctx.copyBuffer: GPU → GPU between two entries of one device, submitted now. */
export function copyEntries(src: BufferEntry, dst: BufferEntry, range: CopyRange | undefined): void {
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
export function clearEntry(entry: BufferEntry, range: ByteRange | undefined): void {
  const { offset, length } = resolveRange(range, bufferFacts(entry.buffer).size, undefined);
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
