/**
 * Which upload way is faster at which size on this device, on the first call
 * and later, measured on the device itself when it is set up — and staging made
 * ready before the first transfer, so a first call costs what a later one does.
 *
 * Upload: at sizes from 16 MiB down to 64 KiB (largest first, until a time
 * budget is spent; a busy machine that measures fewer sizes still learns where
 * staging wins most), writeBuffer + wait against the staging path + wait. Each
 * size stands for a class of uploads (from the geometric middle between it and
 * the next smaller size measured, or from itself for the smallest) with its own
 * decision, cold and warm apart (one threshold can not describe a window where
 * staging wins below a size where it loses): cold is the first call at the size
 * — writeBuffer's first, against staging's first use of what setup keeps ready
 * (a larger kept buffer below the largest size), staging taken only where it
 * was at least twice as fast (one call each: see COLD_MARGIN) — and warm the
 * medians of interleaved rounds of calls (see WARM), with staging of the size's
 * own class, in the plan's pieces and in quarter-size ones (pieceCandidates),
 * staging taken only where at least 15 % faster (WARM_MARGIN): the class's
 * later staged uploads take the faster pieces (`pieceBytes`). The first
 * writeBuffer of the largest size, before all this, is not timed: what it costs once per page is no device's first call.
 * At the largest size, new staging made for it against the first writeBuffer
 * says whether a piece that finds no staging ready makes some (`makeStaging`;
 * within {@link NEW_STAGING_SLACK} of it counts).
 * Below the smallest size measured: writeBuffer. Measured once per adapter in a
 * page (a later device of the same adapter reuses the figures).
 *
 * Ready before the first transfer (sized by {@link readyStaging}): when staging
 * is used at all, mapped write staging for a 16 MiB upload (its pieces); four
 * read staging buffers of the read plan's single size and one of 64 KiB (small
 * first readbacks), mapped once. With a
 * memory budget, all of it fits in 1/8 of the budget (smaller and fewer
 * buffers; none where they would serve nothing), and the measurement itself
 * uploads at most 1/4 of it. Whatever else the measurement made is destroyed.
 * Under memory pressure the rings are trimmed like every cache (room.ts). Of
 * readbacks (calibrate-read.ts): the map time of one read buffer against
 * touching fresh memory of its size says whether a readback into a new array
 * touches its pages while the GPU works; making that buffer ready against a GPU
 * copy of its bytes, whether a large first readback goes through the read
 * staging made ready in turn (`turnBytes`, read-rotate.ts).
 */
import { GPUUsage } from "../ground/create.js";
import type { ReadPlan } from "./read.js";
import { measureReads, type ReadFigures } from "./calibrate-read.js";
import { createBufferAs, meterOf, WEBDLPACK_OWNER } from "../ground/meter.js";
import { type ReadRing, STAGING_MIN_BYTES, type WriteRing } from "./staging.js";
import { pieceSize, type UploadClass, type UploadWay, type WritePlan, writeRange } from "./write.js";
import type { Inflight } from "./inflight.js";
import { faster, now, type PieceFigure, timed, warmFigures, warmWay } from "./calibrate-warm.js";

export type { PieceFigure } from "./calibrate-warm.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Sizes the upload paths are compared at, largest first. */
const UPLOAD_SIZES = [16 * MiB, 4 * MiB, MiB, 256 * KiB, 64 * KiB];
/** Measure no larger size once this much time has gone (ms; at least one size is measured): the thresholds use what was. */
const BUDGET_MS = 250;
/** Read staging made ready at setup: this many buffers of the read plan's single size. */
const READ_BUFFERS = 4;
/**
 * One read buffer of this size is kept ready beside the large ones: a first readback of 1–64 KiB takes it (a ring
 * hands out a kept buffer up to 64× the request), not a new buffer (in Chromium a new MAP_READ buffer is a shared
 * memory allocation in the GPU process: 0.2–0.5 ms on the H100, more than the readback itself).
 */
