/**
 * CPU → GPU: the one upload every caller uses (ctx.upload, Python's uploads
 * from the wasm heap, C's, the adapters').
 *
 * Synchronous: the bytes are taken before it returns, and the write is queued
 * after all work already submitted. Which way an upload goes is decided per
 * size class (the plan's `classes`, measured on the device at setup:
 * calibrate.ts): the first upload of a class on a device takes the class's
 * `cold` way, later ones its `warm` way — one `queue.writeBuffer`, or the bytes
 * in pieces (see pieceSize) through kept MAP_WRITE staging buffers that are
 * already mapped (one submit per piece, so the GPU copy of piece k overlaps the
 * CPU fill of piece k + 1). Below the smallest class: writeBuffer. A staged
 * piece takes a kept buffer of its own size class, else a larger kept one (the
 * staging setup made ready); a first upload whose pieces no kept buffer takes
 * goes in pieces of the largest kept one instead where that takes at least
 * half of it. With none ready a piece makes a new buffer only where
 * `makeStaging` (new staging measured no dearer than a first writeBuffer), else
 * the largest kept buffer takes the upload's first part and one writeBuffer
 * the rest; a class's first upload in one piece (in-process) likewise lets the
 * largest kept buffer take its first part, and new staging of the rest's size,
 * used once, the rest. Staging a class lacked is made for the next upload
 * once this one's GPU work is done. A length that is not a multiple of 4 is
 * padded with zero bytes up to the next multiple, which must fit in the
 * destination.
 */
import { WebDLPackError } from "../../errors.js";
import { GPUUsage } from "../ground/create.js";
import { bufferFacts } from "../ground/buffer-facts.js";
import { createBufferAs, WEBDLPACK_OWNER } from "../ground/meter.js";
import type { Inflight } from "./inflight.js";
import type { WriteRing } from "./staging.js";

/** The two ways of an upload: one queue.writeBuffer, or pieces through mapped staging buffers. */
export type UploadWay = "writeBuffer" | "staging";

/** One size class of uploads: from `fromBytes` up to the next class's, its way cold and warm. */
export interface UploadClass {
  /** Uploads of at least this many bytes, and below the next class's `fromBytes`, are of this class. */
  fromBytes: number;
  /** The way of the class's first upload on a device. */
  cold: UploadWay;
  /** The way of its later uploads. */
  warm: UploadWay;
  /**
   * Pieces of this many bytes when its later uploads stage (measured at setup: calibrate.ts); absent or 0, the
   * plan's pieces ({@link pieceSize}), as its first upload's staging always takes.
   */
  pieceBytes?: number;
}

/** How an upload is done (measured: bench/gpu). */
export interface WritePlan {
  /** Size classes by ascending `fromBytes` (below the first: writeBuffer). At most 31. */
  classes: readonly UploadClass[];
  /** A staged piece with no staging ready makes a new buffer (true) or goes through writeBuffer (false). */
  makeStaging: boolean;
  /** Staging pieces are at least this large … */
  minPieceBytes: number;
  /** … and at most this many (fewer, larger pieces for large uploads: fewer maps, measured faster from 64 MiB). */
  maxPieces: number;
}

/** Which path the last upload took (for the benchmark report): "mixed" when some pieces had no staging ready. */
export type UploadPath = "writeBuffer" | "staging" | "mixed";

const ceil4 = (n: number): number => Math.ceil(n / 4) * 4;

/** Throw unless `length` bytes (padded to 4) fit in `target` at `offset` and the usage allows writing. */
export function checkWritable(target: GPUBuffer, offset: number, length: number): void {
  const { usage, size } = bufferFacts(target);
  if ((usage & GPUUsage.COPY_DST) === 0) {
    throw new WebDLPackError("UNSUPPORTED", "an upload needs a buffer with COPY_DST usage", {
      field: "GPUBuffer.usage",
      value: `0x${usage.toString(16)}`,
      expected: "usage including COPY_DST (0x8)",
    });
  }
  if (offset % 4 !== 0) {
    throw new WebDLPackError("UNSUPPORTED", "WebGPU writes buffers at 4-byte aligned offsets", {
      field: "byteOffset",
      value: offset,
      expected: "a multiple of 4",
    });
  }
  if (offset + ceil4(length) > size) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the upload does not fit in the GPU buffer", {
      field: "byteOffset + byteLength (padded to 4)",
      value: offset + ceil4(length),
      expected: `<= ${size} (buffer.size)`,
    });
  }
}

