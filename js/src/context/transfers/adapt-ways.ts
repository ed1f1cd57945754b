/**
 * Warm upload ways that follow what uploads cost while the device is used, where WebGPU runs in this process
 * (Node + dawn.node on a GPU: the plan's `adaptWarm`). Setup fixes a class's warm way from one pattern of calls
 * (calibrate.ts), but which way wins depends on what else the application uploads: Dawn's writeBuffer copies into
 * its own upload ring, fast where a write fits it (writes of one size, each done before the next), a new buffer per
 * write where not. dawn.node on the H200, a warm 4 MiB upload: on a device that uploads only 4 MiB writeBuffer +
 * wait 0.345 ms, a kept staging buffer 0.40 (setup's staging: 0.75× the best hand-written way,
 * bench/results-gpu-nvidia-h200.json); on a device that runs other sizes too, writeBuffer's call alone 1.77 ms,
 * kept staging's 0.47 (bench/results-gpu-upload-split-h200.json). In-process that difference is in the synchronous
 * call (the GPU copy after it takes the same time either way), so the call's time is what is compared. In a browser
 * the GPU process does writeBuffer's work after the call returns: its time says nothing there, and nothing adapts.
 *
 * Per class (from {@link ADAPT_FROM_BYTES}; below it the timer and per-call overhead dominate), synchronous times per
 * byte: of the way in use the median of its last {@link SAMPLES} calls, of the other way its last probe. The class's
 * warm way starts as setup measured it. Every K-th warm upload of the class takes the other way once (a probe; K
 * from {@link MIN_EVERY}): where it is {@link SWITCH_MARGIN} faster the class switches to it; a probe that loses by
 * {@link LOSS} or more doubles K, up to {@link MAX_EVERY}. A way switched to resets K to {@link MIN_EVERY} once it
 * held for that many calls of its own; left before that (it only looked faster), K doubles instead, so two ways
 * that take turns being fast for a call or two are probed ever less often, not every 16 calls. The way in use
 * updates its estimate on every call and is left on the call whose estimate is {@link SWITCH_MARGIN} slower than the
 * other way's last one (a way that turned slow: the application began uploading other sizes); the way left is then
 * probed again within {@link MIN_EVERY} uploads.
 */
/** The two ways of an upload: one queue.writeBuffer, or pieces through mapped staging buffers. */
export type UploadWay = "writeBuffer" | "staging";

/** Classes starting here or above adapt: the class of 1 MiB, from the geometric middle to 256 KiB, and larger. */
export const ADAPT_FROM_BYTES = 512 * 1024;
/** Calls of the way in use in its estimate (their median: one slow call, a pause or a collection, moves nothing). */
export const SAMPLES = 3;
/** Probe spacing: every K-th warm upload, K from this … */
export const MIN_EVERY = 16;
/** … to this. */
export const MAX_EVERY = 256;
/** A probe this many times slower than the way in use doubles K. */
export const LOSS = 1.5;
/**
 * A way is taken over the other only where this many times faster: the margin setup's warm decision takes
 * (calibrate-warm.ts WARM_MARGIN), so two ways within it keep the way in use and do not take turns on noise.
 */
export const SWITCH_MARGIN = 1.15;

const other = (way: UploadWay): UploadWay => (way === "staging" ? "writeBuffer" : "staging");

/** The median of the last samples (undefined: none). */
function estimate(samples: readonly number[]): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One class's state. */
interface ClassWays {
  /** The warm way in use. */
  way: UploadWay;
  /** Warm uploads since the last probe, and the spacing K. */
  calls: number;
  every: number;
  /** Calls the way in use has held since a probe switched to it (-1: not switched by a probe, or confirmed). */
  held: number;
  /** The last samples of each way (ms per byte), oldest first: the way in use's last calls, the other's last probe. */
  samples: Record<UploadWay, number[]>;
}

/** What a class has measured, for tests and diagnostics. */
export interface ClassWaysView {
  way: UploadWay;
  every: number;
  estimates: Record<UploadWay, number | undefined>;
}

/** The adapting warm ways of one device's upload classes (by class index); `clock` in ms (tests inject theirs). */
export class WarmWays {
  readonly #classes: (ClassWays | undefined)[] = [];

  constructor(readonly clock: () => number = () => performance.now()) {}

  /** The way class `k`'s next warm upload takes: the way in use, or the other once every K-th upload (a probe). */
  pick(k: number, setupWay: UploadWay): UploadWay {
    let c = this.#classes[k];
    if (c === undefined) {
      c = { way: setupWay, calls: 0, every: MIN_EVERY, held: -1, samples: { writeBuffer: [], staging: [] } };
      this.#classes[k] = c;
    }
    c.calls += 1;
    if (c.calls < c.every) return c.way;
    c.calls = 0;
    return other(c.way);
  }

  /**
   * Class `k`'s warm upload of `bytes` went the whole way `way` in `ms` (its synchronous part): update the estimate
   * and decide (see the file comment). Only uploads that went the whole way count: a staged one that lacked staging
   * and wrote some pieces with writeBuffer is no sample of either.
   */
  record(k: number, way: UploadWay, ms: number, bytes: number): void {
    const c = this.#classes[k];
    if (c === undefined || bytes <= 0) return;
    const sample = ms / bytes;
    if (way !== c.way) {
      // A probe: the way's estimate is its sample (what it measured before is from another pattern of calls).
      c.samples[way] = [sample];
      const theirs = estimate(c.samples[c.way]);
      if (theirs === undefined) return;
      if (sample * SWITCH_MARGIN < theirs) {
        c.way = way;
        c.held = 0;
      } else if (sample >= LOSS * theirs) {
        c.every = Math.min(2 * c.every, MAX_EVERY);
      }
      return;
    }
    const samples = c.samples[way];
    samples.push(sample);
    if (samples.length > SAMPLES) samples.shift();
    const theirs = estimate(c.samples[other(way)]);
    if (theirs !== undefined && theirs * SWITCH_MARGIN < estimate(samples)!) {
      // The way in use turned slow: leave it. Left before it held, the probe that chose it only looked faster: probe
      // less often. Else the pattern changed: the way left is probed again within MIN_EVERY uploads (a pause that
      // made two calls slow does not leave the class on the slower way for K uploads).
      if (c.held >= 0) {
        c.every = Math.min(2 * c.every, MAX_EVERY);
      } else {
        c.every = MIN_EVERY;
        c.calls = 0;
      }
      c.way = other(way);
      c.held = -1;
      return;
    }
    if (c.held >= 0 && ++c.held >= MIN_EVERY) {
      c.every = MIN_EVERY;
      c.held = -1;
    }
  }

  /** Class `k`'s way in use (undefined: no warm upload yet): the way {@link pick} took, unless it probed. */
  inUse(k: number): UploadWay | undefined {
    return this.#classes[k]?.way;
  }

  /** Class `k`'s way in use, spacing and estimates (undefined: no warm upload yet). */
  view(k: number): ClassWaysView | undefined {
    const c = this.#classes[k];
    if (c === undefined) return undefined;
    const estimates = { writeBuffer: estimate(c.samples.writeBuffer), staging: estimate(c.samples.staging) };
    return { way: c.way, every: c.every, estimates };
  }
}
