#!/usr/bin/env node
/**
 * `make bench`: every benchmark in headless Chromium (WebGPU on SwiftShader),
 * never a timed test, in one run:
 *   CPU exchange Python ↔ JS ↔ C at 1 KiB … 64 MiB against copies of the same bytes, an FFI-call baseline, and a
 *   100 000-exchange loop per direction (bench.html + cpu-exchange.js + pyodide_cases.py),
 *   GPU hand-off vs readback + re-upload, ORT → TF.js and Python → JS (gpu-handoff.mjs),
 *   the same out of Transformers.js → TF.js and LiteRT.js → ORT (framework-handoff.mjs),
 *   tvmjs → ORT and ORT → tvmjs (tvm-handoff.mjs; the TVM models from `make tvm`),
 *   pretrained models on their frameworks' own devices vs the shared device (real-models.mjs; make real-models),
 *   allocator cache modes vs raw createBuffer (alloc-modes.mjs),
 *   the memory accounting's cost on those rows, counted vs untouched device (memory-cost.mjs),
 *   pointer translation per call (allocator.mjs),
 *   GPU transfers (upload, readback, GPU copy) against bare WebGPU anchors (gpu/chromium.mjs, its own results file).
 * Writes bench/results.json, bench/results.md and docs/benchmarks.md's section (report.mjs) and the PNG plots (plot.py).
 * Every ratio is against a baseline measured in this same run.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { allocModes } from "./alloc-modes.mjs";
import { frameworkHandoff } from "./framework-handoff.mjs";
import { memoryCost } from "./memory-cost.mjs";
import { gpuHandoff } from "./gpu-handoff.mjs";
import { tvmHandoff } from "./tvm-handoff.mjs";
import { realModelsBench } from "./real-models.mjs";
import { withBenchPage, writeOut } from "./lib.mjs";
import { markdownReport, readmeSection, replaceReadmeSection, targets } from "./report.mjs";

const KiB = 1024,
  MiB = 1024 * 1024;
const CPU_SIZES = [KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 16 * MiB, 64 * MiB];
const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0)} s`;

const out = {
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
  },
};

console.log("bench: CPU exchange Python ↔ JS ↔ C (bench/bench.html)");
await withBenchPage(
  "/bench/bench.html",
  "benchReady",
  async (page, chromium) => {
    out.browser = `Chromium ${chromium}`;
    Object.assign(out, await page.evaluate(() => window.benchInfo));
    out.cpuExchange = await page.evaluate((sizes) => window.benchmarks.cpuExchange({ sizes }), CPU_SIZES);
    out.cpuWarmUp = await page.evaluate(() => window.benchmarks.cpuWarmUp());
    out.exchangeLoop = await page.evaluate(() => window.benchmarks.exchangeLoop({ count: 100000, nbytes: 1024 }));
  },
  { isolated: false },
);

console.log(`bench: GPU hand-off vs readback + re-upload (${elapsed()})`);
out.gpuHandoff = await gpuHandoff();
writeOut("gpu-handoff", out.gpuHandoff);

console.log(
  `bench: framework hand-off vs readback + re-upload, Transformers.js → TF.js and LiteRT.js → ORT (${elapsed()})`,
);
out.frameworkHandoff = await frameworkHandoff();
writeOut("framework-handoff", out.frameworkHandoff);

console.log(`bench: tvmjs hand-off vs readback + re-upload, tvmjs → ORT and ORT → tvmjs (${elapsed()})`);
out.tvmHandoff = await tvmHandoff();
writeOut("tvm-handoff", out.tvmHandoff);

console.log(`bench: real models, own device vs shared device (bench/real-models.mjs, ${elapsed()})`);
out.realModels = await realModelsBench();
writeOut("real-models", out.realModels);

console.log(`bench: allocator cache modes vs raw createBuffer (${elapsed()})`);
out.allocModes = await allocModes();
writeOut("alloc-modes", out.allocModes);

console.log(`bench: memory accounting, counted vs untouched device (${elapsed()})`);
out.memoryCost = await memoryCost();
writeOut("memory-cost", out.memoryCost);

console.log(`bench: pointer translation, bucket async/sync (bench/allocator.mjs, ${elapsed()})`);
const alloc = spawnSync(process.execPath, ["bench/allocator.mjs"], { stdio: "inherit" });
const allocFile = new URL("./out/allocator.json", import.meta.url);
if (alloc.status !== 0 || !existsSync(allocFile)) throw new Error(`bench/allocator.mjs exited ${alloc.status}`);
const allocator = JSON.parse(readFileSync(allocFile, "utf8"));
out.translation = allocator.translate;
out.bucketSync = allocator.alloc;

console.log(
  `bench: GPU transfers in Chromium (bench/gpu/chromium.mjs → bench/results-gpu-chromium-*.json/.md/.png, ${elapsed()})`,
);
const gpuTransfers = spawnSync(process.execPath, ["bench/gpu/chromium.mjs"], { stdio: "inherit" });
if (gpuTransfers.status !== 0) throw new Error(`bench/gpu/chromium.mjs exited ${gpuTransfers.status}`);

out.targets = targets(out);
out.totalSeconds = (performance.now() - t0) / 1000;
writeFileSync(new URL("./results.json", import.meta.url), JSON.stringify(out, null, 1) + "\n");
const md = markdownReport(out);
writeFileSync(new URL("./results.md", import.meta.url), md);
console.log(md);
const pageFile = new URL("../docs/benchmarks.md", import.meta.url);
writeFileSync(pageFile, replaceReadmeSection(readFileSync(pageFile, "utf8"), readmeSection(out)));
console.log("bench: docs/benchmarks.md updated (the README keeps a summary)");
execFileSync(".venv/bin/python", ["bench/plot.py"], { stdio: "inherit" });
console.log(`bench: done in ${elapsed()}`);
