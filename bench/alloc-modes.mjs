// Benchmark (not a test): alloc + free cycles through the context in each cache mode
// (disabled, lazyRelease, simple, bucket) vs raw device.createBuffer + destroy, at 1 KiB
// and 16 MiB, in headless Chromium (WebGPU on SwiftShader).
//
// Each run does `ops` cycles and then waits for queue.onSubmittedWorkDone() (lazyRelease:
// ctx.flush()), so the GPU process has done the work being timed; raw runs submit an empty
// command buffer first so Dawn reclaims the destroyed memory (see destroy-throttle.ts).
// Modes that create a buffer per cycle (raw, disabled, lazyRelease) do few cycles per run at
// 16 MiB; caching modes hit the cache and do many. Writes bench/out/alloc-modes.json.
// Usage: node bench/alloc-modes.mjs   (after `make js`)
import { summarize, withBenchPage, writeOut } from "./lib.mjs";

export const MODES = ["disabled", "lazyRelease", "simple", "bucket"];
export const SIZES = [1024, 16 * 2 ** 20];

/** Runs in the page: per-cycle milliseconds of each run, for raw and every mode, at `nbytes`. */
async function measureInPage({ nbytes, modes, runs, ops }) {
  const ctx = window.webdlpack.getContext();
  await ctx.setup();
  const device = ctx.getWebGPUDevice(0);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const settle = async () => {
    device.queue.submit([device.createCommandEncoder().finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  const samples = { raw: [] };
  for (const mode of modes) samples[mode] = [];
  const cached = (mode) => mode === "simple" || mode === "bucket";
  const count = (mode) => (nbytes >= 2 ** 20 && !cached(mode) ? ops.big : ops.small);
  const stats = {};
  // One block per mode (switching to disabled / lazyRelease empties the cache, so modes are not interleaved).
  for (const mode of ["raw", ...modes]) {
    const n = count(mode);
    const cycle =
      mode === "raw"
        ? async () => device.createBuffer({ size: nbytes, usage }).destroy()
        : async () => ctx.freeWebGPU(await ctx.allocWebGPUChecked(nbytes, { owner: `bench.${mode}` }));
    if (mode !== "raw") ctx.setCacheMode(mode);
    for (let i = 0; i < 3; i++) await cycle(); // warm the cache and the JIT
    for (let r = 0; r < runs; r++) {
      await ctx.flush();
      await settle();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await cycle();
      if (mode === "raw") await settle();
      else await ctx.flush();
      samples[mode].push((performance.now() - t0) / n);
    }
  }
  for (const row of ctx.stats().owners)
    if (row.owner.startsWith("bench.")) stats[row.owner.slice(6)] = { hits: row.hits, misses: row.misses };
  ctx.setCacheMode("bucket");
  return { samples, cycles: Object.fromEntries(["raw", ...modes].map((m) => [m, count(m)])), stats };
}

/** Run the allocator-mode benchmark; returns `{chromium, sizes: {nbytes: {raw, disabled, …}}}` (µs per cycle). */
export async function allocModes({ runs = 9 } = {}) {
  return withBenchPage("/tests/browser/harness.html?pyodide=0", "harnessReady", async (page, chromium) => {
    const sizes = {};
    for (const nbytes of SIZES) {
      const r = await page.evaluate(measureInPage, { nbytes, modes: MODES, runs, ops: { small: 500, big: 8 } });
      const row = {};
      for (const [name, perCycleMs] of Object.entries(r.samples)) {
        const s = summarize(perCycleMs.map((ms) => ms * 1000));
        row[name] = {
          medianUs: s.median,
          minUs: s.min,
          runs: s.runs,
          cyclesPerRun: r.cycles[name],
          ...(r.stats[name] ?? {}),
        };
      }
      for (const mode of MODES) row[mode].speedupVsRaw = row.raw.medianUs / row[mode].medianUs;
      sizes[nbytes] = row;
    }
    return { chromium, sizes };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await allocModes();
  writeOut("alloc-modes", result);
  for (const [n, row] of Object.entries(result.sizes)) {
    console.log(
      `${n} B: ` +
        Object.entries(row)
          .map(
            ([k, v]) => `${k} ${v.medianUs.toFixed(1)} µs${v.speedupVsRaw ? ` (${v.speedupVsRaw.toFixed(1)}×)` : ""}`,
          )
          .join(", "),
    );
  }
}
