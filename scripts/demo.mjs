#!/usr/bin/env node
/**
 * The main job: start the local server, open the demo page in headless
 * Chromium with WebGPU (settings from playwright.config.mjs), let it run the
 * exchange Python → JS → WebGPU → JS → Python, and print what happened.
 * Exit code 0 only if every value came back right.
 */
import { chromium } from "@playwright/test";
import { browserSettings } from "../playwright.config.mjs";
import { startServer } from "./serve.mjs";

const server = await startServer({ quiet: true });
const browser = await chromium.launch(browserSettings.launchOptions());
let ok = false;
try {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (err) => problems.push(err.message));
  page.on("console", (msg) => { if (msg.type() === "error") problems.push(msg.text()); });
  const t0 = performance.now();
  await page.goto(`${server.url}/web/index.html?auto=1`);
  const handle = await page.waitForFunction(() => window.demoResult, null, { timeout: 180_000 });
  const result = await handle.jsonValue();
  const wall = performance.now() - t0;
  const version = browser.version();
  console.log(`webdlpack demo — Chromium ${version}, page ${server.url}/web/index.html`);
  if (result.error) {
    console.log(`FAILED: ${result.error}`);
  } else {
    const d = result.device;
    console.log(`device   webgpu:0 = ${d.vendor} ${d.architecture} (${d.description || "no description"}), maxBufferSize ${d.maxBufferSize}`);
    console.log(`loading  runtime ${result.load.runtime.toFixed(0)} ms, package ${result.load.package.toFixed(0)} ms, device ${result.load.device.toFixed(0)} ms`);
    console.log("");
    for (const s of result.steps) {
      console.log(
        `${String(s.index).padStart(2)}. ${s.name.padEnd(50)} ${String(s.device).padEnd(9)} ptr ${String(s.pointer).padEnd(11)} ` +
          `${String(s.bytes).padStart(6)} B  ${s.copy ? "copy   " : "no copy"}  ${s.ms.toFixed(2).padStart(7)} ms`,
      );
      console.log(`    ${s.detail}`);
      console.log(`    values ${s.values}`);
    }
    console.log("");
    console.log(result.verdict);
    ok = result.ok === true;
  }
  if (problems.length) console.log(`page reported: ${problems.join(" | ")}`);
  console.log(`total ${wall.toFixed(0)} ms`);
} finally {
  await browser.close();
  await server.close();
}
process.exit(ok ? 0 : 1);
