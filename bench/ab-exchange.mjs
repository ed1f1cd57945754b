#!/usr/bin/env node
/**
 * A/B of the CPU exchange rows at one size: two builds of js/dist (e.g. a copy of main's in build/ab/base and
 * this checkout's js/dist), each in its own tab of ONE headless Chromium, sampled in alternating rounds (the
 * order flips every round), so a slow spell of the machine hits both alike. Each round runs the cases of
 * bench/cpu-exchange.js (the same harness as `make bench`) at that size on both pages; per build and direction
 * it reports the median over rounds of copy ÷ webdlpack (each from one page's own round, its copy measured
 * beside it) and of the webdlpack and copy times, and the same ratio of the fastest samples (min over rounds):
 * on a loaded machine the medians carry the load, the minimums less so.
 *
 *   node bench/ab-exchange.mjs [--rounds N] [--size BYTES] [--json out.json] A_DIST B_DIST
 *
 * A_DIST / B_DIST are served paths, e.g. /build/ab/base and /js/dist (copy js/dist there after `make build`).
 */
import { chromium } from "@playwright/test";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { browserSettings } from "../scripts/browser-settings.mjs";
import { startServer } from "../scripts/serve.mjs";

const { values, positionals } = parseArgs({
  options: {
    rounds: { type: "string", default: "9" },
    size: { type: "string", default: "1024" },
    json: { type: "string" },
  },
  allowPositionals: true,
});
if (positionals.length !== 2) throw new Error("usage: ab-exchange.mjs [--rounds N] [--size BYTES] A_DIST B_DIST");
const rounds = Number(values.rounds);
const size = Number(values.size);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await startServer({ port: 0, quiet: true, isolated: false });
const browser = await chromium.launch(browserSettings.launchOptions());
try {
  const pages = [];
  for (const dist of positionals) {
    const page = await browser.newPage();
    page.on("pageerror", (err) => console.error(`[page error ${dist}] ${err.message}`));
    await page.goto(`${server.url}/bench/bench.html?dist=${encodeURIComponent(dist)}`);
    await page.waitForFunction(() => window.benchReady !== undefined);
    await page.evaluate(() => window.benchReady);
    pages.push({ dist, page, rows: [] });
  }
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? pages : [...pages].reverse();
    for (const p of order) {
      await p.page.bringToFront();
      p.rows.push(await p.page.evaluate((s) => window.benchmarks.cpuExchange({ sizes: [s], samples: 5 }), size));
    }
    process.stderr.write(`round ${r + 1}/${rounds}\n`);
  }
  const out = { size, rounds, chromium: browser.version(), builds: {} };
  const directions = [...new Set(pages[0].rows[0].filter((x) => x.kind === "webdlpack").map((x) => x.direction))];
  const head = pages.map((p) => `${p.dist} copy÷wdl median (wdl / copy µs) | min (wdl / copy µs)`);
  const lines = [`| direction | ${head.join(" | ")} |`];
  lines.push(`|---|${pages.map(() => "---:|---:").join("|")}|`);
  for (const d of directions) {
    const cells = pages.map((p) => {
      const pick = (rows, kind, key = "median_us") => rows.find((x) => x.direction === d && x.kind === kind)[key];
      const ratios = p.rows.map((rows) => pick(rows, "copy") / pick(rows, "webdlpack"));
      const wdl = median(p.rows.map((rows) => pick(rows, "webdlpack")));
      const copy = median(p.rows.map((rows) => pick(rows, "copy")));
      const wdlMin = Math.min(...p.rows.map((rows) => pick(rows, "webdlpack", "min_us")));
      const copyMin = Math.min(...p.rows.map((rows) => pick(rows, "copy", "min_us")));
      out.builds[p.dist] ??= {};
      out.builds[p.dist][d] = {
        ratios,
        ratio: median(ratios),
        webdlpack_us: wdl,
        copy_us: copy,
        ratio_of_min: copyMin / wdlMin,
        webdlpack_min_us: wdlMin,
        copy_min_us: copyMin,
      };
      const f = (x) => x.toFixed(3);
      return `${f(median(ratios))}× (${f(wdl)} / ${f(copy)}) | ${f(copyMin / wdlMin)}× (${f(wdlMin)} / ${f(copyMin)})`;
    });
    lines.push(`| ${d} | ${cells.join(" | ")} |`);
  }
  console.log(lines.join("\n"));
  if (values.json) writeFileSync(values.json, JSON.stringify(out, null, 1) + "\n");
} finally {
  await browser.close();
  await server.close();
}