const SMALL_READ_BYTES = 64 * KiB;
/** The small upload (a writeBuffer) before each warm call timed (calibrate-warm.ts warmFigures). */
const SMALL_UPLOAD_BYTES = KiB;
/** Write staging made ready at setup: the pieces of an upload of this size. */
const READY_UPLOAD_BYTES = 16 * MiB;
/** With a memory budget, the staging made ready at setup takes at most this share of it … */
const READY_BUDGET_SHARE = 1 / 8;
/** … and the measurement uploads at most this share. */
const MEASURE_BUDGET_SHARE = 1 / 4;

/** Figures measured per adapter (a page that sets up the same adapter again measures nothing). */
const measured = new Map<string, Omit<Calibrated, "calibration"> & { calibration: Calibration }>();

/** The figures at one size measured (ms of writeBuffer + wait and staging + wait) and the decisions they gave. */
export interface UploadFigures {
  /** The size measured. */
  bytes: number;
  /** The class it decides for: uploads from this many bytes up to the next class's `fromBytes`. */
  fromBytes: number;
  /** The first call at the size (cold) … */
  writeBufferCold: number;
  stagingCold: number;
  /** … and later calls (warm; staging in the plan's pieces): medians of `pairs` interleaved rounds. */
  writeBuffer: number;
  staging: number;
  pairs: number;
  /** Warm staging in smaller pieces, timed in the same rounds: the median per piece size measured (none: none fit). */
  pieces: PieceFigure[];
  /** The way the class's first upload on a device takes, and its later ones … */
  cold: UploadWay;
  warm: UploadWay;
  /** … and the pieces its later staged uploads take (0: the plan's; else the fastest of `pieces`). */
  pieceBytes: number;
}

/** What a calibration found (kept in transferStats: the per-size decisions and the figures behind them). */
export interface Calibration extends ReadFigures {
  /** Per size measured, ascending. */
  upload: UploadFigures[];
  /** New staging made for the largest size measured (ms, + wait), against its first writeBuffer … */
  newStagingMs: number;
  /** … so whether a staged piece that finds no staging ready makes a new buffer (else writeBuffer). */
  makeStaging: boolean;
  /** Whole calibration (ms). */
  totalMs: number;
}

/** The measured upload classes for the write plan, the read plan's turns, and whether to touch fresh readback arrays. */
export interface Calibrated {
  write: Pick<WritePlan, "classes" | "makeStaging">;
  read: Pick<ReadPlan, "turnBytes">;
  touchFreshMinBytes: number;
  calibration: Calibration;
}

/** The device's queue and rings, as the calibration uses them. */
export interface CalibrationTarget {
  device: GPUDevice;
  writes: WriteRing;
  reads: ReadRing;
  inflight: Inflight;
  write: WritePlan;
  read: ReadPlan;
  /** The adapter (figures are reused for it), or null (unknown: measured every time). */
  adapterKey: string | null;
}

/**
 * Smaller pieces a staged upload of a size is also timed in: the next smaller size setup measures (a quarter), not
 * below {@link MIN_SMALL_PIECE} and smaller than the plan's pieces. In Chromium on the H100 a staged upload of
 * 256 KiB–4 MiB in one buffer often stalls ~2 ms, in pieces less, and which piece size wins changes from page to page
 * (docs/gpu-transfers.md): measured, not assumed. Eighth and sixteenth sizes too cost ~40 ms of a first setup there.
 */
const MAX_SMALL_PIECES = 4;
const MIN_SMALL_PIECE = 64 * KiB;

/** The smaller piece sizes a staged upload of `n` bytes is timed in (see {@link MAX_SMALL_PIECES}), largest first. */
export function pieceCandidates(n: number, planPiece: number): number[] {
  return UPLOAD_SIZES.filter((p) => p < n && p < planPiece && p >= MIN_SMALL_PIECE && p * MAX_SMALL_PIECES >= n);
}

/**
 * How much faster staging must be on a first call to be the cold way. A cold figure is one call, and the first
 * upload on a later device of the adapter (which reuses the figures) measured up to 2–4× the calibration's for
 * staging (Chromium on SwiftShader, 16 MiB: 11–21 ms against 5.0) while writeBuffer's matched (6.6 against 9.3).
 */
const COLD_MARGIN = 2;

