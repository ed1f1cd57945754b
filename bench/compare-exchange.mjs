#!/usr/bin/env node
/**
 * The CPU exchange rows of `make bench` (bench/bench.html + cpu-exchange.js + pyodide_cases.py) for two built
 * checkouts, in one Chromium and one run: each round loads each checkout's own bench page afresh (its own
 * js/dist, wheel, C library and harness, served from its own root) and times the rows of the given sizes;
 * which checkout goes first alternates by round, so a slow spell of the machine hits both alike.
 *
 *   node bench/compare-exchange.mjs BEFORE_DIR AFTER_DIR      (both built with `make build`)
 *   ROUNDS=5 (default) SIZES=1024 (default; bytes, comma-separated) SAMPLES=n (samples per row and round; default
 *   cpu-exchange.js's own)
 *
 * Prints, per row, the median over rounds of each checkout's µs, each round's ratio after ÷ before (both timed
 * in that round), the median of those ratios, and for webdlpack rows each checkout's median ratio to its
 * direction's copy row (the anchor, timed in the same page) and the same ratio of the fastest samples over all
 * rounds (on a loaded machine the medians carry the load, the minimums less so); writes every sample's row to
 * bench/out/compare-exchange.json. `node bench/compare-exchange.mjs --report FILE.json` prints a saved run.
 */
import { chromium } from "@playwright/test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { browserSettings } from "../scripts/browser-settings.mjs";
import { startServer } from "../scripts/serve.mjs";
import { writeOut } from "./lib.mjs";

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The Markdown table of a run (the JSON this script writes). */
function print(results) {
  const f = (x, d = 2) => (x === null ? "—" : x.toFixed(d));
  const { before, after } = results.trees;
  console.log(
    `${results.browser}; before: ${before.root}; after: ${after.root}; ${results.table[0].perRound.length} rounds, alternating order\n`,
  );
  console.log(
    "| size | row | kind | before µs | after µs | after ÷ before, each round | median after ÷ before | ÷ copy anchor, before → after | fastest ÷ fastest copy, before → after |",
  );
  console.log("|---|---|---|---:|---:|---|---:|---|---|");
  for (const t of results.table) {
    const rounds = t.perRound.map((p) => f(p.ratio)).join(" ");
    const anchor = t.anchor === null ? "—" : `${f(t.beforeVsCopy)} → ${f(t.afterVsCopy)}`;
    const fastest = t.anchor === null ? "—" : `${f(t.beforeMinVsCopy)} → ${f(t.afterMinVsCopy)}`;
    const us = (name) => f(median(t.perRound.map((p) => p[name])));
    console.log(
      `| ${t.nbytes} B | ${t.case} | ${t.kind} | ${us("before")} | ${us("after")} | ${rounds} | ×${f(t.medianRatio, 3)} | ${anchor} | ${fastest} |`,
    );
  }
}

if (process.argv[2] === "--report") {
  print(JSON.parse(readFileSync(process.argv[3], "utf8")));
  process.exit(0);
}
const [beforeDir, afterDir] = process.argv.slice(2).map((d) => resolve(d));
if (afterDir === undefined) throw new Error("usage: node bench/compare-exchange.mjs BEFORE_DIR AFTER_DIR");
const rounds = Number(process.env.ROUNDS ?? 5);
const sizes = (process.env.SIZES ?? "1024").split(",").map(Number);
const samples = process.env.SAMPLES === undefined ? undefined : Number(process.env.SAMPLES);
const trees = [
  { name: "before", root: beforeDir },
  { name: "after", root: afterDir },
];

/** One page load of `tree`: its rows for `sizes`, keyed by "size|case". */
async function measure(browser, tree) {
  const page = await browser.newPage();
  try {
    page.on("pageerror", (err) => console.error(`[${tree.name} page error] ${err.message}`));
    await page.goto(`${tree.server.url}/bench/bench.html`);
    await page.waitForFunction(() => window.benchReady !== undefined);
    await page.evaluate(() => window.benchReady);
    tree.info ??= await page.evaluate(() => window.benchInfo);
    const rows = await page.evaluate(
      ([s, n]) => window.benchmarks.cpuExchange(n === null ? { sizes: s } : { sizes: s, samples: n }),
      [sizes, samples ?? null],
    );
    return new Map(rows.map((r) => [`${r.nbytes}|${r.case}`, r]));
  } finally {
    await page.close();
  }
}

const browser = await chromium.launch(browserSettings.launchOptions());
const results = { date: new Date().toISOString(), rounds: [], trees: {} };
try {
  for (const tree of trees) tree.server = await startServer({ root: tree.root, port: 0, quiet: true, isolated: false });
  results.browser = `Chromium ${browser.version()}`;
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? trees : [...trees].reverse();
    const round = {};
    for (const tree of order) {
      const t0 = performance.now();
      round[tree.name] = await measure(browser, tree);
      console.error(`round ${r + 1}/${rounds}: ${tree.name} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
    results.rounds.push(round);
  }
} finally {
  await browser.close();
  for (const tree of trees) await tree.server?.close();
}
for (const tree of trees) results.trees[tree.name] = { root: tree.root, ...tree.info };

// Rows: every webdlpack / copy / baseline row both checkouts timed; anchors: the copy row of each direction.
const keys = [...results.rounds[0].before.keys()].filter((k) => results.rounds.every((r) => r.after.has(k)));
const anchorKey = (row) => keys.find((k) => k.startsWith(`${row.nbytes}|`) && isAnchor(row, k));
function isAnchor(row, key) {
  const other = results.rounds[0].before.get(key);
  return other.kind === "copy" && other.direction === row.direction;
}
const table = [];
for (const key of keys) {
  const row = results.rounds[0].before.get(key);
  const per = results.rounds.map((r) => ({
    before: r.before.get(key).median_us,
    after: r.after.get(key).median_us,
  }));
  const aKey = row.kind === "webdlpack" ? anchorKey(row) : undefined;
  const vsCopy = (name) =>
    aKey === undefined
      ? null
      : median(results.rounds.map((r) => r[name].get(key).median_us / r[name].get(aKey).median_us));
  const fastest = (name, k) => Math.min(...results.rounds.map((r) => r[name].get(k).min_us));
  const minVsCopy = (name) => (aKey === undefined ? null : fastest(name, key) / fastest(name, aKey));
  table.push({
    nbytes: row.nbytes,
    case: row.case,
    kind: row.kind,
    perRound: per.map((p) => ({ ...p, ratio: p.after / p.before })),
    medianRatio: median(per.map((p) => p.after / p.before)),
    anchor: aKey === undefined ? null : aKey.split("|")[1],
    beforeVsCopy: vsCopy("before"),
    afterVsCopy: vsCopy("after"),
    beforeMinVsCopy: minVsCopy("before"),
    afterMinVsCopy: minVsCopy("after"),
  });
}
results.table = table;
results.rounds = results.rounds.map((r) =>
  Object.fromEntries(Object.entries(r).map(([name, rows]) => [name, Object.fromEntries(rows)])),
);
writeOut("compare-exchange", results);

print(results);
