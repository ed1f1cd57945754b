/**
 * What setup measures of readbacks (calibrate.ts runs it once per adapter, with the read staging it makes ready):
 * making one read staging buffer ready, one readback through it, a GPU copy of the same bytes into a new buffer,
 * and touching fresh memory of the size — so whether a large first readback goes through the kept staging in turn
 * (read-rotate.ts) and whether a readback into a new array touches its pages while the GPU works.
 */
import { GPUUsage } from "../ground/create.js";
import { createBufferAs, WEBDLPACK_OWNER } from "../ground/meter.js";
import type { Inflight } from "./inflight.js";
import { type ReadPlan, readRange } from "./read.js";
import { type ReadRing, touch } from "./staging.js";

/**
 * How much more new read staging must cost than a GPU copy of the same bytes for a large first readback to go
 * through the kept staging in turn: the turns add map round trips besides the copy (dawn.node on the H100, 64 MiB
 * warm: in turn 9.7 ms against 8.8 in kept pieces; cold: 10.8 against 23.8, new staging 27 ms, the copy 1.7).
 */
const TURN_MARGIN = 2;

/** The readback figures of a calibration (ms). */
export interface ReadFigures {
  /** Copy + map of one read staging buffer, and touching fresh memory of its size. */
  readMapMs: number;
  touchMs: number;
  /** New read staging of that size made ready (made, mapped, touched; 0: one was there), against a GPU copy into a new buffer (made, copied, waited for) … */
  newReadMs: number;
  snapshotMs: number;
  /** … so whether a large first readback goes through the kept read staging in turn. */
  readInTurn: boolean;
}

/** The device as the measurement uses it. */
export interface ReadTarget {
  device: GPUDevice;
  reads: ReadRing;
  inflight: Inflight;
  read: ReadPlan;
}

const now = (): number => performance.now();

/** Measure with `n` bytes (see the file comment); the read staging made stays in the ring. 0 bytes: nothing measured. */
export async function measureReads(t: ReadTarget, n: number): Promise<ReadFigures> {
  if (n === 0) return { readMapMs: 0, touchMs: 0, newReadMs: 0, snapshotMs: 0, readInTurn: false };
  const made = t.reads.stats().created;
  const t0 = now();
  await t.reads.prepare(n, 1);
  const newReadMs = t.reads.stats().created > made ? now() - t0 : 0;
  const create = (usage: number): GPUBuffer =>
    createBufferAs(t.device, { size: n, usage, label: "webdlpack calibration" }, WEBDLPACK_OWNER);
  const source = create(GPUUsage.COPY_SRC);
  try {
    const t1 = now();
    await readRange(t.device, t.reads, t.inflight, t.read, source, 0, n, () => {});
    const readMapMs = now() - t1;
    const t2 = now();
    const snapshot = create(GPUUsage.COPY_SRC | GPUUsage.COPY_DST);
    const encoder = t.device.createCommandEncoder();
    encoder.copyBufferToBuffer(source, 0, snapshot, 0, n);
    t.device.queue.submit([encoder.finish()]);
    await t.device.queue.onSubmittedWorkDone();
    const snapshotMs = now() - t2;
    snapshot.destroy();
    const t3 = now();
    touch(new Uint8Array(n));
    const readInTurn = newReadMs > TURN_MARGIN * snapshotMs;
    return { readMapMs, touchMs: now() - t3, newReadMs, snapshotMs, readInTurn };
  } finally {
    source.destroy();
  }
}
