/**
 * GPU → CPU: the one readback every caller uses (ctx.readback / readbackInto,
 * Python's readbacks into the wasm heap, C's, the adapters').
 *
 * All the copies into staging are submitted at the time of the call, in one
 * synchronous step (nothing else can be submitted in between), so the bytes
 * are those every earlier submitted command wrote and nothing submitted later
 * wrote (a torn read is impossible). A range up to
 * `singleBytes` uses one staging buffer (one submit, one map); a larger one is
 * split into pieces, each in its own staging buffer, all mapped at once and
 * copied out in order — the CPU copy of piece k overlaps the mapping of
 * piece k + 1. The sink writes each piece straight into the caller's memory
 * (re-derived per piece, so wasm memory growth is harmless).
 *
 * The copies are encoded and submitted inside a validation error scope, and the
 * sink sees no byte before the scope came back clean: a copy WebGPU refused (a
 * buffer another GPUDevice made, or a destroyed one) leaves the staging buffer
 * untouched, and its bytes must never pass for the source's. Such a read rejects
 * (BAD_DEVICE / INVALID_ARGUMENT, register-check.ts). The scope's answer arrives
 * with the mapping, so it costs no extra wait.
 */
import { WebDLPackError } from "../../errors.js";
import { GPUUsage } from "../allocation/create.js";
import { bufferUseError } from "../pointers/register-check.js";
import { bufferFacts } from "./buffer-facts.js";
import type { Inflight } from "./inflight.js";
import type { ReadRing } from "./staging.js";

/** GPUMapMode.READ. */
const MAP_MODE_READ = 0x0001;

/** How a readback is split (measured: bench/gpu, see docs in bench/results-gpu-*.md). */
export interface ReadPlan {
  /** Ranges up to this many bytes use one staging buffer. */
  singleBytes: number;
  /** Pieces are at least this large … */
  minPieceBytes: number;
  /** … and at most this many. */
  maxPieces: number;
  /** One submit per piece (all in the same task, so still one snapshot) instead of one for all. */
  submitPerPiece: boolean;
}

/** Receives the bytes of one piece: `bytes` belong at `at` (0 = the first byte asked for). Valid only during the call. */
export type ReadSink = (bytes: Uint8Array, at: number) => void;

/** The pieces of the 4-aligned span [start, end): [offset in the span, length] each, 4-byte multiples but the last. */
export function planPieces(span: number, plan: ReadPlan): [number, number][] {
  if (span <= plan.singleBytes) return [[0, span]];
  const wanted = Math.min(plan.maxPieces, Math.ceil(span / plan.minPieceBytes));
  const piece = Math.ceil(span / wanted / 4) * 4;
  const out: [number, number][] = [];
  for (let at = 0; at < span; at += piece) out.push([at, Math.min(piece, span - at)]);
  return out;
}

/** Throw unless `source` can be read from `offset` for `length` bytes. */
export function checkReadable(source: GPUBuffer, offset: number, length: number): void {
  const { usage, size } = bufferFacts(source);
  if ((usage & GPUUsage.COPY_SRC) === 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "readback needs a buffer with COPY_SRC usage", {
      field: "usage",
      value: usage,
      expected: "usage including GPUBufferUsage.COPY_SRC (0x4)",
    });
  }
  const end = Math.ceil((offset + length) / 4) * 4;
  if (end > size) {
    throw new WebDLPackError(
      "UNSUPPORTED",
      "the last bytes of a buffer whose size is not a multiple of 4 can not be copied",
      {
        field: "byteLength",
        value: length,
        expected: `offset + length <= ${Math.floor(size / 4) * 4}`,
      },
    );
  }
}

/**
 * Read `length` bytes at `offset` of `source`, ordered after all submitted
 * work; `sink` gets each piece while its staging buffer is mapped.
 * `whileWaiting` runs once the GPU work is queued (e.g. to touch fresh memory
 * the bytes will land in, overlapping the page faults with the GPU).
 * Rejects with DEVICE_LOST if the device is lost before the bytes arrive,
 * GPU_ERROR if mapping fails otherwise; staging buffers never leak.
 */
export function readRange(
  device: GPUDevice,
  ring: ReadRing,
  inflight: Inflight,
  plan: ReadPlan,
  source: GPUBuffer,
  offset: number,
  length: number,
  sink: ReadSink,
  whileWaiting?: () => void,
): Promise<void> {
  try {
    checkReadable(source, offset, length);
  } catch (err) {
    return Promise.reject(err);
  }
  if (length === 0) return Promise.resolve();
  const start = Math.floor(offset / 4) * 4;
  const lead = offset - start;
  const span = Math.ceil((offset + length) / 4) * 4 - start;
  // Not async itself: the one-piece case (small readbacks) is readOne's promise, with no extra async frame.
  const job: ReadJob = { device, ring, inflight, source, start, span, lead, length, sink, whileWaiting };
  return span <= plan.singleBytes ? readOne(job) : readPieces(job, plan);
}

