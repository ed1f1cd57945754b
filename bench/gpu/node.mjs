#!/usr/bin/env node
/**
 * `make bench-gpu`: the GPU transfer benchmarks in Node on dawn.node (npm `webgpu`), on whatever
 * Vulkan driver the loader finds (here Chromium's SwiftShader through build/vk-swiftshader, on the
 * device machine the H100). Writes bench/results-gpu-<adapter>.json and .md (report.mjs) and the plot
 * (plot.py). Every ratio is against an anchor measured in this same run.
 *
 * After the fresh-device tables (suite.js), the application-like phases (app.js: the first upload right after setup,
 * one long-lived device with the sizes in shuffled order, small calls after idle); `--only fresh|app` runs one part.
 *
 *   node bench/gpu/node.mjs [--sizes 1024,1048576,...] [--cold-reps 5] [--only fresh|app] [--long-rounds 20]
 *                           [--out DIR] [--no-plot]
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { KiB, MiB } from "./measure.js";
import { runTransferBench } from "./suite.js";
import { runAppBench } from "./app.js";
import { plotRun } from "./plot-run.mjs";
import { adapterLabel, finish, markdownReport } from "./report.mjs";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string" },
    "cold-reps": { type: "string", default: "5" },
    only: { type: "string" },
    "long-rounds": { type: "string", default: "20" },
    out: { type: "string", default: "bench" },
    "no-plot": { type: "boolean", default: false },
  },
});

const t0 = performance.now();
const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
const gpu = create([]);
const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
if (!adapter)
  throw new Error("no WebGPU adapter: is a Vulkan driver on VK_DRIVER_FILES (make bench-gpu sets up SwiftShader)?");
const info = adapter.info;
const adapterInfo = {
  vendor: info.vendor,
  architecture: info.architecture,
  device: info.device,
  description: info.description,
};
const software = /swiftshader|llvmpipe/i.test(`${info.architecture} ${info.device} ${info.description}`);
const sizes = args.sizes
  ? args.sizes.split(",").map(Number)
  : software
    ? [KiB, 16 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 64 * MiB]
    : [KiB, 16 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB];
/** A fresh adapter and device (the suite makes one per cold call and per size). */
async function newDevice() {
  const a = await gpu.requestAdapter({ powerPreference: "high-performance" });
  const device = await a.requestDevice({
    requiredLimits: { maxBufferSize: Math.min(a.limits.maxBufferSize, 2 ** 30) },
  });
  return { device, info: a.info };
}

if (!existsSync(new URL("../../js/dist/index.js", import.meta.url)))
  throw new Error("js/dist is missing: run `make js` first");
const webdlpack = await import("../../js/dist/index.js");

const out = {
  runtime: `Node ${process.version} + dawn.node (npm webgpu 0.6.2)`,
  adapter: adapterInfo,
  adapterLabel: adapterLabel(adapterInfo),
  limits: {
    maxBufferSize: adapter.limits.maxBufferSize,
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
  },
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
  },
  date: new Date().toISOString(),
  sizes,
};
console.log(`bench-gpu: ${out.runtime}, adapter ${JSON.stringify(adapterInfo)}, sizes ${sizes.join(",")}`);
const log = (s) => console.log(s);
out.rows = [];
if (args.only !== "app") {
  const fresh = await runTransferBench({ newDevice, webdlpack, sizes, coldReps: Number(args["cold-reps"]), log });
  Object.assign(out, fresh);
}
if (args.only !== "fresh") {
  const app = await runAppBench({ newDevice, webdlpack, sizes, longRounds: Number(args["long-rounds"]), log });
  out.rows.push(...app.rows);
  out.app = app.app;
}
out.totalSeconds = (performance.now() - t0) / 1000;

mkdirSync(args.out, { recursive: true });
const base = `${args.out}/results-gpu-${out.adapterLabel}`;
finish(out, "node");
writeFileSync(`${base}.json`, JSON.stringify(out, null, 1) + "\n");
writeFileSync(`${base}.md`, markdownReport(out));
console.log(markdownReport(out));
if (!args["no-plot"]) plotRun(`${base}.json`);
console.log(`bench-gpu: wrote ${base}.json/.md in ${out.totalSeconds.toFixed(0)} s`);
process.exit(0);
