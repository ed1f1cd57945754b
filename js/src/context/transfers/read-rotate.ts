/**
 * A large readback whose pieces find no staging kept (its first call at that size), read through the staging that
 * is kept instead of making new: the range is copied on the GPU into a new buffer of its size — a snapshot, one copy
 * submitted in the call's synchronous step, so the readback still holds exactly the work submitted before it — then
 * read out in chunks through the kept buffers in turn: as many copies and maps in flight as buffers, each chunk
 * copied out, its buffer unmapped and refilled with the next chunk. New MAP_READ staging costs its pages once
 * (allocated, mapped and touched: on the H100 in dawn.node 27 ms for 64 MiB), a snapshot in GPU memory little
 * (1.7 ms). A snapshot the GPU has no memory for rejects with OUT_OF_MEMORY; that, or a refused copy, gives the kept
 * buffers back (read-scope.ts). Setup decides per device whether a readback may go this way (calibrate.ts:
 * `turnBytes`), and the caller makes the staging of the range's own pieces once it is done, for the next readback
 * of the size.
 */
import { GPUUsage } from "../ground/create.js";
import { createBufferAs, meterOf, WEBDLPACK_OWNER } from "../ground/meter.js";
import type { Inflight } from "./inflight.js";
import { checkAllocated, checkCopied, giveBackUnread, popScope } from "./read-scope.js";
import type { ReadRing } from "./staging.js";

/** GPUMapMode.READ. */
const MAP_MODE_READ = 0x0001;

/** One readback: the 4-aligned span [start, start + span) of `source`; the caller asked for [lead, lead + length). */
export interface TurnJob {
  device: GPUDevice;
  ring: ReadRing;
  inflight: Inflight;
  source: GPUBuffer;
  start: number;
  span: number;
  lead: number;
  length: number;
  sink: (bytes: Uint8Array, at: number) => void;
}

/**
 * The kept buffers a readback of `span` bytes may take in turn (at least two of `chunk`'s class, handed out), or
 * null: none to take, or no room for the snapshot under the device's memory budget (it would trim caches).
 */
export function turnBuffers(device: GPUDevice, ring: ReadRing, span: number, chunk: number): GPUBuffer[] | null {
  const meter = meterOf(device);
  if (meter !== undefined && meter.budget !== null && meter.totalBytes + span > meter.budget) return null;
  const buffers = ring.takeKept(chunk, Math.max(2, Math.ceil(span / chunk)));
  if (buffers.length >= 2) return buffers;
  for (const b of buffers) ring.give(b, true);
  return null;
}

/** Read `job`'s span through `buffers` (from {@link turnBuffers}, each `chunk` bytes or more) in turn; see the file comment. */
export async function readInTurn(job: TurnJob, buffers: GPUBuffer[], chunk: number): Promise<void> {
  const { device, ring, inflight, source, start, span, lead, length, sink } = job;
  const chunks = Math.ceil(span / chunk);
  const maps: Promise<undefined>[] = [];
  let snapshot: GPUBuffer | undefined;
  let allocated: Promise<GPUError | null> | undefined;
  let refused: Promise<GPUError | null> | undefined;
  let done: (() => void) | undefined;
  // Chunk i into buffer i mod buffers.length, copied from the snapshot, submitted now, its map asked for.
  const issue = (i: number): void => {
    const buffer = buffers[i % buffers.length]!;
    const len = Math.min(chunk, span - i * chunk);
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(snapshot!, i * chunk, buffer, 0, len);
    device.queue.submit([encoder.finish()]);
    maps[i] = buffer.mapAsync(MAP_MODE_READ, 0, len);
    maps[i]!.catch(() => undefined); // awaited below in order, or abandoned on failure
  };
  try {
    done = inflight.begin();
    device.pushErrorScope("out-of-memory");
    try {
      snapshot = createBufferAs(
        device,
        { size: span, usage: GPUUsage.COPY_SRC | GPUUsage.COPY_DST, label: "webdlpack readback snapshot" },
        WEBDLPACK_OWNER,
      );
    } finally {
      allocated = popScope(device);
    }
    // The first chunks' copies too: out of a snapshot that could not be made, they are refused (in the scope, not
    // as the page's uncaptured errors). Later chunks are issued only once the scopes came back clean.
    device.pushErrorScope("validation");
    try {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(source, start, snapshot, 0, span);
      device.queue.submit([encoder.finish()]);
      for (let i = 0; i < Math.min(buffers.length, chunks); i++) issue(i);
    } finally {
      refused = popScope(device);
    }
  } catch (err) {
    snapshot?.destroy();
    await giveBackUnread(ring, buffers, maps);
    done?.();
    throw inflight.failure(err, "readback");
  }
  try {
    await checkAllocated(allocated, length, `a snapshot of ${span} bytes`);
    await checkCopied(refused, device, source);
  } catch (err) {
    // Nothing reached the caller and the kept buffers are sound: back to the ring once their maps are in.
    await giveBackUnread(ring, buffers, maps);
    snapshot.destroy();
    done();
    throw await inflight.settle(err, "readback");
  }
  try {
    for (let i = 0; i < chunks; i++) {
      const buffer = buffers[i % buffers.length]!;
      const at = i * chunk;
      const len = Math.min(chunk, span - at);
      await inflight.guard(maps[i]!);
      // The chunk holds span bytes [at, at + len); the caller asked for span bytes [lead, lead + length).
      const from = Math.max(lead - at, 0);
      const to = Math.min(len, lead + length - at);
      if (to > from) sink(new Uint8Array(buffer.getMappedRange(0, len)).subarray(from, to), at + from - lead);
      buffer.unmap();
      if (i + buffers.length < chunks) issue(i + buffers.length);
    }
  } catch (err) {
    for (const b of buffers) ring.discard(b); // mapped or in flight: never kept
    throw await inflight.settle(err, "readback");
  } finally {
    snapshot.destroy();
    done();
  }
  for (const b of buffers) ring.give(b, true);
}
