// How sure a ratio of two medians is: a percentile bootstrap interval from the samples behind them.
import { seeded } from "./suite.js";

/** The median as the reports take it (the upper middle of an even count). */
export function median(values) {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * The 95 % percentile bootstrap interval of median(best) ÷ median(ours), from `resamples` resamplings of the samples.
 * Samples of equal count are taken as paired (the same round timed both: one index draws both), as the rounds of
 * bench/gpu/suite.js and app.js are; otherwise each side is resampled on its own. Null with fewer than 3 samples a
 * side: no interval says anything there.
 *
 * @param {number[]} ours webdlpack's samples (ms)
 * @param {number[]} best the best hand-written variant's samples (ms), from the same run, size and phase
 * @returns {{ low: number, high: number } | null}
 */
export function ratioInterval(ours, best, resamples = 2000, seed = 0x9e3779b9) {
  if (ours.length < 3 || best.length < 3) return null;
  const random = seeded(seed);
  const paired = ours.length === best.length;
  const a = new Float64Array(ours.length);
  const b = new Float64Array(best.length);
  const ratios = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < a.length; i++) {
      const k = Math.floor(random() * a.length);
      a[i] = ours[k];
      if (paired) b[i] = best[k];
    }
    if (!paired) for (let i = 0; i < b.length; i++) b[i] = best[Math.floor(random() * b.length)];
    ratios[r] = median(b) / median(a);
  }
  ratios.sort();
  return { low: ratios[Math.floor(0.025 * resamples)], high: ratios[Math.ceil(0.975 * resamples) - 1] };
}
