/**
 * How setup times the upload ways of one size once warm (calibrate.ts decides
 * with the figures): rounds of one call each way, in rotating order, medians,
 * and the way (and pieces) they favour.
 */
import type { WriteRing } from "./staging.js";
import type { UploadWay } from "./write.js";

const MiB = 2 ** 20;

/** Warm staging of a size in pieces of `pieceBytes` (one kept buffer each, one submit each): median ms. */
export interface PieceFigure {
  pieceBytes: number;
  staging: number;
}

export const now = (): number => performance.now();

/**
 * Warm samples per size: rounds of one call each way (writeBuffer, staging in the plan's pieces, staging in each
 * smaller piece size measured), the order rotating from round to round, after one round not kept (the staging
 * buffers' first use, code run the first time); at least `min` rounds, then more until the size's `boxMs` is spent,
 * at most `max`. The figures are the medians — what a benchmark's warm median compares — not the fastest call: in
 * Chromium on the H100 writeBuffer's fastest of five calls (0.58 ms at 1 MiB) was far below its median (0.71–0.82),
 * so the fastest call favoured the way with the wider spread.
 */
const WARM = { min: 5, max: 21, boxMs: 24, minLarge: 2 } as const;

/** The median of `xs` (not empty; sorted in place). */
function median(xs: number[]): number {
  xs.sort((a, b) => a - b);
  const mid = xs.length >> 1;
  return xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
}

/**
 * Warm figures at `n` bytes (see {@link WARM}): the median ms + wait of each of `ways` over `rounds` rounds in
 * rotating order, each call after `between` (untimed, waited for): a small writeBuffer, as an application's small
 * uploads come between its large ones. Without it the figures held only for a run of same-size uploads: dawn.node
 * on the H200, 4 MiB writeBuffer + wait 0.35 ms in such a run, 1.64 ms right after a 1 KiB writeBuffer (its own
 * upload memory then has no 4 MiB free), against 0.68 ms for a kept staging buffer (bench/gpu/writebuffer-after.mjs);
 * setup chose writeBuffer for 4 MiB, and on a long-lived device running every size it took 2.02 ms against 0.75
 * hand-written (bench/gpu/app.js). Above 4 MiB at least {@link WARM}.minLarge rounds and no round left out (a round
 * there costs tens of ms in a browser).
 */
export async function warmFigures(
  device: GPUDevice,
  writes: WriteRing,
  n: number,
  ways: readonly (() => void)[],
  between: () => void = () => undefined,
): Promise<{ medians: number[]; rounds: number }> {
  const large = n > 4 * MiB;
  const samples = ways.map((): number[] => []);
  const t0 = now();
  let rounds = 0;
  for (let i = large ? 0 : -1; i < WARM.max; i++) {
    if (i >= (large ? WARM.minLarge : WARM.min) && now() - t0 > WARM.boxMs) break;
    const times: number[] = [];
    for (let j = 0; j < ways.length; j++) {
      const k = (j + Math.max(i, 0)) % ways.length;
      between();
      await device.queue.onSubmittedWorkDone();
      times[k] = await timed(device, ways[k]!);
    }
    await writes.settled(); // the staging buffers are mapped again before the next round, as after any pause
    if (i < 0) continue;
    for (let k = 0; k < ways.length; k++) samples[k]!.push(times[k]!);
    rounds += 1;
  }
  return { medians: samples.map(median), rounds };
}

/** Time `fn` then the queue's completion (ms). */
export async function timed(device: GPUDevice, fn: () => void): Promise<number> {
  const t0 = now();
  fn();
  await device.queue.onSubmittedWorkDone();
  return now() - t0;
}

/** The way that took less time (writeBuffer on a tie: it keeps no memory); staging only by `margin`. */
export const faster = (writeBuffer: number, staging: number, margin = 1): UploadWay =>
  staging * margin < writeBuffer ? "staging" : "writeBuffer";

/**
 * How much faster than writeBuffer a staging way's warm median must be for a class to stage warm. writeBuffer keeps
 * no memory and showed no slow mode, while staging in Chromium on the H100 switches between a fast mode and a ~2 ms
 * stall that lasts many calls; and a setup has few rounds at the larger sizes (5 at 4 MiB). A near tie was a loss:
 * 4 MiB in 1 MiB pieces measured 0.995 ms at setup against writeBuffer's 1.10 (10 % faster) and then took 1.33 ms
 * in the bench against writeBuffer's 1.13. Where staging won, it won by far more (1 MiB in pieces 0.52 against 0.69,
 * 35 %; 16 MiB 2.5–5.2 against 13.8–21.1 ms).
 */
export const WARM_MARGIN = 1.15;

/**
 * The warm way of a size and its pieces from the medians: staging in the plan's pieces or in a smaller piece size
 * where that was at least {@link WARM_MARGIN} times faster (more pieces are more maps and submits: a near tie keeps
 * the plan's), against writeBuffer — staging only where at least {@link WARM_MARGIN} times faster. Pieces won by
 * far where they won for a reason (Chromium on the H100, 1 MiB: 256 KiB pieces 0.52 ms against one piece's 2.6,
 * the staged-upload stall); a near win was the setup's few rounds: dawn.node on the H200, a setup that took 4 MiB
 * pieces at 16 MiB, then ctx.upload 1.89–2.41 ms against one kept buffer's 1.68–2.01 in the same rounds
 * (bench/gpu/upload-split.mjs, bench/results-gpu-upload-split-h200.json).
 */
export function warmWay(
  writeBuffer: number,
  staging: number,
  pieces: readonly PieceFigure[],
): { warm: UploadWay; pieceBytes: number } {
  let best = { staging, pieceBytes: 0 };
  for (const p of pieces) if (p.staging * WARM_MARGIN < best.staging) best = p;
  const warm = faster(writeBuffer, best.staging, WARM_MARGIN);
  return { warm, pieceBytes: warm === "staging" ? best.pieceBytes : 0 };
}
