/**
 * CPU → GPU: the one upload every caller uses (ctx.upload, Python's uploads
 * from the wasm heap, C's, the adapters').
 *
 * Synchronous: the bytes are taken before it returns, and the write is queued
 * after all work already submitted. Below `stagingMinBytes` it is one
 * `queue.writeBuffer`; above, the bytes go in pieces (see pieceSize) through
 * kept MAP_WRITE staging buffers that are already mapped (one submit per
 * piece, so the GPU copy of piece k overlaps the CPU fill of piece k + 1).
 * A piece with no mapped buffer ready (the first upload of a size, or uploads
 * back to back faster than buffers are mapped again) makes a new one only from
 * `coldStagingMinBytes`; below, it goes through writeBuffer and the staging it
 * lacked is made in the background for the next upload. Both thresholds are
 * measured on the device at setup (calibrate.ts). A length that is not a
 * multiple of 4 is padded with zero bytes up to the next multiple, which must
 * fit in the destination.
 */
import { WebDLPackError } from "../../errors.js";
import { GPUUsage } from "../allocation/create.js";
import { bufferFacts } from "./buffer-facts.js";
import type { Inflight } from "./inflight.js";
import type { WriteRing } from "./staging.js";

/** How an upload is done (measured: bench/gpu). */
export interface WritePlan {
  /** Uploads of at least this many bytes go through mapped staging when it is ready; smaller ones through writeBuffer. */
  stagingMinBytes: number;
  /** With no mapped staging ready, uploads of at least this many bytes make new staging; smaller ones writeBuffer. */
  coldStagingMinBytes: number;
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

/** Upload `bytes` into `target` at `offset` (checked first). Returns the path taken. */
export function writeRange(
  device: GPUDevice,
  ring: WriteRing,
  inflight: Inflight,
  plan: WritePlan,
  target: GPUBuffer,
  offset: number,
  bytes: Uint8Array,
): UploadPath {
  checkWritable(target, offset, bytes.byteLength);
  if (inflight.lostError !== undefined) throw inflight.lostError;
  const length = bytes.byteLength;
  if (length === 0) return "writeBuffer";
  try {
    if (length < plan.stagingMinBytes) {
      writeDirect(device, target, offset, bytes);
      return "writeBuffer";
    }
    const piece = pieceSize(length, plan);
    const cold = length < plan.coldStagingMinBytes;
    let staged = 0;
    let lacking = 0;
    for (let at = 0; at < length; at += piece) {
      const part = bytes.subarray(at, at + piece);
      if (cold && !ring.hasReady(ceil4(part.byteLength))) {
        writeDirect(device, target, offset + at, part);
        lacking += 1;
      } else {
        writePiece(device, ring, target, offset + at, part);
        staged += 1;
      }
    }
    if (lacking > 0) ring.prepareSoon(ceil4(Math.min(piece, length)), lacking);
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
