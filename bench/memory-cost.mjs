// Benchmark (not a test): what the memory room's accounting costs on the allocation rows, in headless
// Chromium (WebGPU on SwiftShader). Two pages of one browser: one set up with `memoryAccounting: false`
// (the device untouched: the "before"), one as pages are by default (every createBuffer and destroy
// counted). Each row runs in both pages in turn, alternating which goes first, `rounds` times; the
// ratio is accounted ÷ untouched of the medians. Rows: raw device.createBuffer + destroy, the
// `disabled` cache mode (a created buffer per allocWebGPUChecked) and `bucket` (cache hits, nothing
// created), at 1 KiB and 16 MiB. Beside the ratio of medians, the median (and quartiles) of the per-round
// ratios: each round's two runs are adjacent in time, so a machine that slows down for a while (2 cores
// shared by several engineers) moves both. Writes bench/out/memory-cost.json and prints a table.
// Usage: node bench/memory-cost.mjs [--rounds N] [--repeat K] [--out FILE.json]   (after `make js`)
//   --repeat K runs the whole comparison K times (fresh browser each) and reports every run.
import { chromium } from "@playwright/test";
import { browserSettings } from "../scripts/browser-settings.mjs";
import { startServer } from "../scripts/serve.mjs";
import { writeFileSync } from "node:fs";
import { summarize, writeOut } from "./lib.mjs";

