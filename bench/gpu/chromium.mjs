#!/usr/bin/env node
/**
 * The GPU transfer benchmark in headless Chromium (part of `make bench`): opens bench/gpu/transfers.html
 * (cross-origin isolated, so performance.now() ticks at 5 µs) on the project's WebGPU adapter (SwiftShader
 * here) and writes bench/results-gpu-chromium-<adapter>.json/.md and the plot.
 *
 *   node bench/gpu/chromium.mjs [--sizes 1024,...] [--only fresh|app] [--long-rounds 20]   run it here
 *   node bench/gpu/chromium.mjs --from raw.json [--machine m.json]
 *        report a result collected elsewhere (the device machine: cdp.py saves window.__result)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { plotRun } from "./plot-run.mjs";
import { adapterLabel, finish, markdownReport } from "./report.mjs";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string" },
    only: { type: "string" },
    "long-rounds": { type: "string" },
    from: { type: "string" },
    machine: { type: "string" },
    out: { type: "string", default: "bench" },
  },
});

let out;
if (args.from) {
  const raw = JSON.parse(readFileSync(args.from, "utf8"));
  out = raw.pages ? raw.pages.bench.result : raw; // cdp.py's file, or the bare result
  out.machine = args.machine ? JSON.parse(readFileSync(args.machine, "utf8")) : { cpus: "?", cpu: "?", platform: "?" };
} else {
  const { withBenchPage } = await import("../lib.mjs");
  const q = new URLSearchParams();
  if (args.sizes) q.set("sizes", args.sizes);
  if (args.only) q.set("only", args.only);
  if (args["long-rounds"]) q.set("longRounds", args["long-rounds"]);
  const query = q.size > 0 ? `?${q}` : "";
  out = await withBenchPage(
    `/bench/gpu/transfers.html${query}`,
    "__ready",
    async (page) => {
      await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 600_000, polling: 500 });
      return page.evaluate(() => window.__result);
    },
    { isolated: true },
  );
  out.machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, platform: `${os.platform()} ${os.release()}` };
}
if (out.error) throw new Error(`the benchmark page failed: ${out.error}`);
out.adapterLabel = adapterLabel(out.adapter);
finish(out, "chromium");
mkdirSync(args.out, { recursive: true });
const base = `${args.out}/results-gpu-chromium-${out.adapterLabel}`;
writeFileSync(`${base}.json`, JSON.stringify(out, null, 1) + "\n");
writeFileSync(`${base}.md`, markdownReport(out));
console.log(markdownReport(out));
plotRun(`${base}.json`);
console.log(`bench: wrote ${base}.json/.md`);
