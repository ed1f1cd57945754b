#!/usr/bin/env node
/**
 * The main job: start the local server, open the demo page in headless
 * Chromium with WebGPU (settings from scripts/browser-settings.mjs), let it run the
 * exchange Python → JS → WebGPU → ORT-web → TF.js → Python, and print what
 * happened, step by step, with the allocation panel at the end.
 * `--worker`: the page's "run in a worker" mode (`?worker=1`): the same steps
 * inside a dedicated module Worker (web/worker.js).
 * Exit code 0 only if every value came back right and nothing was left alive.
 */
import { chromium } from "@playwright/test";
import { browserSettings } from "./browser-settings.mjs";
import { startServer } from "./serve.mjs";

/** One line per step: name, device, pointer, bytes, copy, time. */
function stepLine(s) {
  return (
    `${String(s.index).padStart(2)}. ${s.name.padEnd(62)} ${String(s.device).padEnd(9)} ptr ${String(s.pointer).padEnd(10)} ` +
    `${String(s.bytes).padStart(5)} B  ${s.copy ? "copy   " : "no copy"}  ${s.ms.toFixed(2).padStart(7)} ms`
  );
}

/** The allocation panel as text. */
function panelLines(p) {
  const d = p.device;
  const lines = [
    `allocations  cache mode ${p.cacheMode}: ${d.livePointers} live pointers, ${d.cachedBuffers} cached buffers ` +
      `(${d.cachedBytes} B), ${d.hits} hits, ${d.misses} misses; device guards held by ${d.guardOwners.join(", ") || "nobody"}`,
  ];
  if (p.memory) {
    const rows = p.memory.owners.map(
      (o) => `${o.owner} ${o.bytes} B${o.cachedBytes === null ? "" : ` (${o.cachedBytes} B cached)`}`,
    );
    lines.push(
      `  GPU memory on webgpu:0: ${p.memory.totalBytes} B in ${p.memory.totalBuffers} buffers — ${rows.join(", ") || "none"}; ` +
        `budget ${p.memory.budget ?? "none"}`,
    );
  }
  for (const o of p.owners)
    lines.push(
      `  owner ${o.owner.padEnd(28)} webgpu:${o.deviceId}  live ${o.livePointers}  hits ${o.hits}  misses ${o.misses}`,
    );
  lines.push(
    `  ledger: ${p.entries.length ? p.entries.map((e) => `${e.kind} ${e.owner} ${e.bytes} B`).join("; ") : "nothing alive"}; ` +
      `leaks: ${p.leaks.length || "none"}`,
  );
  return lines;
}

const inWorker = process.argv.includes("--worker");
const pagePath = `/web/index.html${inWorker ? "?worker=1" : ""}`;
const server = await startServer({ quiet: true });
const browser = await chromium.launch(browserSettings.launchOptions());
let ok = false;
try {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (err) => problems.push(err.message));
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(msg.text());
  });
  const t0 = performance.now();
  await page.goto(`${server.url}/web/index.html?auto=1${inWorker ? "&worker=1" : ""}`);
  const handle = await page.waitForFunction(() => window.demoResult, null, { timeout: 180_000 });
  const result = await handle.jsonValue();
  const wall = performance.now() - t0;
  console.log(
    `webdlpack demo — Chromium ${browser.version()}, page ${server.url}${pagePath}` +
      (inWorker ? " (everything inside a dedicated module Worker)" : ""),
  );
  if (result.error) {
    console.log(`FAILED: ${result.error}`);
    if (result.advice) console.log(result.advice);
  } else {
    const d = result.device;
    const l = result.load;
    console.log(
      `device   webgpu:0 = ${d.vendor} ${d.architecture} (${d.description || "no description"}), maxBufferSize ${d.maxBufferSize}`,
    );
    console.log(
      `loading  device ${l.device.toFixed(0)} ms, runtime ${l.runtime.toFixed(0)} ms, package ${l.package.toFixed(0)} ms, ` +
        `ORT-web + TF.js + model ${l.frameworks.toFixed(0)} ms`,
    );
    console.log("");
    for (const s of result.steps) {
      console.log(stepLine(s));
      console.log(`    ${s.detail}`);
      console.log(`    values ${s.values}`);
    }
    console.log("");
    for (const line of panelLines(result.panel)) console.log(line);
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