/** The index of the class an upload of `length` bytes is of (-1: below the first class). */
export function classIndex(classes: readonly UploadClass[], length: number): number {
  let k = classes.length - 1;
  while (k >= 0 && length < classes[k]!.fromBytes) k--;
  return k;
}

/** The classes of a device's plan that have had an upload (one bit per class index): their next one is warm. */
export interface UploadHistory {
  warm: number;
}

/**
 * Upload `bytes` into `target` at `offset` (checked first), the way `plan` gives for its size class, cold or warm
 * by `history` (updated). Returns the path taken.
 */
export function writeRange(
  device: GPUDevice,
  ring: WriteRing,
  inflight: Inflight,
  plan: WritePlan,
  history: UploadHistory,
  target: GPUBuffer,
  offset: number,
  bytes: Uint8Array,
): UploadPath {
  checkWritable(target, offset, bytes.byteLength);
  if (inflight.lostError !== undefined) throw inflight.lostError;
  const length = bytes.byteLength;
  if (length === 0) return "writeBuffer";
  try {
    const k = length < (plan.classes[0]?.fromBytes ?? Number.POSITIVE_INFINITY) ? -1 : classIndex(plan.classes, length);
    if (k < 0) {
      writeDirect(device, target, offset, bytes);
      return "writeBuffer";
    }
    const bit = 1 << k;
    const cold = (history.warm & bit) === 0;
    history.warm |= bit;
    const { cold: coldWay, warm: warmWay, pieceBytes: warmPiece = 0 } = plan.classes[k]!;
    const planPiece = pieceSize(length, plan);
    // Later uploads of a class stage in its measured pieces (a multiple of 4), its first in the plan's — or, where no
    // kept buffer takes a piece that size but the largest kept one takes at least half the upload, in pieces of that
    // one: it takes what it can, and only the rest needs new staging. Node on the H100 stages in one piece and setup
    // keeps one 16 MiB buffer: a first upload of 20, 24 and 32 MiB made a new 32 MiB buffer, 17–24 ms against
    // 12.5–21 hand-written; in two pieces 6.8, 11.3 and 13.3 ms (bench/gpu/node.mjs --sizes, same run). Larger first
    // uploads keep the plan's pieces: many new ones against one was not measured.
    let piece = cold || warmPiece <= 0 ? planPiece : warmPiece;
    if (cold && coldWay === "staging" && !ring.hasReady(ceil4(Math.min(piece, length)))) {
      const kept = ring.largestReady();
      if (kept < piece && 2 * kept >= length) piece = kept;
    }
    let staged = 0;
    let lacking = 0;
    // A kept buffer smaller than the upload takes its first part where none of the upload's own size is ready: where no
    // new staging is made inline, and for a class's first upload in one piece (in-process) where it is.
    const skipKept = plan.makeStaging && !(cold && piece >= length);
    const kept = skipKept || ring.hasReady(ceil4(Math.min(piece, length))) ? 0 : ring.largestReady();
    if ((cold ? coldWay : warmWay) === "writeBuffer") {
      writeDirect(device, target, offset, bytes);
      lacking = 1;
    } else if (kept > 0 && kept < length) {
      // Staging wins at this size and none of its own is ready: the largest kept buffer takes the first part; the
      // rest goes through new staging of the rest's exact size used once (makeStaging, a class's first upload) or one
      // writeBuffer; the class's own staging is made after (below). Node on the H200, first upload right after setup
      // (setup keeps one 16 MiB buffer): writeBuffer whole 23.3 / 108 ms at 64 / 256 MiB against the best
      // hand-written 21.7 / 85.8 (bench/gpu/app.js); a new buffer of the whole 25.1–26.8 ms at 64 MiB, the steps of
      // the hand-written first call (24.2–25.9); the kept part and a new buffer of the rest's power-of-two class,
      // 25.2 against 24.7 (a new buffer costs its whole size: its memory is zeroed when made).
      writePiece(device, ring, target, offset, bytes.subarray(0, kept));
      if (plan.makeStaging && writeOnce(device, target, offset + kept, bytes.subarray(kept))) {
        staged = 2;
      } else {
        writeDirect(device, target, offset + kept, bytes.subarray(kept));
        staged = 1;
        lacking = 1;
      }
    } else {
      for (let at = 0; at < length; at += piece) {
        const part = bytes.subarray(at, at + piece);
        if (plan.makeStaging || ring.hasReady(ceil4(part.byteLength))) {
          writePiece(device, ring, target, offset + at, part);
          staged += 1;
        } else {
          writeDirect(device, target, offset + at, part);
          lacking += 1;
        }
      }
    }
    // Later uploads of the class stage: staging of its own size class and pieces (this one may have lacked it, or
    // taken a larger buffer) is made for them once this upload's GPU work is done.
    if (warmWay === "staging") {
      const warmPieces = warmPiece > 0 ? warmPiece : planPiece;
      const pieceBytes = ceil4(Math.min(warmPieces, length));
      const count = Math.ceil(length / warmPieces);
      if (ring.owned(pieceBytes) < count) ring.prepareSoon(pieceBytes, count);
    }
    return lacking === 0 ? "staging" : staged === 0 ? "writeBuffer" : "mixed";
  } catch (err) {
    throw inflight.failure(err, "upload");
  }
}

