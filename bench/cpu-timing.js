// The timing harness of the CPU exchange benchmark (bench/cpu-exchange.js): repetitions calibrated to a minimum
// sample time, a warm-up of every case until none is still getting faster, and round-robin sampling in a new fixed
// shuffled order each round, each sample after an untimed lead-in of the same case. Plain ESM with no imports: the
// page (bench/bench.html) and Node (bench/node-exchange.mjs) load it as is.

function calibrate(fn, minMs) {
  // Inner repetitions so one sample lasts at least minMs.
  let reps = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn();
    const dt = performance.now() - t0;
    if (dt >= minMs || reps >= 1 << 20) return reps;
    reps *= dt < minMs / 10 ? 10 : 2;
  }
}

function sampleOnce(fn, reps) {
  // performance.now() is coarse without cross-origin isolation (tens of µs): a sample that read 0 was
  // shorter than one tick, so it is repeated with more repetitions rather than reported as free.
  for (let n = reps; ; n *= 2) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    const dt = performance.now() - t0;
    if (dt > 0 || n >= 1 << 24) return (dt / n) * 1000; // µs per exchange
  }
}

/**
 * Warm every case up, round-robin, until none is still getting faster: V8 runs wasm first in its baseline tier and
 * compiles a function with TurboFan in the background only once it has run a while (JS functions tier up alike),
 * so a path first run by the bench (webdlpack's side modules, ctypes' calls, its own JS) starts several times slower
 * and settles after 0.3-1 s of running on this machine — much longer than one calibration. The same for every case,
 * copies and webdlpack alike: slices of `sliceMs` per case and round; a case has settled when its best slice has not
 * improved by 3% for `quietRounds` rounds; stops when all have (at least `minRounds`), or after `maxMs`.
 * Returns, per case, its first slice (µs per exchange, cold) and when its best was reached (ms of its own running).
 */
export function warmUp(cases, { sliceMs = 20, minRounds = 8, quietRounds = 5, maxMs = 8000 } = {}) {
  const state = cases.map((c) => ({ c, best: Infinity, bestRound: 0, first: 0, ranMs: 0, bestAtMs: 0 }));
  const t0 = performance.now();
  for (let round = 0; ; round++) {
    for (const s of state) {
      const ts = performance.now();
      let n = 0;
      for (let batch = 1; performance.now() - ts < sliceMs; batch = Math.min(batch * 2, 4096)) {
        for (let i = 0; i < batch; i++) s.c.fn();
        n += batch;
      }
      const dt = performance.now() - ts;
      const us = (dt / n) * 1000;
      s.ranMs += dt;
      if (round === 0) s.first = us;
      if (us < s.best * 0.97) Object.assign(s, { bestRound: round, bestAtMs: s.ranMs });
      s.best = Math.min(s.best, us);
    }
    const settled = state.every((s) => round - s.bestRound >= quietRounds);
    if ((round + 1 >= minRounds && settled) || performance.now() - t0 > maxMs) {
      return state.map((s) => ({ case: s.c.case, first_us: s.first, settled_ms: s.bestAtMs, rounds: round + 1 }));
    }
  }
}

/**
 * Before each sample, a lead-in: the case runs untimed for a quarter of a sample. Otherwise a case pays for the
 * garbage of the case sampled before it (V8 marks and sweeps while the next case runs): at 1 KiB, where the copies
 * make a new 1 KiB array every 1-2 µs, 5 of 9 c→py samples of one page ran 1.5-2× slower throughout, and none of 9
 * with a gc() before each sample. A forced collection also changed other rows (js→c 0.12 instead of 0.08 µs), so the
 * debt is paid with the case's own work instead, untimed; each case still pays within its samples for the garbage it
 * makes itself.
 */
function leadIn(fn, reps) {
  for (let i = reps >> 2; i > 0; i--) fn();
}

/** The order of round `round` over `n` cases: a shuffle (Fisher-Yates) by a fixed generator, the same every run. */
function roundOrder(n, round) {
  let state = (0x9e3779b9 ^ Math.imul(round + 1, 0x85ebca6b)) >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** Time every case (`{fn, samples, ...meta}`) round-robin; one result row per case, with its meta fields. */
export function timeCases(cases, minMs) {
  const entries = cases.map((c) => ({ ...c, per: [] }));
  for (const e of entries) calibrate(e.fn, minMs); // warm-up (JIT, caches)
  for (const e of entries) e.reps = calibrate(e.fn, minMs);
  // Round-robin in a new order each round (roundOrder), so no case always follows the same neighbour, whose garbage
  // it would partly pay for (measured in one page: c→py right after PyProxy.toJs's copy 2.5 µs, after most cases
  // 1.5), nor always runs first or last in a round.
  const rounds = Math.max(...entries.map((e) => e.samples));
  for (let s = 0; s < rounds; s++) {
    for (const k of roundOrder(entries.length, s)) {
      const e = entries[k];
      if (e.per.length >= e.samples) continue;
      leadIn(e.fn, e.reps);
      e.per.push(sampleOnce(e.fn, e.reps));
    }
  }
  return entries.map(({ fn, per, ...meta }) => {
    const sorted = [...per].sort((a, b) => a - b);
    return { ...meta, median_us: sorted[Math.floor(sorted.length / 2)], min_us: sorted[0], samples_us: per };
  });
}
