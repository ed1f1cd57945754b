// Benchmark (not a test): the caching allocator and pointer translation in headless Chromium (WebGPU on SwiftShader).
//
//   1. alloc + free of 1 KiB and 16 MiB: webdlpack `bucket` mode (allocWebGPU and allocWebGPUSync, cache warm)
//      vs raw device.createBuffer + destroy. Each run does `ops` cycles then awaits queue.onSubmittedWorkDone(),
//      so the GPU process has really done the work being timed (createBuffer alone only queues a message);
//      raw runs also submit an empty command buffer so Dawn reclaims destroyed memory (without it the GPU
//      process dies after ~900 × 16 MiB, see js/src/context/destroy-throttle.ts).
//   2. gpuPointerToBuffer(ptr) per call vs `array[i]` over 1024 live pointers.
//
// Reports median and min per operation over repeated runs; writes bench/out/allocator.json and prints a table.
// Usage: node bench/allocator.mjs   (after `make js`)
import { chromium } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { startServer } from "../scripts/serve.mjs";
import { browserSettings } from "../playwright.config.mjs";

const server = await startServer({ port: 0, quiet: true });
const browser = await chromium.launch(browserSettings.launchOptions());
let exitCode = 0;
try {
  const page = await browser.newPage();
  page.on("pageerror", (err) => console.error(`[page error] ${err.message}`));
  await page.goto(`${server.url}/tests/browser/harness.html?pyodide=0`);
  await page.waitForFunction(() => window.harnessReady !== undefined);
  await page.evaluate(() => window.harnessReady);

  const alloc = await page.evaluate(async () => {
    const ctx = window.webdlpack.getContext();
    await ctx.setup({ cacheMode: "bucket" });
    const device = ctx.getWebGPUDevice(0);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const runs = 15;
    const summary = (perOp) => {
      const sorted = [...perOp].sort((a, b) => a - b);
      return { medianUs: sorted[Math.floor(sorted.length / 2)] * 1000, minUs: sorted[0] * 1000, runs: sorted.length };
    };
    const settle = async () => {
      device.queue.submit([device.createCommandEncoder().finish()]);
      await device.queue.onSubmittedWorkDone();
    };
    const out = {};
    // The timer is coarse without cross-origin isolation (100 µs here): cached cycles run many per run.
    for (const [name, nbytes, ops, cachedOps] of [["1 KiB", 1024, 2000, 2000], ["16 MiB", 16 * 2 ** 20, 8, 2000]]) {
      const raw = [];
      const bucketAsync = [];
      const bucketSync = [];
      // Warm the cache and the JIT.
      for (let i = 0; i < 3; i++) ctx.freeWebGPU(await ctx.allocWebGPU(nbytes));
      for (let r = 0; r < runs; r++) {
        await settle();
        let t0 = performance.now();
        for (let i = 0; i < ops; i++) device.createBuffer({ size: nbytes, usage }).destroy();
        await settle();
        raw.push((performance.now() - t0) / ops);

        await settle();
        t0 = performance.now();
        for (let i = 0; i < cachedOps; i++) ctx.freeWebGPU(await ctx.allocWebGPU(nbytes));
        await device.queue.onSubmittedWorkDone();
        bucketAsync.push((performance.now() - t0) / cachedOps);

        await settle();
        t0 = performance.now();
        for (let i = 0; i < cachedOps; i++) ctx.freeWebGPU(ctx.allocWebGPUSync(nbytes));
        await device.queue.onSubmittedWorkDone();
        bucketSync.push((performance.now() - t0) / cachedOps);
      }
      const d = ctx.stats().devices[0];
      out[name] = {
        nbytes, opsPerRun: ops, cachedOpsPerRun: cachedOps, raw: summary(raw), bucketAsync: summary(bucketAsync), bucketSync: summary(bucketSync),
        hits: d.hits, misses: d.misses,
      };
    }
    return out;
  });

  const translate = await page.evaluate(async () => {
    const ctx = window.webdlpack.getContext();
    const n = 1024;
    const ptrs = [];
    for (let i = 0; i < n; i++) ptrs.push(ctx.allocWebGPUSync(16));
    const array = ptrs.map((p) => ctx.gpuPointerToBuffer(p));
    const calls = 2_000_000;
    const viaTable = () => {
      let same = 0;
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) if (ctx.gpuPointerToBuffer(ptrs[i & (n - 1)]) === array[0]) same += 1;
      return { ms: performance.now() - t0, same };
    };
    const viaArray = () => {
      let same = 0;
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) if (array[i & (n - 1)] === array[0]) same += 1;
      return { ms: performance.now() - t0, same };
    };
    const table = [];
    const plain = [];
    for (let r = 0; r < 15; r++) {
      const a = viaTable();
      const b = viaArray();
      if (a.same !== b.same) throw new Error("translation disagrees with the array");
      table.push((a.ms * 1e6) / calls);
      plain.push((b.ms * 1e6) / calls);
    }
    for (const p of ptrs) ctx.freeWebGPU(p);
    const summary = (perCallNs) => {
      const sorted = [...perCallNs].sort((x, y) => x - y);
      return { medianNs: sorted[Math.floor(sorted.length / 2)], minNs: sorted[0], runs: sorted.length };
    };
    return { calls, pointers: n, gpuPointerToBuffer: summary(table), arrayIndex: summary(plain) };
  });

  const result = { chromium: browser.version(), date: new Date().toISOString(), alloc, translate };
  for (const row of Object.values(alloc)) {
    row.speedupAsync = row.raw.medianUs / row.bucketAsync.medianUs;
    row.speedupSync = row.raw.medianUs / row.bucketSync.medianUs;
  }
  translate.ratio = translate.gpuPointerToBuffer.medianNs / translate.arrayIndex.medianNs;
  mkdirSync(new URL("./out/", import.meta.url), { recursive: true });
  writeFileSync(new URL("./out/allocator.json", import.meta.url), JSON.stringify(result, null, 2) + "\n");

  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
  console.log(`webdlpack allocator benchmark — Chromium ${result.chromium}, WebGPU on SwiftShader`);
  console.log("");
  console.log("alloc + free, µs per cycle (median / min)      raw create+destroy   bucket async        bucket sync         speedup (async, sync)");
  for (const [name, row] of Object.entries(alloc)) {
    console.log(`  ${name.padEnd(8)} (${String(row.opsPerRun).padStart(4)} raw / ${row.cachedOpsPerRun} cached per run × ${row.raw.runs}) `.padEnd(47) +
      `${`${fmt(row.raw.medianUs)} / ${fmt(row.raw.minUs)}`.padEnd(21)}${`${fmt(row.bucketAsync.medianUs)} / ${fmt(row.bucketAsync.minUs)}`.padEnd(20)}` +
      `${`${fmt(row.bucketSync.medianUs)} / ${fmt(row.bucketSync.minUs)}`.padEnd(20)}${fmt(row.speedupAsync)}×, ${fmt(row.speedupSync)}×`);
  }
  console.log("");
  console.log(`translation, ns per call (median / min over ${translate.gpuPointerToBuffer.runs} runs of ${translate.calls} calls)`);
  console.log(`  gpuPointerToBuffer(ptr)  ${fmt(translate.gpuPointerToBuffer.medianNs)} / ${fmt(translate.gpuPointerToBuffer.minNs)}`);
  console.log(`  array[i]                 ${fmt(translate.arrayIndex.medianNs)} / ${fmt(translate.arrayIndex.minNs)}`);
  console.log(`  ratio                    ${fmt(translate.ratio)}× (target: within 2×)`);
  const at16 = alloc["16 MiB"];
  console.log("");
  console.log(`targets: ≥ 10× at 16 MiB → ${at16.speedupAsync >= 10 ? "met" : "NOT met"} (${fmt(at16.speedupAsync)}× async); ` +
    `translation within 2× → ${translate.ratio <= 2 ? "met" : "NOT met"} (${fmt(translate.ratio)}×)`);
  console.log("wrote bench/out/allocator.json");
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await browser.close();
  await server.close();
}
process.exit(exitCode);
