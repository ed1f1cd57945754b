/**
 * GPU → CPU: the one readback every caller uses (ctx.readback / readbackInto,
 * Python's readbacks into the wasm heap, C's, the adapters').
 *
 * All the copies into staging are submitted at the time of the call, in one
 * synchronous step (nothing else can be submitted in between), so the bytes
 * are those every earlier submitted command wrote and nothing submitted later
 * wrote (a torn read is impossible). A range up to
 * `singleBytes` (or from `wholeFromBytes`, once a buffer of its size is kept)
 * uses one staging buffer (one submit, one map); others are split into pieces, each in its own staging buffer, all mapped at once and
 * copied out in order — the CPU copy of piece k overlaps the mapping of
 * piece k + 1. The sink writes each piece straight into the caller's memory
 * (re-derived per piece, so wasm memory growth is harmless).
 *
 * A copy WebGPU refused (a buffer another GPUDevice made, or a destroyed one)
 * leaves the staging buffer untouched, and its bytes must never pass for the
 * source's: such a read rejects (BAD_DEVICE / DISPOSED, register-check.ts).
 * Where JS can not know every fact WebGPU validates for the copy (a registered
 * buffer of unknown origin), the copies are encoded and submitted inside a
 * validation error scope and the sink sees no byte before it came back clean
 * (its answer arrives with the mapping: no extra wait). Where it can (a buffer
 * the device's meter saw made and not destroyed, see readOne), the scope —
 * 1–3 µs of a 20–80 µs small readback — is left out.
 */
import { WebDLPackError } from "../../errors.js";
import { GPUUsage } from "../ground/create.js";
import { countedAlive } from "../ground/meter.js";
import { bufferUseError } from "../pointers/register-check.js";
import { bufferFacts, type KnownBuffer } from "../ground/buffer-facts.js";
import type { Inflight } from "./inflight.js";
import { stagingClass } from "./ring.js";
import type { ReadRing } from "./staging.js";
import { checkAllocated, checkCopied, giveBackUnread, popScope } from "./read-scope.js";
import { readInTurn, type TurnJob, turnBuffers } from "./read-rotate.js";

/** GPUMapMode.READ. */
const MAP_MODE_READ = 0x0001;
/** GPUBufferUsage.MAP_READ | MAP_WRITE: a buffer that can be mapped (and so can not be copied while it is). */
const MAP_USAGE = 0x0003;

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
  /** Ranges of at least this many bytes use one staging buffer again (where pieces measured slower for them). */
  wholeFromBytes: number;
  /**
   * A range above `singleBytes` whose first piece finds no staging kept (its first readback at that size) goes
   * through kept buffers of this size in turn, via a snapshot (read-rotate.ts), and its own staging is made after
   * for the next readback; 0: never (setup measures it: calibrate.ts).
   */
  turnBytes: number;
}

/** Receives the bytes of one piece: `bytes` belong at `at` (0 = the first byte asked for). Valid only during the call. */
export type ReadSink = (bytes: Uint8Array, at: number) => void;

/** The pieces of the 4-aligned span [start, end): [offset in the span, length] each, 4-byte multiples but the last. */
export function planPieces(span: number, plan: ReadPlan): [number, number][] {
  if (span <= plan.singleBytes || span >= plan.wholeFromBytes) return [[0, span]];
  const wanted = Math.min(plan.maxPieces, Math.ceil(span / plan.minPieceBytes));
  const piece = Math.ceil(span / wanted / 4) * 4;
  const out: [number, number][] = [];
  for (let at = 0; at < span; at += piece) out.push([at, Math.min(piece, span - at)]);
  return out;
}

/** What a readback uses of its device, kept together by DeviceTransfers (one object per device). */
export interface ReadEnv {
  readonly device: GPUDevice;
  /** `device.queue`, read once. */
  readonly queue: GPUQueue;
  readonly ring: ReadRing;
  readonly inflight: Inflight;
}

/** Throw unless `source` can be read from `offset` for `length` bytes. */
export function checkReadable(source: KnownBuffer, offset: number, length: number): void {
  const { usage, size } = source;
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
 * work; `sink` gets each piece while its staging buffer is mapped. When this
 * returns, the GPU work is queued and every map asked for: work the caller does
 * then (making or touching the memory the bytes will land in) overlaps the GPU's.
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
): Promise<void> {
  const env: ReadEnv = { device, queue: device.queue, ring, inflight };
  return readFrom(env, plan, bufferFacts(source), offset, length, sink);
}

