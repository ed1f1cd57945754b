#!/usr/bin/env node
/**
 * The main job: start the local server, open the demo page in headless
 * Chromium with WebGPU (settings from scripts/browser-settings.mjs), let it run the
 * exchange Python → JS → WebGPU → ORT-web → TF.js → Python, and print what
 * happened, step by step, with the allocation panel at the end.
 * `--worker`: the page's "run in a worker" mode (`?worker=1`): the same steps
 * inside a dedicated module Worker (web/worker.js).
 * Then the real-model page (web/models.html: a picture through TF.js and a pretrained ORT text detector,
 * post-processed in Python, all on the shared device): its steps are printed too, and a screenshot of it is
 * saved to build/screenshots/models-demo.png (`--no-models` skips it).
 * Exit code 0 only if every value came back right and nothing was left alive.
 */
import { mkdirSync } from "node:fs";
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

/**
 * Open web/models.html?auto=1 in `browser`, print its steps and verdict, save its screenshot; true when it
 * found text with every hand-off zero-copy and no page error.
 */
async function modelsDemo(browser, url) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  const problems = [];
  page.on("pageerror", (err) => problems.push(err.message));
  page.on("console", (msg) => {
    // ORT logs its own warnings (level W, e.g. shape ops placed on the CPU) through console.error.
    if (msg.type() === "error" && !/\[W:onnxruntime:/.test(msg.text())) problems.push(msg.text());
  });
  const t0 = performance.now();
  await page.goto(`${url}/web/models.html?auto=1`);
  const result = await (
    await page.waitForFunction(() => window.modelsDemoResult, null, { timeout: 300_000 })
  ).jsonValue();
  console.log("");
  console.log(`real model — ${url}/web/models.html: PP-OCRv4 text detection (rapidocr-onnxruntime 1.4.4)`);
  if (result.error) console.log(`FAILED: ${result.error}`);
  for (const s of result.steps ?? [])
    console.log(
      `${String(s.index).padStart(2)}. ${s.name.padEnd(52)} ${s.zeroCopy ? "no copy" : "copy   "} ${s.ms.toFixed(1).padStart(9)} ms  ${s.detail}`,
    );
  if (result.boxes)
    console.log(`text boxes (x, y, w, h, pixels): ${result.boxes.map((b) => `[${b.join(", ")}]`).join(" ")}`);
  if (result.panel) for (const line of panelLines(result.panel)) console.log(line);
  mkdirSync("build/screenshots", { recursive: true });
  await page.screenshot({ path: "build/screenshots/models-demo.png", fullPage: true });
  console.log(`screenshot build/screenshots/models-demo.png; ${(performance.now() - t0).toFixed(0)} ms`);
  if (problems.length) console.log(`page reported: ${problems.join(" | ")}`);
  await page.close();
  return result.ok === true && problems.length === 0;
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
  if (!process.argv.includes("--no-models")) ok = (await modelsDemo(browser, server.url)) && ok;
} finally {
  await browser.close();
  await server.close();
}
process.exit(ok ? 0 : 1);