/**
 * The way of a class's first upload on a device: staging where its first use of the staging setup keeps was faster
 * than writeBuffer's first call — by {@link COLD_MARGIN} where later uploads take writeBuffer, by any margin where
 * they stage too (then the staging is kept anyway, and the cold writeBuffer timed here is a floor: the size's first
 * writeBuffer in the page ran untimed before it, while a fresh device's first one pays for writeBuffer's own
 * staging — dawn.node on the H100, 16 MiB right after setup: 17.8 ms against 3.8 staged; a setup that measured the
 * two within 2× took writeBuffer for every first upload from 16 MiB, issue 33).
 */
export function coldWay(writeBufferCold: number, stagingCold: number, warm: UploadWay): UploadWay {
  return faster(writeBufferCold, stagingCold, warm === "staging" ? 1 : COLD_MARGIN);
}

/**
 * New staging counts as no dearer than writeBuffer (`makeStaging`) within this factor of the first writeBuffer timed
 * at the largest size. That writeBuffer is the device's second of the size (the first ran untimed, and its memory is
 * warm), while the new staging is the device's first buffer of its kind; a fresh device's first upload after setup
 * meets neither warm: dawn.node on the H200, setup's figures 7.79 ms new staging against 7.13 writeBuffer (not made),
 * while a new kept mapped buffer beat writeBuffer as the first upload right after setup at 16, 64 and 256 MiB (7.13,
 * 24.1, 88.9 ms against 7.88, 27.2, 93.1; `bench/results-gpu-nvidia-h200.md`), where webdlpack wrote all but the
 * 16 MiB kept through writeBuffer (0.99×, 0.95×). And staging made inline is kept for the class's later uploads,
 * which otherwise make it after the first (touching every page once more).
 */
export const NEW_STAGING_SLACK = 1.15;

/** Where the class of each size (ascending) starts: the geometric middle between it and the next smaller size. */
export function classStarts(sizes: readonly number[]): number[] {
  return sizes.map((n, i) => (i === 0 ? n : Math.round(Math.sqrt(n * sizes[i - 1]!))));
}

/** The write plan's classes from the figures (ascending), less those below the first that stages either way. */
export function uploadClasses(
  figures: readonly (Pick<UploadFigures, "fromBytes" | "cold" | "warm"> & { pieceBytes?: number })[],
): UploadClass[] {
  const first = figures.findIndex((c) => c.cold === "staging" || c.warm === "staging");
  // A class carries its pieces only where it stages warm in measured ones.
  const toClass = ({ fromBytes, cold, warm, pieceBytes = 0 }: (typeof figures)[number]): UploadClass =>
    warm === "staging" && pieceBytes > 0 ? { fromBytes, cold, warm, pieceBytes } : { fromBytes, cold, warm };
  return first < 0 ? [] : figures.slice(first).map(toClass);
}

/** The smallest upload the classes stage (cold or warm), or Infinity. */
export function stagingFrom(classes: readonly UploadClass[]): number {
  return uploadClasses(classes)[0]?.fromBytes ?? Number.POSITIVE_INFINITY;
}

/** Measure the device once per adapter (see the file comment), then make staging ready. */
export async function calibrate(t: CalibrationTarget): Promise<Calibrated> {
  const known = t.adapterKey === null ? undefined : measured.get(t.adapterKey);
  const found = known ?? (await measure(t));
  if (known === undefined && t.adapterKey !== null) measured.set(t.adapterKey, found);
  const ready = readyStaging(t, stagingFrom(found.write.classes), budgetOf(t.device));
  await t.writes.settled();
  t.writes.keepOnly(ready.writeBytes, ready.writeCount);
  t.reads.keepOnly(ready.readBytes, ready.readCount);
  if (ready.writeCount > 0) await t.writes.prepare(ready.writeBytes, ready.writeCount);
  if (ready.readCount > 0) await t.reads.prepare(ready.readBytes, ready.readCount);
  if (ready.smallReadBytes > 0) await t.reads.prepare(ready.smallReadBytes, 1);
  // Turns through this device's own ready read staging (its size follows the device's memory budget).
  const turns = found.calibration.readInTurn && ready.readCount >= 2;
  return { ...found, read: { turnBytes: turns ? ready.readBytes : 0 } };
}

