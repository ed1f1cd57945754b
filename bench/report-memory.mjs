// The memory sections of the bench report: the allocator's modes against raw createBuffer, the cost of the memory
// room's accounting, and pointer translation per call.
import { cell, num, ratio, table } from "./markdown.mjs";
import { sizeLabel } from "./units.mjs";

/** Allocator modes vs raw createBuffer. */
export function allocSection(out) {
  const sizes = Object.keys(out.allocModes.sizes);
  const modes = ["raw", "disabled", "lazyRelease", "simple", "bucket"];
  const label = {
    raw: "raw createBuffer + destroy (baseline)",
    disabled: "disabled",
    lazyRelease: "lazyRelease",
    simple: "simple",
    bucket: "bucket (default)",
  };
  const rows = modes.map((m) => [
    label[m],
    ...sizes.flatMap((n) => {
      const x = out.allocModes.sizes[n][m];
      return [cell(x.medianUs, x.minUs), m === "raw" ? "1×" : ratio(x.speedupVsRaw)];
    }),
  ]);
  let md =
    "## Allocator\n\nµs per allocWebGPUChecked + freeWebGPU cycle, median (min), waiting for the GPU process at the end of each run; " +
    "ratio = raw ÷ mode. disabled / lazyRelease create every buffer under WebGPU error scopes (an `await` per allocation), " +
    "simple / bucket reuse cached buffers.\n\n";
  md += table(["mode", ...sizes.flatMap((n) => [sizeLabel(Number(n)), "vs raw"])], rows);
  const sync = out.bucketSync?.["16 MiB"];
  if (sync)
    md += `\nbucket with allocWebGPU (synchronous) at 16 MiB (bench/allocator.mjs): ${num(sync.bucketSync.medianUs)} µs per cycle vs raw ${num(sync.raw.medianUs)} µs.\n`;
  return md;
}

/** The memory room's accounting: allocation rows with the device counted vs untouched (bench/memory-cost.mjs). */
export function memoryCostSection(out) {
  const c = out.memoryCost;
  if (!c) return "";
  const what = {
    raw: "raw createBuffer + destroy",
    disabled: "disabled (a buffer created per cycle)",
    bucket: "bucket (cache hits)",
  };
  const rows = c.rows.map((r) => [
    `${what[r.row]}, ${sizeLabel(r.nbytes)}`,
    cell(r.untouched.median, r.untouched.min),
    cell(r.accounted.median, r.accounted.min),
    ratio(r.ratio),
    r.pairedRatio ? ratio(r.pairedRatio.median) : "—",
  ]);
  const sp = c.samePage;
  const same = sp
    ? `\nIn the counted page alone, 1 KiB create + destroy through the counted \`device.createBuffer\` vs the uncounted ` +
      `prototype method: ${num(sp["counted loop"].median)} vs ${num(sp["uncounted loop"].median)} µs in a loop, ` +
      `${num(sp["counted await"].median)} vs ${num(sp["uncounted await"].median)} µs with an await after each.\n`
    : "";
  return (
    `## Memory accounting\n\nµs per cycle, median (min) of ${c.rounds} runs alternating between two pages of one browser: ` +
    "one set up with `memoryAccounting: false` (the device untouched), one counted (docs/memory.md); " +
    "ratio = counted ÷ untouched (of the medians; paired: the median of each round's ratio).\n\n" +
    table(["row", "untouched", "counted", "ratio", "paired"], rows) +
    same
  );
}

/** Pointer translation per call. */
export function translationSection(out) {
  const t = out.translation;
  const rows = [
    ["ctx.gpuPointerToBuffer(ptr)", cell(t.gpuPointerToBuffer.medianNs, t.gpuPointerToBuffer.minNs), ratio(t.ratio)],
    ["array[handle] (baseline, no check)", cell(t.arrayIndex.medianNs, t.arrayIndex.minNs), "1×"],
  ];
  if (t.arrayIndexChecked)
    rows.push([
      "array[handle], a miss throws",
      cell(t.arrayIndexChecked.medianNs, t.arrayIndexChecked.minNs),
      ratio(t.arrayIndexChecked.medianNs / t.arrayIndex.medianNs),
    ]);
  return (
    `## Pointer translation\n\nns per call over ${t.pointers} live pointers, ${t.calls.toLocaleString("en")} calls per run, median (min).\n\n` +
    table(["lookup", "ns per call", "÷ array[handle]"], rows)
  );
}
