// Timing helpers shared by the GPU transfer benchmarks in Node (dawn.node) and in Chromium (a page):
// plain ESM with no imports, so both load it as is. Every row is a list of samples in milliseconds;
// the runner turns them into median/min (bench/lib.mjs summarize) — never a pass/fail.

/** Sizes the transfer rows run at (bytes). */
export const KiB = 1024;
export const MiB = 1024 * 1024;

/** Row record: name, bytes, samples (ms), plus optional notes. Median/min/GB/s are added by the runner. */
export function row(name, nbytes, samples, extra = {}) {
  return { name, nbytes, samples, ...extra };
}

/** The pattern's word at index `i` (a hash of the index, so a GPU shader computes the same: suite.js). */
export function patternWord(i, seed) {
  let x = (Math.imul(i, 0x9e3779b9) ^ seed) >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Fill `bytes` with a pattern that differs per position (never zeros: zeros hide unwritten outputs). */
export function pattern(bytes, seed = 1) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
  for (let i = 0; i < words.length; i++) words[i] = patternWord(i, seed);
  for (let i = words.length * 4; i < bytes.byteLength; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

/** Throw unless `a` and `b` hold the same bytes (a benchmark that moves wrong bytes measures nothing). */
export function checkSame(a, b, what) {
  if (a.byteLength !== b.byteLength) throw new Error(`${what}: ${a.byteLength} bytes vs ${b.byteLength}`);
  const step = Math.max(1, Math.floor(a.byteLength / 4099));
  for (let i = 0; i < a.byteLength; i += step) {
    if (a[i] !== b[i]) throw new Error(`${what}: byte ${i} is ${a[i]}, expected ${b[i]}`);
  }
  if (a[a.byteLength - 1] !== b[b.byteLength - 1]) throw new Error(`${what}: last byte differs`);
}

/** Warm rounds by size (a round times every variant once): at least minRuns, at most maxRuns, until budgetMs is spent. */
export function budgetFor(nbytes) {
  if (nbytes >= 256 * MiB) return { minRuns: 5, maxRuns: 7, budgetMs: 6000 };
  if (nbytes >= 16 * MiB) return { minRuns: 7, maxRuns: 31, budgetMs: 3000 };
  return { minRuns: 15, maxRuns: 201, budgetMs: 1500 };
}