/** One timed run in the page: µs per cycle of `row` at `nbytes`, `ops` cycles, after the GPU settled. */
async function runInPage({ row, nbytes, ops }) {
  const ctx = window.webdlpack.getContext();
  const device = ctx.getWebGPUDevice(0);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const settle = async () => {
    device.queue.submit([device.createCommandEncoder().finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  const cycle =
    row === "raw"
      ? async () => device.createBuffer({ size: nbytes, usage }).destroy()
      : async () => ctx.freeWebGPU(await ctx.allocWebGPUChecked(nbytes));
  ctx.setCacheMode(row === "bucket" ? "bucket" : "disabled");
  for (let i = 0; i < 3; i++) await cycle();
  await ctx.flush();
  await settle();
  const t0 = performance.now();
  for (let i = 0; i < ops; i++) await cycle();
  if (row === "raw") await settle();
  else await ctx.flush();
  return ((performance.now() - t0) / ops) * 1000;
}

/**
 * In the counted page only: create + destroy of a 1 KiB buffer through the counted `device.createBuffer` against
 * the same call on the uncounted prototype method (`GPUDevice.prototype.createBuffer.call`), interleaved in one
 * page (no page-to-page difference), `n` cycles in a tight loop and `n / 4` with an await after each. µs per cycle.
 */
async function samePageInPage({ n }) {
  const device = window.webdlpack.getContext().getWebGPUDevice(0);
  const usage = GPUBufferUsage.STORAGE;
  const proto = GPUDevice.prototype.createBuffer;
  const variants = {
    counted: () => device.createBuffer({ size: 1024, usage }),
    uncounted: () => proto.call(device, { size: 1024, usage }),
  };
  const out = {};
  for (const [name, create] of Object.entries(variants)) {
    let t0 = performance.now();
    for (let i = 0; i < n; i++) create().destroy();
    out[`${name} loop`] = ((performance.now() - t0) / n) * 1000;
    t0 = performance.now();
    for (let i = 0; i < n / 4; i++) {
      create().destroy();
      await null;
    }
    out[`${name} await`] = ((performance.now() - t0) / (n / 4)) * 1000;
  }
  await new Promise((r) => setTimeout(r, 0));
  return out;
}

const ROWS = [
  ["raw", 1024, 1000],
  ["raw", 16 * 2 ** 20, 8],
  ["disabled", 1024, 150],
  ["disabled", 16 * 2 ** 20, 8],
  ["bucket", 1024, 5000],
  ["bucket", 16 * 2 ** 20, 2000],
];

/** Run the comparison; returns `{chromium, rows: [{row, nbytes, untouched, accounted, ratio}]}`. */
export async function memoryCost({ rounds = 21 } = {}) {
  const server = await startServer({ port: 0, quiet: true });
  const browser = await chromium.launch(browserSettings.launchOptions());
  try {
    const pages = {};
    for (const [name, accounting] of [
      ["untouched", false],
      ["accounted", true],
    ]) {
      const page = await browser.newPage();
      page.on("pageerror", (err) => console.error(`[page error] ${err.message}`));
      await page.goto(`${server.url}/tests/browser/harness.html?pyodide=0`);
      await page.waitForFunction(() => window.harnessReady !== undefined);
      await page.evaluate(() => window.harnessReady);
      const counted = await page.evaluate(async (memoryAccounting) => {
        const ctx = window.webdlpack.getContext();
        await ctx.setup({ memoryAccounting });
        return ctx.memory().instrumented;
      }, accounting);
      if (counted !== accounting) throw new Error(`page ${name}: memory().instrumented is ${counted}`);
      pages[name] = page;
    }
    const rows = [];
    for (const [row, nbytes, ops] of ROWS) {
      const samples = { untouched: [], accounted: [] };
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? ["untouched", "accounted"] : ["accounted", "untouched"];
        for (const name of order) samples[name].push(await pages[name].evaluate(runInPage, { row, nbytes, ops }));
      }
      const untouched = summarize(samples.untouched);
      const accounted = summarize(samples.accounted);
      const paired = samples.accounted.map((a, i) => a / samples.untouched[i]).sort((a, b) => a - b);
      const q = (f) => paired[Math.min(paired.length - 1, Math.floor(paired.length * f))];
      rows.push({
        row,
        nbytes,
        ops,
        untouched,
        accounted,
        ratio: accounted.median / untouched.median,
        pairedRatio: { median: q(0.5), q1: q(0.25), q3: q(0.75) },
      });
    }
    const same = {};
    for (let r = 0; r < rounds; r++) {
      const got = await pages.accounted.evaluate(samePageInPage, { n: 2000 });
      for (const [k, v] of Object.entries(got)) {
        same[k] ??= [];
        same[k].push(v);
      }
    }
    const samePage = Object.fromEntries(Object.entries(same).map(([k, v]) => [k, summarize(v)]));
    return { chromium: browser.version(), rounds, rows, samePage };
  } finally {
    await browser.close();
    await server.close();
  }
}

/** The value after `--name` on the command line, or `fallback`. */
function arg(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(arg("rounds", 21));
  const repeat = Number(arg("repeat", 1));
  const runs = [];
  for (let k = 0; k < repeat; k++) runs.push(await memoryCost({ rounds }));
  const result = runs[0];
  writeOut("memory-cost", result);
  const file = arg("out", null);
  if (file !== null) writeFileSync(file, `${JSON.stringify({ runs }, null, 1)}\n`);
  for (const [k, run] of runs.entries()) {
    console.log(
      `run ${k + 1}/${runs.length}, Chromium ${run.chromium}: µs per cycle, median (min) of ${run.rounds} alternating runs`,
    );
    for (const r of run.rows) {
      const size = r.nbytes >= 2 ** 20 ? `${r.nbytes / 2 ** 20} MiB` : `${r.nbytes / 1024} KiB`;
      const cell = (s) => `${s.median.toFixed(2)} (${s.min.toFixed(2)})`;
      const p = r.pairedRatio;
      console.log(
        `${r.row.padEnd(9)} ${size.padStart(7)}  untouched ${cell(r.untouched).padStart(18)}  accounted ${cell(r.accounted).padStart(18)}  ratio ${r.ratio.toFixed(3)}  paired ${p.median.toFixed(3)} [${p.q1.toFixed(3)}, ${p.q3.toFixed(3)}]`,
      );
    }
    const sp = run.samePage;
    console.log(
      `one page, 1 KiB create + destroy, µs: counted ${sp["counted loop"].median.toFixed(2)} vs uncounted ${sp["uncounted loop"].median.toFixed(2)} in a loop; ` +
        `${sp["counted await"].median.toFixed(2)} vs ${sp["uncounted await"].median.toFixed(2)} with an await after each`,
    );
  }
}
