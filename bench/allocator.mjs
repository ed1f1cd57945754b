// Benchmark (not a test): the caching allocator and pointer translation in headless Chromium (WebGPU on SwiftShader).
//
//   1. alloc + free of 1 KiB and 16 MiB: webdlpack `bucket` mode (allocWebGPUChecked awaited and allocWebGPU synchronous, cache warm)
//      vs raw device.createBuffer + destroy. Each run does `ops` cycles then awaits queue.onSubmittedWorkDone(),
//      so the GPU process has really done the work being timed (createBuffer alone only queues a message);
//      raw runs also submit an empty command buffer so Dawn reclaims destroyed memory (without it the GPU
//      process dies after ~900 × 16 MiB, see js/src/context/allocation/destroy-throttle.ts).
//   2. gpuPointerToBuffer(ptr) per call vs `array[handle]` over 1024 live pointers, handles read from a
//      Uint32Array (as from wasm memory); plus `array[handle]` with a throwing miss check. In V8 any lookup
//      that can raise an error (a call site on its cold path) costs ~1.5 ns more per call than a bare index.
//
// Reports median and min per operation over repeated runs; writes bench/out/allocator.json and prints a table.
// Usage: node bench/allocator.mjs   (after `make js`)
import { chromium } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { startServer } from "../scripts/serve.mjs";
import { browserSettings } from "../scripts/browser-settings.mjs";

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
    for (const [name, nbytes, ops, cachedOps] of [
      ["1 KiB", 1024, 2000, 2000],
      ["16 MiB", 16 * 2 ** 20, 8, 2000],
    ]) {
      const raw = [];
      const bucketAsync = [];
      const bucketSync = [];
      // Warm the cache and the JIT.
      for (let i = 0; i < 3; i++) ctx.freeWebGPU(await ctx.allocWebGPUChecked(nbytes));
      for (let r = 0; r < runs; r++) {
        await settle();
        let t0 = performance.now();
        for (let i = 0; i < ops; i++) device.createBuffer({ size: nbytes, usage }).destroy();
        await settle();
        raw.push((performance.now() - t0) / ops);

        await settle();
        t0 = performance.now();
        for (let i = 0; i < cachedOps; i++) ctx.freeWebGPU(await ctx.allocWebGPUChecked(nbytes));
        await device.queue.onSubmittedWorkDone();
        bucketAsync.push((performance.now() - t0) / cachedOps);

        await settle();
        t0 = performance.now();
        for (let i = 0; i < cachedOps; i++) ctx.freeWebGPU(ctx.allocWebGPU(nbytes));
        await device.queue.onSubmittedWorkDone();
        bucketSync.push((performance.now() - t0) / cachedOps);
      }
      const d = ctx.stats().devices[0];
      out[name] = {
        nbytes,
        opsPerRun: ops,
        cachedOpsPerRun: cachedOps,
        raw: summary(raw),
        bucketAsync: summary(bucketAsync),
        bucketSync: summary(bucketSync),
        hits: d.hits,
        misses: d.misses,
      };
    }
    return out;
  });

  const translate = await page.evaluate(async () => {
    const ctx = window.webdlpack.getContext();
    const n = 1024;
    const ptrs = [];
    for (let i = 0; i < n; i++) ptrs.push(ctx.allocWebGPU(16));
    const array = ptrs.map((p) => ctx.gpuPointerToBuffer(p));
    // Every variant reads its handle from a Uint32Array, as a consumer reads DLTensor.data from wasm memory.
    const pointers = new Uint32Array(ptrs);
    const handles = new Uint32Array(n).map((_, i) => i);
    const missing = (h) => {
      throw new Error(`no buffer at index ${h}`);
    };
    const calls = 2_000_000;
    // One hand-written loop per variant, so each call site stays monomorphic and inlinable.
    const timed = (body) => {
      const t0 = performance.now();
      const same = body();
      return { ms: performance.now() - t0, same };
    };
    const variants = {
      // webdlpack: generation-checked, exact typed error on a bad pointer.
      gpuPointerToBuffer: () =>
        timed(() => {
          let same = 0;
          for (let i = 0; i < calls; i++) if (ctx.gpuPointerToBuffer(pointers[i & (n - 1)]) === array[0]) same += 1;
          return same;
        }),
      // The bare baseline: `array[handle]`, no check at all (a bad handle silently gives undefined).
      arrayIndex: () =>
        timed(() => {
          let same = 0;
          for (let i = 0; i < calls; i++) if (array[handles[i & (n - 1)]] === array[0]) same += 1;
          return same;
        }),
      // The same lookup with the least error handling a real API needs: a miss throws.
      arrayIndexChecked: () =>
        timed(() => {
          let same = 0;
          for (let i = 0; i < calls; i++) {
            const h = handles[i & (n - 1)];
            const b = array[h];
            if ((b !== undefined ? b : missing(h)) === array[0]) same += 1;
          }
          return same;
        }),
    };
    const perCall = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
    for (let r = 0; r < 15; r++) {
      let same = -1;
      for (const [name, run] of Object.entries(variants)) {
        const result = run();
        if (same !== -1 && result.same !== same)
          throw new Error(`translation variant ${name} disagrees with the others`);
        same = result.same;
        perCall[name].push((result.ms * 1e6) / calls);
      }
    }
    for (const p of ptrs) ctx.freeWebGPU(p);
    const summary = (perCallNs) => {
      const sorted = [...perCallNs].sort((x, y) => x - y);
      return { medianNs: sorted[Math.floor(sorted.length / 2)], minNs: sorted[0], runs: sorted.length };
    };
    return {
      calls,
      pointers: n,
      gpuPointerToBuffer: summary(perCall.gpuPointerToBuffer),
      arrayIndex: summary(perCall.arrayIndex),
      arrayIndexChecked: summary(perCall.arrayIndexChecked),
    };
  });

  const result = { chromium: browser.version(), date: new Date().toISOString(), alloc, translate };
  for (const row of Object.values(alloc)) {
    row.speedupAsync = row.raw.medianUs / row.bucketAsync.medianUs;
    row.speedupSync = row.raw.medianUs / row.bucketSync.medianUs;
  }
  translate.ratio = translate.gpuPointerToBuffer.medianNs / translate.arrayIndex.medianNs;
  translate.ratioChecked = translate.gpuPointerToBuffer.medianNs / translate.arrayIndexChecked.medianNs;
  mkdirSync(new URL("./out/", import.meta.url), { recursive: true });
  writeFileSync(new URL("./out/allocator.json", import.meta.url), JSON.stringify(result, null, 2) + "\n");

  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
  console.log(`webdlpack allocator benchmark — Chromium ${result.chromium}, WebGPU on SwiftShader`);
  console.log("");
  console.log(
    "alloc + free, µs per cycle (median / min)      raw create+destroy   bucket async        bucket sync         speedup (async, sync)",
  );
  for (const [name, row] of Object.entries(alloc)) {
    console.log(
      `  ${name.padEnd(8)} (${String(row.opsPerRun).padStart(4)} raw / ${row.cachedOpsPerRun} cached per run × ${row.raw.runs}) `.padEnd(
        47,
      ) +
        `${`${fmt(row.raw.medianUs)} / ${fmt(row.raw.minUs)}`.padEnd(21)}${`${fmt(row.bucketAsync.medianUs)} / ${fmt(row.bucketAsync.minUs)}`.padEnd(20)}` +
        `${`${fmt(row.bucketSync.medianUs)} / ${fmt(row.bucketSync.minUs)}`.padEnd(20)}${fmt(row.speedupAsync)}×, ${fmt(row.speedupSync)}×`,
    );
  }
  console.log("");
  console.log(
    `translation, ns per call (median / min over ${translate.gpuPointerToBuffer.runs} runs of ${translate.calls} calls)`,
  );
  console.log(
    `  gpuPointerToBuffer(ptr)  ${fmt(translate.gpuPointerToBuffer.medianNs)} / ${fmt(translate.gpuPointerToBuffer.minNs)}`,
  );
  console.log(
    `  array[handle]            ${fmt(translate.arrayIndex.medianNs)} / ${fmt(translate.arrayIndex.minNs)}   ratio ${fmt(translate.ratio)}× (target: within 2×)`,
  );
  console.log(
    `  array[handle] + miss     ${fmt(translate.arrayIndexChecked.medianNs)} / ${fmt(translate.arrayIndexChecked.minNs)}   ratio ${fmt(translate.ratioChecked)}× (same lookup, a miss throws)`,
  );
  const at16 = alloc["16 MiB"];
  console.log("");
  console.log(
    `targets: ≥ 10× at 16 MiB → ${at16.speedupAsync >= 10 ? "met" : "NOT met"} (${fmt(at16.speedupAsync)}× async); ` +
      `translation within 2× → ${translate.ratio <= 2 ? "met" : "NOT met"} (${fmt(translate.ratio)}×)`,
  );
  console.log("wrote bench/out/allocator.json");
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await browser.close();
  await server.close();
}
process.exit(exitCode);