/** {@link readRange} of a buffer whose size and usage are at hand, on the device of `env`. */
export function readFrom(
  env: ReadEnv,
  plan: ReadPlan,
  source: KnownBuffer,
  offset: number,
  length: number,
  sink: ReadSink,
): Promise<void> {
  const end = offset + length;
  // The common small readback from byte 0 of a 4-byte multiple, readable (checkReadable's conditions): straight on.
  if (offset === 0 && length > 0 && length % 4 === 0 && length <= plan.singleBytes && length <= source.size) {
    if ((source.usage & GPUUsage.COPY_SRC) !== 0) return readOne(env, source, 0, length, 0, length, sink);
  }
  try {
    checkReadable(source, offset, length);
  } catch (err) {
    return Promise.reject(err);
  }
  if (length === 0) return Promise.resolve();
  const start = Math.floor(offset / 4) * 4;
  const lead = offset - start;
  const span = Math.ceil(end / 4) * 4 - start;
  // Not async itself: the one-piece case (small readbacks) is readOne's promise, with no extra async frame.
  if (span <= plan.singleBytes) return readOne(env, source, start, span, lead, length, sink);
  const { device, ring, inflight } = env;
  const job: ReadJob = {
    device,
    ring,
    inflight,
    source: source.buffer,
    start,
    span,
    lead,
    length,
    sink,
  };
  const planned = planPieces(span, plan);
  if (plan.turnBytes > 0 && !ring.hasReady(planned[0]![1])) {
    const buffers = turnBuffers(device, ring, span, plan.turnBytes);
    if (buffers !== null) {
      // The next readback of the size takes its own staging (its pieces, or one buffer of the whole span), made once
      // this one is done: making and touching it meanwhile would take the CPU the turns' copies need.
      const [bytes, count] = span < plan.wholeFromBytes ? [planned[0]![1], planned.length] : [span, 1];
      const since = ring.generation; // memory pressure meanwhile: none made
      return readInTurn(job, buffers, plan.turnBytes).then(() => {
        if (stagingClass(bytes) * count <= ring.maxKeptBytes) ring.prepareSoon(bytes, count, since);
      });
    }
  }
  if (span < plan.wholeFromBytes || ring.hasReady(span)) return readPieces(job, plan);
  // From wholeFromBytes with no buffer of the whole span kept (a first readback of the size): pieces, which overlap
  // making new buffers with the copies — given up after, and the whole buffer made for the next readback where the
  // ring can keep it.
  const pieces = { ...plan, wholeFromBytes: Number.POSITIVE_INFINITY };
  return readPieces(stagingClass(span) <= ring.maxKeptBytes ? { ...job, wholeLater: true } : job, pieces);
}

/** One readback (see {@link TurnJob}); readPieces: destroy the pieces after, and make one buffer of the whole span for the next readback. */
interface ReadJob extends TurnJob {
  wholeLater?: boolean;
}