/** Piece size of an upload of `length` bytes: a multiple of 4, at least minPieceBytes, at most maxPieces pieces. */
export function pieceSize(length: number, plan: Pick<WritePlan, "minPieceBytes" | "maxPieces">): number {
  return Math.max(plan.minPieceBytes, Math.ceil(length / plan.maxPieces / 4) * 4);
}

/** queue.writeBuffer of whole words, then the 1–3 trailing bytes padded to a word. */
function writeDirect(device: GPUDevice, target: GPUBuffer, offset: number, bytes: Uint8Array): void {
  // dawn.node refuses views on a SharedArrayBuffer (wasm memory of threaded builds): copy those.
  const src = bytes.buffer instanceof ArrayBuffer ? bytes : bytes.slice();
  const whole = src.byteLength - (src.byteLength % 4);
  if (whole > 0) device.queue.writeBuffer(target, offset, src.buffer as ArrayBuffer, src.byteOffset, whole);
  if (whole < src.byteLength) {
    const tail = new Uint8Array(4);
    tail.set(src.subarray(whole));
    device.queue.writeBuffer(target, offset + whole, tail);
  }
}

/**
 * `bytes` through a new mapped staging buffer of their size (padded to 4), used once and destroyed once its copy ran
 * (a class's first upload: the ring's staging is sized by power-of-two class, and a new buffer costs its whole size).
 * False, with nothing written, where the buffer could not be made (a memory budget refused it).
 */
function writeOnce(device: GPUDevice, target: GPUBuffer, offset: number, bytes: Uint8Array): boolean {
  const padded = ceil4(bytes.byteLength);
  let staging: GPUBuffer;
  try {
    staging = createBufferAs(
      device,
      {
        size: padded,
        usage: GPUUsage.MAP_WRITE | GPUUsage.COPY_SRC,
        mappedAtCreation: true,
        label: "webdlpack upload staging",
      },
      WEBDLPACK_OWNER,
    );
  } catch (err) {
    if (err instanceof WebDLPackError && err.code === "OUT_OF_MEMORY") return false; // the budget: writeBuffer instead
    throw err;
  }
  try {
    new Uint8Array(staging.getMappedRange(0, padded)).set(bytes); // the padding: zeros, as mapped at creation
    staging.unmap();
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(staging, 0, target, offset, padded);
    device.queue.submit([encoder.finish()]);
  } catch (err) {
    staging.destroy();
    throw err;
  }
  const drop = (): void => staging.destroy();
  device.queue.onSubmittedWorkDone().then(drop, drop);
  return true;
}

/** One piece through a mapped staging buffer: fill, unmap, copy, submit, map it again in the background. */
function writePiece(device: GPUDevice, ring: WriteRing, target: GPUBuffer, offset: number, piece: Uint8Array): void {
  const padded = ceil4(piece.byteLength);
  const staging = ring.take(padded);
  try {
    const mapped = new Uint8Array(staging.getMappedRange(0, padded));
    mapped.set(piece);
    if (padded > piece.byteLength) mapped.fill(0, piece.byteLength);
    staging.unmap();
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(staging, 0, target, offset, padded);
    device.queue.submit([encoder.finish()]);
  } catch (err) {
    ring.discard(staging);
    throw err;
  }
  ring.rearm(staging);
}
