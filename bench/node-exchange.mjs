#!/usr/bin/env node
/**
 * The CPU exchange benchmark of `make bench` (bench/cpu-exchange.js, same cases and harness) under Node
 * instead of Chromium: Pyodide and webdlpack's bundle in one Node process, no browser. For a second
 * machine (e.g. an idle one with more cores) where the numbers are less disturbed; `make bench`'s
 * Chromium run stays the reference. Writes the JSON to the path given (default bench/out/node-exchange.json)
 * and prints the same Markdown section as the report.
 *
 *   node bench/node-exchange.mjs [out.json]     (after `make build`)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { benchEnv, cpuExchange, exchangeLoop } from "./cpu-exchange.js";
import { exchangeSection } from "./exchange-report.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const KiB = 1024,
  MiB = 1024 * 1024;
const sizes = (process.env.SIZES ?? `${KiB},${4 * KiB},${16 * KiB},${64 * KiB},${256 * KiB},${MiB},${16 * MiB}`)
  .split(",")
  .map(Number);
const outFile = process.argv[2] ?? join(root, "bench/out/node-exchange.json");

const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);
const webdlpack = await import(pathToFileURL(join(root, "js/dist/webdlpack.bundle.js")).href);
const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
const bridge = await webdlpack.loadWebDLPack(pyodide); // the wheel next to the bundle (js/dist/python/)
const env = await benchEnv(pyodide, bridge, webdlpack, {
  clibBytes: readFileSync(join(root, "js/dist/wasm/libwebdlpack.so")),
  casesSource: readFileSync(join(root, "bench/pyodide_cases.py"), "utf8"),
});
const out = {
  date: new Date().toISOString(),
  runtime: `Node ${process.version}`,
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, load: os.loadavg() },
  pyodide: pyodide.version,
};
out.cpuExchange = await cpuExchange(env, { sizes });
out.cpuWarmUp = env.warmUp;
out.exchangeLoop = await exchangeLoop(env, { count: Number(process.env.LOOP ?? 100000), nbytes: KiB });
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(out, null, 1) + "\n");
console.log(
  `${out.runtime}, Pyodide ${out.pyodide}, ${out.machine.cpus} cores (${out.machine.cpu}), load ${out.machine.load.map((x) => x.toFixed(1)).join(" ")}\n`,
);
console.log(exchangeSection(out));