/** The pieces case of {@link readRange} (see the file comment). */
async function readPieces(job: ReadJob, plan: ReadPlan): Promise<void> {
  const { device, ring, inflight, source, start, span, lead, length, sink } = job;
  const pieces = planPieces(span, plan);
  const since = ring.generation; // the whole buffer for the next readback: none where memory pressure came meanwhile
  const done = inflight.begin();
  const staging: GPUBuffer[] = [];
  let maps: Promise<void>[] = [];
  let allocated: Promise<GPUError | null> | undefined;
  let refused: Promise<GPUError | null> | undefined;
  try {
    // New staging (a size's first readback) may find the GPU out of memory: its own typed error, not a refused copy.
    device.pushErrorScope("out-of-memory");
    try {
      for (const [, len] of pieces) staging.push(ring.take(len));
    } finally {
      allocated = popScope(device);
    }
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
  try {
    await checkAllocated(allocated, length, `${pieces.length} staging buffer(s) for ${span} bytes`);
    await checkCopied(refused, device, source);
  } catch (err) {
    // No byte reached the caller: the staging that is sound goes back to the ring once its map is in.
    await giveBackUnread(ring, staging, maps);
    done();
    throw await inflight.settle(err, "readback");
  }
  let k = 0;
  try {
    for (; k < pieces.length; k++) {
      const [at, len] = pieces[k]!;
      await inflight.guard(maps[k]!);
      const mapped = new Uint8Array(staging[k]!.getMappedRange(0, len));
      // The piece holds span bytes [at, at + len); the caller asked for span bytes [lead, lead + length).
      const from = Math.max(lead - at, 0);
      const to = Math.min(len, lead + length - at);
      if (to > from) sink(mapped.subarray(from, to), at + from - lead);
      staging[k]!.unmap();
      if (job.wholeLater === true) ring.discard(staging[k]!);
      else ring.give(staging[k]!, true);
    }
    if (job.wholeLater === true) ring.prepareSoon(span, 1, since);
  } catch (err) {
    for (let j = k; j < staging.length; j++) ring.discard(staging[j]!);
    throw await inflight.settle(err, "readback");
  } finally {
    done();
  }
}

/**
 * The one-piece case (small readbacks): one staging buffer, one submit, one map. Not async: the map's promise with
 * one reaction is the caller's promise — as few promise hops between the GPU's answer and the caller as a
 * hand-written `await buffer.mapAsync()` (each hop costs on a round trip of 20–80 µs; bench/gpu/small-readback.mjs).
 * Few calls and objects besides WebGPU's own: a page's first readbacks run this unoptimized, with cold CPU caches,
 * where each costs (the same bench's cold-cache rows). The map needs no race against device loss: a loss destroys
 * every staging buffer in use (DeviceTransfers.lose), which rejects its map at once, and the failure is then
 * reported as DEVICE_LOST.
 */
function readOne(
  env: ReadEnv,
  source: KnownBuffer,
  start: number,
  span: number,
  lead: number,
  length: number,
  sink: ReadSink,
): Promise<void> {
  const { device, ring, inflight } = env;
  let staging: GPUBuffer | undefined;
  let mapped: Promise<undefined>;
  /** The validation scope's answer, when the copy ran in one (below). */
  let scope: ScopeAnswer | undefined;
  try {
    inflight.start(); // ended exactly once below (inflight.end), on every path
  } catch (err) {
    return Promise.reject(err);
  }
  try {
    staging = ring.take(span);
    // No validation scope where every fact WebGPU validates for the copy is known here: the source was made by
    // this device and is alive (countedAlive: its meter saw it made and sees every destroy), it can not be mapped
    // (no MAP usage), and the caller checked its usage and the range (4-aligned by construction); the staging
    // buffer is the ring's own, unmapped. Anything else (a registered buffer of unknown origin, accounting off) is
    // copied inside a scope and refused with a typed error when WebGPU refuses it.
    if ((source.usage & MAP_USAGE) === 0 && countedAlive(source.buffer, device)) {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(source.buffer, start, staging, 0, span);
      env.queue.submit([encoder.finish()]);
    } else {
      scope = scopedCopy(env, source.buffer, start, staging, span);
    }
    mapped = staging.mapAsync(MAP_MODE_READ, 0, span);
  } catch (err) {
    if (staging !== undefined) ring.discard(staging);
    inflight.end();
    return failed(inflight, err);
  }
  const buffer = staging;
  // Into the sink once the map is done (and the scope, if any, said the copy ran: its answer was sent before the
  // mapping's and is in by now; waited for should it not be).
  const copyOut = (): Promise<void> | undefined => {
    if (scope !== undefined) {
      if (scope.refused === undefined) return scope.arriving.then(copyOut);
      if (scope.refused !== null) {
        ring.discard(buffer);
        inflight.end();
        const refused = scope.refused.message;
        return bufferUseError("readback", device, source.buffer, refused).then((error) => failed(inflight, error));
      }
    }
    try {
      sink(new Uint8Array(buffer.getMappedRange(0, span), lead, length), 0);
    } catch (err) {
      ring.discard(buffer);
      inflight.end();
      return failed(inflight, err);
    }
    ring.giveMapped(buffer); // unmapped in a later task, not between the GPU's answer and the caller
    inflight.end();
    return undefined;
  };
  return mapped.then(copyOut, (err: unknown) => {
    ring.discard(buffer);
    inflight.end();
    return failed(inflight, err);
  });
}

/** A validation scope's answer: arriving, and once in, the error (null: none). */
interface ScopeAnswer {
  arriving: Promise<void>;
  refused: GPUError | null | undefined;
}

/**
 * The copy of {@link readOne} inside a validation scope, for a source whose copy WebGPU may refuse: a registered
 * buffer of unknown origin (or accounting off), which WebGPU may refuse.
 */
function scopedCopy(env: ReadEnv, source: GPUBuffer, start: number, staging: GPUBuffer, span: number): ScopeAnswer {
  env.device.pushErrorScope("validation");
  try {
    encodeCopy(env, source, start, staging, span);
  } catch (err) {
    void popScope(env.device);
    throw err;
  }
  const answer = { refused: undefined } as ScopeAnswer;
  answer.arriving = popScope(env.device).then((error) => {
    answer.refused = error ?? null;
  });
  return answer;
}

/** Copy `span` bytes of `source` from `start` into the start of `staging`, submitted now. */
function encodeCopy(env: ReadEnv, source: GPUBuffer, start: number, staging: GPUBuffer, span: number): void {
  const encoder = env.device.createCommandEncoder();
  encoder.copyBufferToBuffer(source, start, staging, 0, span);
  env.queue.submit([encoder.finish()]);
}

/** The rejection of a failed readback: DEVICE_LOST after a loss, typed errors as they are, else GPU_ERROR. */
function failed(inflight: Inflight, err: unknown): Promise<never> {
  return inflight.settle(err, "readback").then((error) => Promise.reject(error));
}