/** Staging made ready at setup: `count` buffers of `bytes` per ring. */
export interface ReadyStaging {
  readBytes: number;
  readCount: number;
  /** One more read buffer of this size (0: none) for small first readbacks ({@link SMALL_READ_BYTES}). */
  smallReadBytes: number;
  writeBytes: number;
  writeCount: number;
}

/** The largest power of two not above `n` (0 below 1). */
const floorPow2 = (n: number): number => (n < 1 ? 0 : 2 ** Math.floor(Math.log2(n)));

/** The memory budget of `device` (null: none, or not counted). */
const budgetOf = (device: GPUDevice): number | null => meterOf(device)?.budget ?? null;

/**
 * What setup keeps ready (see the file comment): without a budget, {@link READ_BUFFERS} read buffers of the read
 * plan's single size and, when uploads use staging (`stagingMinBytes` finite), the pieces of a
 * {@link READY_UPLOAD_BYTES} upload; with one, all of it within {@link READY_BUDGET_SHARE} of the budget — read
 * buffers within half of that (or all of it when uploads never stage), write staging only for an upload the
 * plan would stage.
 */
export function readyStaging(
  t: Pick<CalibrationTarget, "device" | "read" | "write">,
  stagingMinBytes: number,
  budget: number | null,
): ReadyStaging {
  const share = budget === null ? Number.POSITIVE_INFINITY : budget * READY_BUDGET_SHARE;
  const staging = stagingMinBytes !== Number.POSITIVE_INFINITY;
  const readShare = staging ? share / 2 : share;
  const single = Math.min(t.read.singleBytes, Math.floor(t.device.limits.maxBufferSize / 4) * 4);
  const readBytes = Math.min(single, floorPow2(readShare));
  const readCount = readBytes < STAGING_MIN_BYTES ? 0 : Math.min(READ_BUFFERS, Math.floor(readShare / readBytes));
  const upload = Math.min(READY_UPLOAD_BYTES, floorPow2(share - readBytes * readCount));
  let writeBytes = 0;
  let writeCount = 0;
  if (staging && upload >= Math.max(stagingMinBytes, STAGING_MIN_BYTES)) {
    // Pieces of at most the upload itself (in Node a piece may be 64 MiB: a 16 MiB upload is one 16 MiB piece).
    writeBytes = Math.min(pieceSize(upload, t.write), upload);
    writeCount = Math.ceil(upload / writeBytes);
  }
  // The small read buffer, where the read buffers are too large to serve small readbacks and it fits in the share.
  const used = readBytes * readCount + writeBytes * writeCount;
  const small = readCount > 0 && readBytes > SMALL_READ_BYTES && used + SMALL_READ_BYTES <= share;
  return { readBytes, readCount, smallReadBytes: small ? SMALL_READ_BYTES : 0, writeBytes, writeCount };
}

