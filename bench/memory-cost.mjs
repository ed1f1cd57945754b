// Benchmark (not a test): what the memory room's accounting costs on the allocation rows, in headless
// Chromium (WebGPU on SwiftShader). Two pages of one browser: one set up with `memoryAccounting: false`
// (the device untouched: the "before"), one as pages are by default (every createBuffer and destroy
// counted). Each row runs in both pages in turn, alternating which goes first, `rounds` times; the
// ratio is accounted ÷ untouched of the medians. Rows: raw device.createBuffer + destroy, the
// `disabled` cache mode (a created buffer per allocWebGPUChecked) and `bucket` (cache hits, nothing
// created), at 1 KiB and 16 MiB. Writes bench/out/memory-cost.json and prints a table.
// Usage: node bench/memory-cost.mjs   (after `make js`)
import { chromium } from "@playwright/test";
import { browserSettings } from "../scripts/browser-settings.mjs";
import { startServer } from "../scripts/serve.mjs";
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
      rows.push({ row, nbytes, ops, untouched, accounted, ratio: accounted.median / untouched.median });
    }
    return { chromium: browser.version(), rounds, rows };
  } finally {
    await browser.close();
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await memoryCost();
  writeOut("memory-cost", result);
  console.log(`Chromium ${result.chromium}: µs per cycle, median (min) of ${result.rounds} alternating runs`);
  for (const r of result.rows) {
    const size = r.nbytes >= 2 ** 20 ? `${r.nbytes / 2 ** 20} MiB` : `${r.nbytes / 1024} KiB`;
    const cell = (s) => `${s.median.toFixed(2)} (${s.min.toFixed(2)})`;
    console.log(
      `${r.row.padEnd(9)} ${size.padStart(7)}  untouched ${cell(r.untouched).padStart(18)}  accounted ${cell(r.accounted).padStart(18)}  ratio ${r.ratio.toFixed(3)}`,
    );
  }
}
