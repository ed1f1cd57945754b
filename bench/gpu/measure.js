// Timing helpers shared by the GPU transfer benchmarks in Node (dawn.node) and in Chromium (a page):
// plain ESM with no imports, so both load it as is. Every row is a list of samples in milliseconds;
// the runner turns them into median/min (bench/lib.mjs summarize) — never a pass/fail.

/** Sizes the transfer rows run at (bytes). */
export const KiB = 1024;
export const MiB = 1024 * 1024;

/**
 * Time `fn` (async) repeatedly: `warmup` untimed calls, then at least `minRuns` and at most
 * `maxRuns` timed ones, stopping once `budgetMs` of timed work has passed. `setup` (untimed) runs
 * before every call and its result is passed to `fn`. Returns the samples in ms.
 */
export async function sample(fn, { warmup = 2, minRuns = 5, maxRuns = 200, budgetMs = 400, setup } = {}) {
  const now = () => performance.now();
  for (let i = 0; i < warmup; i++) await fn(setup ? await setup() : undefined);
  const out = [];
  let spent = 0;
  while (out.length < maxRuns && (out.length < minRuns || spent < budgetMs)) {
    const arg = setup ? await setup() : undefined;
    const t0 = now();
    await fn(arg);
    const dt = now() - t0;
    out.push(dt);
    spent += dt;
  }
  return out;
}

/** The median of `samples`. */
export function median(samples) {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Row record: name, bytes, samples (ms), plus optional notes. Median/min/GB/s are added by the runner. */
export function row(name, nbytes, samples, extra = {}) {
  return { name, nbytes, samples, ...extra };
}

/** Fill `bytes` with a pattern that differs per position (never zeros: zeros hide unwritten outputs). */
export function pattern(bytes, seed = 1) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
  let x = (seed * 2654435761) >>> 0;
  for (let i = 0; i < words.length; i++) {
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    words[i] = x;
  }
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

/** Budget per row by size: enough samples for a stable median without making the run long. */
export function budgetFor(nbytes) {
  if (nbytes >= 256 * MiB) return { warmup: 1, minRuns: 3, maxRuns: 7, budgetMs: 1500 };
  if (nbytes >= 16 * MiB) return { warmup: 2, minRuns: 5, maxRuns: 31, budgetMs: 600 };
  return { warmup: 3, minRuns: 15, maxRuns: 301, budgetMs: 250 };
}