/** Measure the device (see the file comment). Leaves the staging it made in the rings. */
async function measure(t: CalibrationTarget): Promise<Calibrated> {
  const { device } = t;
  const t0 = now();
  const budget = budgetOf(device);
  const largest = Math.min(
    UPLOAD_SIZES[0]!,
    Math.floor(device.limits.maxBufferSize / 4) * 4,
    budget === null ? Number.POSITIVE_INFINITY : floorPow2(budget * MEASURE_BUDGET_SHARE),
  );
  const target = createBufferAs(
    device,
    { size: largest, usage: GPUUsage.COPY_DST | GPUUsage.COPY_SRC, label: "webdlpack calibration" },
    WEBDLPACK_OWNER,
  );
  const host = new Uint8Array(largest).fill(1);
  const figures: UploadFigures[] = [];
  let newStagingMs = Number.POSITIVE_INFINITY;
  let firstWriteBufferMs = 0;
  try {
    // The first uses of the queue and of writeBuffer at this size in the page (a browser's first shared memory of a
    // size is made once per page, and a later device's first writeBuffer does not pay it again): untimed.
    await timed(device, () => device.queue.writeBuffer(target, 0, host, 0, largest));
    const started = now(); // the budget counts from here: at least one size is always measured
    const staged: WritePlan = {
      ...t.write,
      classes: [{ fromBytes: 0, cold: "staging", warm: "staging" }],
      makeStaging: true,
    };
    let kept: { bytes: number; count: number } | undefined; // the largest size's pieces, as setup keeps them
    for (const n of UPLOAD_SIZES) {
      if (n > largest) continue;
      if (figures.length > 0 && now() - started > BUDGET_MS) break;
      const bytes = host.subarray(0, n);
      const viaStaging = (): void => {
        writeRange(device, t.writes, t.inflight, staged, { warm: 1 }, target, 0, bytes);
      };
      const viaWriteBuffer = (): void => device.queue.writeBuffer(target, 0, host, 0, n);
      const piece = Math.min(pieceSize(n, t.write), n);
      const candidates = pieceCandidates(n, piece);
      const writeBufferCold = await timed(device, viaWriteBuffer);
      if (kept === undefined) {
        // The largest size: new staging (nothing is kept yet), then the first use of it, as setup keeps it.
        firstWriteBufferMs = writeBufferCold;
        newStagingMs = await timed(device, viaStaging);
        await t.writes.settled();
        kept = { bytes: piece, count: Math.ceil(n / piece) };
      }
      // Below it, the first call takes a larger kept buffer (what setup keeps ready).
      const stagingCold = await timed(device, viaStaging);
      await t.writes.settled();
      // Warm: buffers of the size's own class, and of each smaller piece size, one per piece.
      await t.writes.prepare(piece, Math.ceil(n / piece));
      for (const p of candidates) await t.writes.prepare(p, n / p);
      const viaPieces = candidates.map((p) => {
        const inPieces: WritePlan = { ...staged, classes: [{ ...staged.classes[0]!, pieceBytes: p }] };
        return (): void => void writeRange(device, t.writes, t.inflight, inPieces, { warm: 1 }, target, 0, bytes);
      });
      const small = (): void =>
        device.queue.writeBuffer(target, largest - SMALL_UPLOAD_BYTES, host, 0, SMALL_UPLOAD_BYTES);
      const ways = [viaWriteBuffer, viaStaging, ...viaPieces];
      const { medians, rounds } = await warmFigures(device, t.writes, n, ways, small);
      const [writeBuffer, staging] = medians as [number, number];
      const pieces = candidates.map((pieceBytes, i) => ({ pieceBytes, staging: medians[2 + i]! }));
      t.writes.keepOnly(kept.bytes, kept.count); // the next size's first call finds only what setup keeps
      // Dawn frees destroyed buffers at the queue's next tick: here, not in the next size's timed first call (dawn.node,
      // H100: first staged calls 2.8–6.4 ms with the frees in them, 0.16–0.9 without; a 10 ms pause did not help).
      device.queue.submit([]);
      await device.queue.onSubmittedWorkDone();
      const warm = warmWay(writeBuffer, staging, pieces);
      figures.unshift({
        bytes: n,
        fromBytes: n,
        writeBufferCold,
        stagingCold,
        writeBuffer,
        staging,
        pairs: rounds,
        pieces,
        cold: coldWay(writeBufferCold, stagingCold, warm.warm),
        ...warm,
      });
    }
  } finally {
    target.destroy();
  }
  const starts = classStarts(figures.map((f) => f.bytes));
  figures.forEach((f, i) => {
    f.fromBytes = starts[i]!;
  });
  const classes = uploadClasses(figures);
  const makeStaging = newStagingMs < NEW_STAGING_SLACK * firstWriteBufferMs;
  await t.writes.settled();
  const stagingMinBytes = stagingFrom(classes);
  if (stagingMinBytes === Number.POSITIVE_INFINITY) t.writes.clear();

  const ready = readyStaging(t, stagingMinBytes, budget);
  const read = await measureReads(t, ready.readCount > 0 ? ready.readBytes : 0);
  const { readMapMs, touchMs } = read;
  const calibration: Calibration = { upload: figures, newStagingMs, makeStaging, ...read, totalMs: now() - t0 };
  return {
    write: { classes, makeStaging },
    read: { turnBytes: 0 }, // per device: calibrate()
    touchFreshMinBytes: readMapMs > touchMs ? t.read.singleBytes / 4 : Number.POSITIVE_INFINITY,
    calibration,
  };
}