/** One readback: the 4-aligned span [start, start + span) of `source`; the caller asked for [lead, lead + length). */
interface ReadJob {
  device: GPUDevice;
  ring: ReadRing;
  inflight: Inflight;
  source: GPUBuffer;
  start: number;
  span: number;
  lead: number;
  length: number;
  sink: ReadSink;
  whileWaiting: (() => void) | undefined;
}

/** The pieces case of {@link readRange} (see the file comment). */
async function readPieces(job: ReadJob, plan: ReadPlan): Promise<void> {
  const { device, ring, inflight, source, start, span, lead, length, sink, whileWaiting } = job;
  const pieces = planPieces(span, plan);
  const done = inflight.begin();
  const staging: GPUBuffer[] = [];
  let maps: Promise<void>[];
  let refused: Promise<GPUError | null> | undefined;
  try {
    for (const [, len] of pieces) staging.push(ring.take(len));
    device.pushErrorScope("validation");
    // One submit per piece, all before this returns (nothing can be submitted in between: same task), so
    // piece 0 is mapped as soon as its own copy is done and its CPU copy overlaps the later pieces' GPU work.
    let encoder = device.createCommandEncoder();
    pieces.forEach(([at, len], k) => {
      encoder.copyBufferToBuffer(source, start + at, staging[k]!, 0, len);
      if (plan.submitPerPiece && k < pieces.length - 1) {
        device.queue.submit([encoder.finish()]);
        encoder = device.createCommandEncoder();
      }
    });
    device.queue.submit([encoder.finish()]);
    refused = popScope(device);
    maps = pieces.map(([, len], k) => staging[k]!.mapAsync(MAP_MODE_READ, 0, len));
    for (const m of maps) m.catch(() => undefined); // each is awaited below or abandoned on failure
  } catch (err) {
    if (refused === undefined && staging.length === pieces.length) void popScope(device);
    for (const s of staging) ring.discard(s);
    done();
    throw inflight.failure(err, "readback");
  }
  let k = 0;
  try {
    whileWaiting?.();
    await checkCopied(refused, device, source);
    for (; k < pieces.length; k++) {
      const [at, len] = pieces[k]!;
      await inflight.guard(maps[k]!);
      const mapped = new Uint8Array(staging[k]!.getMappedRange(0, len));
      // The piece holds span bytes [at, at + len); the caller asked for span bytes [lead, lead + length).
      const from = Math.max(lead - at, 0);
      const to = Math.min(len, lead + length - at);
      if (to > from) sink(mapped.subarray(from, to), at + from - lead);
      staging[k]!.unmap();
      ring.give(staging[k]!, true);
    }
  } catch (err) {
    for (let j = k; j < staging.length; j++) ring.discard(staging[j]!);
    throw await inflight.settle(err, "readback");
  } finally {
    done();
  }
}

/** The one-piece case (small readbacks): one staging buffer, one submit, one map, no per-piece arrays. */
async function readOne(job: ReadJob): Promise<void> {
  const { device, ring, inflight, source, start, span, lead, length, sink, whileWaiting } = job;
  const done = inflight.begin();
  let staging: GPUBuffer | undefined;
  try {
    staging = ring.take(span);
    device.pushErrorScope("validation");
    let refused: Promise<GPUError | null>;
    try {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(source, start, staging, 0, span);
      device.queue.submit([encoder.finish()]);
    } finally {
      refused = popScope(device);
    }
    const mapped = inflight.guard(staging.mapAsync(MAP_MODE_READ, 0, span));
    whileWaiting?.();
    await mapped;
    // The scope's answer came before the mapping (sent first): awaited here, not in a helper (one async frame less).
    const error = await refused;
    if (error !== null && error !== undefined) throw await bufferUseError("readback", device, source, error.message);
    sink(new Uint8Array(staging.getMappedRange(0, span), lead, length), 0);
    staging.unmap();
    ring.give(staging, true);
  } catch (err) {
    if (staging !== undefined) ring.discard(staging);
    throw await inflight.settle(err, "readback");
  } finally {
    done();
  }
}

/** Pop the readback's validation scope: its error, or null (also when the device is gone: that rejects elsewhere). */
function popScope(device: GPUDevice): Promise<GPUError | null> {
  return device.popErrorScope().catch(() => null);
}

/** Throw when WebGPU refused the readback's copies: the staging bytes are then not the source's. */
async function checkCopied(
  refused: Promise<GPUError | null> | undefined,
  device: GPUDevice,
  source: GPUBuffer,
): Promise<void> {
  const error = await refused;
  if (error !== null && error !== undefined) throw await bufferUseError("readback", device, source, error.message);
}
