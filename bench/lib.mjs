// Shared helpers of the benchmark scripts: a page in headless Chromium (WebGPU on
// SwiftShader) served from the repository, and writing a script's output.
import { chromium } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { browserSettings } from "../scripts/browser-settings.mjs";
import { startServer } from "../scripts/serve.mjs";

/** Where each script writes its JSON (gitignored); bench/run.mjs folds them into bench/results.json. */
export const OUT_DIR = new URL("./out/", import.meta.url);

/**
 * Open `path` (e.g. "/tests/browser/adapters.html") on a fresh local server
 * and browser, wait for `readyExpr` (a global promise name) and run
 * `fn(page, browserVersion)`. With `isolated`, the page is cross-origin isolated
 * (COOP/COEP), which gives `performance.now()` 5 µs resolution instead of 100 µs.
 * Everything is closed afterwards, also on failure.
 */
export async function withBenchPage(path, readyExpr, fn, { isolated = true } = {}) {
  const server = await startServer({ port: 0, quiet: true, isolated });
  const browser = await chromium.launch(browserSettings.launchOptions());
  try {
    const page = await browser.newPage();
    page.on("pageerror", (err) => console.error(`[page error] ${err.message}`));
    await page.goto(`${server.url}${path}`);
    await page.waitForFunction((name) => window[name] !== undefined, readyExpr);
    await page.evaluate((name) => window[name], readyExpr);
    return await fn(page, browser.version());
  } finally {
    await browser.close();
    await server.close();
  }
}

/** Write `value` as bench/out/<name>.json and say so. */
export function writeOut(name, value) {
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(new URL(`${name}.json`, OUT_DIR), JSON.stringify(value, null, 1) + "\n");
  console.log(`bench: wrote bench/out/${name}.json`);
}

/** Median, min and count of repeated samples (pages return raw samples; statistics are made here). */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], runs: sorted.length };
}

export { sizeLabel } from "./units.mjs";
