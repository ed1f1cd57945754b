#!/usr/bin/env node
/**
 * `make bench`: every benchmark in headless Chromium (WebGPU on SwiftShader),
 * never a timed test. Writes bench/results.json, bench/results.md and PNG plots
 * (bench/plot.py). Ratios are computed against baselines measured in the same run.
 */
import { chromium } from "@playwright/test";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { browserSettings } from "../playwright.config.mjs";
import { startServer } from "../scripts/serve.mjs";

const KiB = 1024, MiB = 1024 * 1024;
const SIZES = [KiB, MiB, 16 * MiB, 64 * MiB];
const label = (n) => (n >= MiB ? `${n / MiB} MiB` : `${n / KiB} KiB`);

const server = await startServer({ quiet: true });
const browser = await chromium.launch(browserSettings.launchOptions());
const out = { machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30), platform: `${os.platform()} ${os.release()}` } };
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}/bench/bench.html`);
  await page.evaluate(() => window.benchReady);
  out.browser = `Chromium ${browser.version()}`;
  out.pyodide = await page.evaluate(() => window.webdlpack && "314");
  console.log(`bench: ${out.browser}, ${out.machine.cpus} cores (${out.machine.cpu})`);
  out.cpuExchange = await page.evaluate((sizes) => window.benchmarks.cpuExchange({ sizes }), SIZES);
  out.exchangeLoop = await page.evaluate(() => window.benchmarks.exchangeLoop({ count: 10000, nbytes: 1024 }));
} finally {
  await browser.close();
  await server.close();
}

// Other benchmark scripts (each writes bench/out/<name>.json).
mkdirSync("bench/out", { recursive: true });
for (const script of ["allocator", "adapters"]) {
  if (!existsSync(`bench/${script}.mjs`)) continue;
  console.log(`bench: running bench/${script}.mjs`);
  const r = spawnSync(process.execPath, [`bench/${script}.mjs`], { stdio: "inherit" });
  const file = `bench/out/${script}.json`;
  if (r.status === 0 && existsSync(file)) out[script] = JSON.parse(readFileSync(file, "utf8"));
  else out[script] = { error: `bench/${script}.mjs exited ${r.status}` };
}

// Ratios and targets, all from this run.
const get = (c, n) => out.cpuExchange.find((r) => r.case === c && r.nbytes === n);
const targets = [];
const big = 64 * MiB;
const wd = get("py→js webdlpack.to_js", big), copy = get("py→js pyodide toJs (copy)", big), buf = get("py→js pyodide getBuffer", big);
targets.push({ target: "CPU exchange ≥ 1000× faster than toJs at 64 MiB", ratio: copy.median_us / wd.median_us, goal: 1000 });
targets.push({ target: "CPU exchange no slower than getBuffer() at 64 MiB", ratio: buf.median_us / wd.median_us, goal: 1 });
const small = get("py→js webdlpack.to_js", KiB);
targets.push({ target: "exchange(64 MiB) / exchange(1 KiB) ≤ 1.5", ratio: wd.median_us / small.median_us, goal: 1.5, lowerIsBetter: true });
const jsPy = get("js→py webdlpack.from_js", big), jsPyCopy = get("js→py pyodide to_py (copy)", big);
targets.push({ target: "JS → Python exchange vs to_py copy at 64 MiB (info)", ratio: jsPyCopy.median_us / jsPy.median_us, goal: null });
const ad = out.adapters?.[16 * MiB];
if (ad) {
  targets.push({ target: "GPU hand-off ORT → TF.js ≥ 50× faster than readback + re-upload at 16 MiB (hand-off only)", ratio: ad.readbackHandoffOnly.medianMs / ad.webdlpackHandoffOnly.medianMs, goal: 50 });
  targets.push({ target: "same, including a tf.sum on the result (end to end, info)", ratio: ad.readback.medianMs / ad.webdlpack.medianMs, goal: null });
}
for (const t of targets) t.met = t.goal === null ? null : t.lowerIsBetter ? t.ratio <= t.goal : t.ratio >= t.goal;
out.targets = targets;
writeFileSync("bench/results.json", JSON.stringify(out, null, 2) + "\n");

let md = `# webdlpack benchmarks\n\n${out.browser}, WebGPU on SwiftShader, ${out.machine.cpus} cores (${out.machine.cpu}), ${out.machine.memGiB} GiB.\n`;
md += `Per exchange (exchange + touch + release), median and min of repeated samples; µs.\n\n`;
md += `| case | ${SIZES.map(label).join(" | ")} |\n|---|${SIZES.map(() => "---:").join("|")}|\n`;
for (const c of [...new Set(out.cpuExchange.map((r) => r.case))]) {
  md += `| ${c} | ${SIZES.map((n) => { const r = get(c, n); return `${r.median_us.toFixed(1)} (min ${r.min_us.toFixed(1)})`; }).join(" | ")} |\n`;
}
md += `\n10 000 exchanges of 1 KiB Python → JS: ${out.exchangeLoop.per_exchange_us.toFixed(1)} µs each, ${out.exchangeLoop.live_exports_left} exports left alive.\n\n`;
md += `| target | ratio (this run) | met |\n|---|---:|---|\n`;
for (const t of targets) md += `| ${t.target} | ${t.ratio.toFixed(t.ratio > 100 ? 0 : 2)}× | ${t.met === null ? "—" : t.met ? "yes" : "**no**"} |\n`;
if (out.allocator && !out.allocator.error) md += `\nAllocator: see bench/out/allocator.json.\n`;
writeFileSync("bench/results.md", md);
console.log(md);
try {
  execFileSync(".venv/bin/python", ["bench/plot.py"], { stdio: "inherit" });
} catch (e) {
  console.log(`bench: plots not made (${e.message})`);
}
