/**
 * bench/gpu/interval.mjs and the report's sentence on it: how sure a benchmark cell's ratio (the best hand-written
 * median ÷ webdlpack's) is, from the samples behind the two medians. Made-up samples with known answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./helpers.js";

type Interval = { low: number; high: number } | null;
interface IntervalModule {
  ratioInterval(ours: number[], best: number[], resamples?: number, seed?: number): Interval;
}
interface Target {
  nbytes: number;
  phase: string;
  what: string;
  ratio: number;
  met: boolean;
  low: number | null;
  high: number | null;
}
interface ReportModule {
  intervalText(targets: Target[]): string;
}
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(repoRoot(), path)).href)) as T;

/** `count` samples around `center`, spread ± `spread` in a fixed pattern (no randomness in the test). */
const around = (center: number, spread: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => center + spread * Math.sin(i * 2.399963));

test("paired rounds: a webdlpack twice as slow in every round gives exactly 0.5, however noisy the rounds", async () => {
  const { ratioInterval } = await load<IntervalModule>("bench/gpu/interval.mjs");
  const best = around(1, 0.4, 40);
  const ours = best.map((x) => 2 * x);
  assert.deepEqual(ratioInterval(ours, best), { low: 0.5, high: 0.5 });
  assert.deepEqual(ratioInterval(best, best), { low: 1, high: 1 });
});

test("unpaired samples: the interval holds the ratio of the medians and narrows with less noise", async () => {
  const { ratioInterval } = await load<IntervalModule>("bench/gpu/interval.mjs");
  const noisy = ratioInterval(around(2, 0.6, 31), around(1, 0.3, 21))!;
  const quiet = ratioInterval(around(2, 0.06, 31), around(1, 0.03, 21))!;
  for (const i of [noisy, quiet]) assert.ok(i.low <= 0.5 && 0.5 <= i.high, JSON.stringify(i));
  assert.ok(quiet.high - quiet.low < noisy.high - noisy.low, `${JSON.stringify(quiet)} vs ${JSON.stringify(noisy)}`);
  assert.ok(noisy.low > 0.3 && noisy.high < 0.8, JSON.stringify(noisy));
});

test("the same samples give the same interval; fewer than 3 a side give none", async () => {
  const { ratioInterval } = await load<IntervalModule>("bench/gpu/interval.mjs");
  const ours = around(1.1, 0.3, 25);
  const best = around(1, 0.3, 25);
  assert.deepEqual(ratioInterval(ours, best), ratioInterval(ours, best));
  assert.equal(ratioInterval([1, 2], best), null);
  assert.equal(ratioInterval(ours, [1]), null);
});

test("the report names each cell below 1 with its interval and counts those surely below 0.9", async () => {
  const { intervalText } = await load<ReportModule>("bench/gpu/report.mjs");
  const cell = (nbytes: number, ratio: number, low: number, high: number): Target => ({
    nbytes,
    phase: "warm",
    what: "upload",
    ratio,
    met: ratio >= 1,
    low,
    high,
  });
  const text = intervalText([
    cell(1024, 0.8, 0.75, 0.85), // below 0.9 over the whole interval
    cell(16384, 0.85, 0.8, 0.95), // below 0.9, but not surely
    cell(262144, 0.97, 0.92, 1.02), // below 1, reaches 1 within its interval
    cell(1048576, 1.1, 1.05, 1.15), // met: not listed
  ]);
  assert.match(
    text,
    /1 KiB warm upload 0\.80 \(0\.75–0\.85\); 16 KiB warm upload 0\.85 \(0\.80–0\.95\); 256 KiB warm upload 0\.97 \(0\.92–1\.02\)\./,
  );
  assert.doesNotMatch(text, /1 MiB/);
  assert.match(
    text,
    /Of the 2 below 0\.9, 1 stay below 0\.9 over the whole interval; of the 3 below 1, 1 reach 1 within it\./,
  );
  const allMet = [cell(1024, 1.2, 1.1, 1.3)];
  assert.equal(intervalText(allMet), "", "every cell at least 1: no sentence");
});
