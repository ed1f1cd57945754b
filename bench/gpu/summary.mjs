#!/usr/bin/env node
/**
 * One table over several GPU transfer runs (bench/results-gpu-*.json, as node.mjs and chromium.mjs write them):
 * per comparison (upload, readbacks) a table of sizes × runs, each cell webdlpack's ratio cold / warm against the
 * best hand-written variant of the same run, size and phase (≥ 1: webdlpack as fast or faster); then the same for the
 * application-like phases (bench/gpu/app.js), each cell first / long-lived / idle. Written to bench/results-gpu-summary.md and printed
 * (docs/gpu-transfers.md carries the same table).
 *
 *   node bench/gpu/summary.mjs bench/results-gpu-chromium-nvidia-h100-80gb-hbm3.json bench/results-gpu-nvidia-….json …
 */
import { readFileSync, writeFileSync } from "node:fs";
import { COMPARISONS, intervalText, sizeLabel, targetsFor } from "./report.mjs";

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: node bench/gpu/summary.mjs results-gpu-….json …");
const runs = files.map((f) => ({ file: f, out: JSON.parse(readFileSync(f, "utf8")) }));
// The targets again from the rows (the same medians), with the ratios' intervals runs from before them lack.
for (const r of runs) r.out.targets = targetsFor(r.out);

/** "Chromium 156, H100" / "Node, SwiftShader (device host)" from a run's record and file name. */
function title({ file, out }) {
  const where =
    out.adapterLabel === "swiftshader"
      ? "SwiftShader"
      : out.adapterLabel
          .replace(/^nvidia-/, "")
          .split("-")[0]
          .toUpperCase();
  const host = /devicehost/.test(file) ? ", device host" : "";
  return `${out.env === "chromium" ? out.runtime : "Node + dawn.node"}, ${where}${host}`;
}

const sizes = [...new Set(runs.flatMap((r) => r.out.sizes))].sort((a, b) => a - b);
let below = 0;
let cells = 0;
/** The ratios of one run, size and comparison in `phases`, "a / b / …" ("—" where not measured). */
function cell(r, n, what, phases) {
  return phases
    .map((phase) => {
      const t = r.out.targets.find((x) => x.nbytes === n && x.phase === phase && x.what === what);
      if (!t) return "—";
      cells += 1;
      if (t.met) return t.ratio.toFixed(2);
      below += 1;
      return `**${t.ratio.toFixed(2)}**`;
    })
    .join(" / ");
}
const head = ["size", ...runs.map(title)];
/** One table per comparison with the cells of `phases`, headed `note`. */
const tablesOf = (phases, note) =>
  COMPARISONS.map(
    (c) =>
      `## ${c.what} (${note}): ${c.ours} against ${c.anchors.length > 1 ? "the best of " : ""}${c.anchors.join(", ")}\n\n` +
      `| ${head.join(" | ")} |\n|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|\n` +
      sizes.map((n) => `| ${sizeLabel(n)} | ${runs.map((r) => cell(r, n, c.what, phases)).join(" | ")} |`).join("\n") +
      "\n",
  );
const fresh = tablesOf(["cold", "warm"], "fresh devices, cold / warm");
const hasApp = runs.some((r) => r.out.rows.some((row) => row.phase === "long"));
const app = hasApp ? tablesOf(["first", "long", "idle"], "as applications use them, first / long-lived / idle") : [];
const md =
  "# GPU transfers: webdlpack against the best hand-written code, every run\n\n" +
  "Each cell: cold / warm, best hand-written ms ÷ webdlpack ms, from one run (≥ 1: webdlpack as fast or faster; " +
  `below 1 in bold: ${below} of ${cells}). Cold: first call on a fresh device, median of the cold calls; warm: median ` +
  "of interleaved rounds. As applications use them (bench/gpu/app.js): first — an upload right after `ctx.setup()` " +
  "on a fresh device; long — one long-lived device, every size in shuffled order; idle — small calls on it with the " +
  "queue drained and a timer before each. Runs: " +
  runs.map((r) => `\`${r.file.split("/").pop()}\` (${r.out.date.slice(0, 10)})`).join(", ") +
  ".\n\n" +
  [...fresh, ...app].join("\n") +
  runs.map((r) => `\n### ${title(r)}: how sure the cells below 1 are\n${intervalText(r.out.targets)}`).join("");
writeFileSync("bench/results-gpu-summary.md", md);
console.log(md);
