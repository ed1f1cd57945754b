// Statistics, targets and the Markdown report of one GPU transfer run (Node on dawn.node or Chromium).
// Every ratio divides two medians measured in the same run.

const KiB = 1024, MiB = 1024 * 1024;

/** Readable size. */
export function sizeLabel(n) {
  return n === 0 ? "—" : n >= MiB ? `${n / MiB} MiB` : `${n / KiB} KiB`;
}

/** Median, min and count of `samples` (ms). */
function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], runs: sorted.length };
}

/** Add median/min (ms) and GB/s to each row (in place); drops nothing, keeps the samples. */
function addStats(rows) {
  for (const r of rows) {
    const s = summarize(r.samples);
    r.medianMs = s.median;
    r.minMs = s.min;
    r.runs = s.runs;
    r.gbps = r.nbytes > 0 ? r.nbytes / (s.median * 1e6) : null;
  }
}

/** The row named `name` at `n` bytes (the first empty-submit row for n = 0). */
export function pick(out, name, n) {
  return out.rows.find((r) => r.name === name && r.nbytes === n);
}

/** Target rows for `env` ("node" | "chromium"), with this run's ratios. */
function targetsFor(out, env) {
  const big = out.sizes.includes(16 * MiB) ? 16 * MiB : Math.max(...out.sizes);
  const ms = (name, n) => pick(out, name, n)?.medianMs;
  const gb = (name, n) => pick(out, name, n)?.gbps;
  const empty = ms("empty submit + onSubmittedWorkDone", 0);
  const t = [];
  const add = (x) => {
    if (x.ratio === undefined || Number.isNaN(x.ratio)) return;
    x.met = x.lowerIsBetter ? x.ratio <= x.goal : x.ratio >= x.goal;
    t.push(x);
  };
  const bare = ms("bare mapAsync (copy + submit + map + unmap)", big);
  for (const name of ["ctx.readbackInto wasm memory", "ctx.readbackInto reused TypedArray"]) {
    if (env === "chromium") add({ target: `${name} within 1.3× bare mapAsync at ${sizeLabel(big)}`, ratio: ms(name, big) / bare, goal: 1.3, lowerIsBetter: true, unit: "×" });
    if (env === "node") add({ target: `${name} ≥ 8 GB/s at ${sizeLabel(big)}`, ratio: gb(name, big), goal: 8, unit: " GB/s" });
  }
  if (env === "node") add({ target: `ctx.readback (new array) GB/s at ${sizeLabel(big)} (no target; for the record)`, ratio: gb("ctx.readback (new)", big), goal: 0, unit: " GB/s" });
  const wb = ms("writeBuffer + wait", big);
  if (env === "chromium") add({ target: `ctx.upload + wait ≥ 3× faster than writeBuffer + wait at ${sizeLabel(big)}`, ratio: wb / ms("ctx.upload + wait", big), goal: 3, unit: "×" });
  if (env === "node") add({ target: `ctx.upload + wait ≥ 8 GB/s at ${sizeLabel(big)}`, ratio: gb("ctx.upload + wait", big), goal: 8, unit: " GB/s" });
  add({ target: `1 KiB ctx.readback within ${env === "node" ? 2 : 1.5}× the empty-submit round trip`, ratio: ms("ctx.readback (new)", KiB) / empty, goal: env === "node" ? 2 : 1.5, lowerIsBetter: true, unit: "×" });
  add({ target: `new ctx.readback ≥ 2× faster than the old ctx.readback at ${sizeLabel(big)}`, ratio: ms("ctx.readback (old algorithm)", big) / ms("ctx.readback (new)", big), goal: 2, unit: "×" });
  return t;
}

/** Finish a run's record: stats on every row, targets. */
export function finish(out, env) {
  addStats(out.rows);
  out.env = env;
  out.targets = targetsFor(out, env);
  return out;
}

const num = (x) => (x == null ? "—" : x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const table = (head, rows) => `| ${head.join(" | ")} |\n|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|\n` +
  rows.map((r) => `| ${r.join(" | ")} |`).join("\n") + "\n";

/** The report as Markdown: targets, then one table per direction (time and GB/s per size). */
export function markdownReport(out) {
  const a = out.adapter;
  let md = `# GPU transfers — ${out.runtime}\n\nAdapter: vendor \`${a.vendor}\`, architecture \`${a.architecture}\`, device \`${a.device ?? ""}\`` +
    `${a.description ? `, "${a.description}"` : ""}; maxBufferSize ${out.limits.maxBufferSize}. ` +
    `${out.machine.cpus} cores (${out.machine.cpu}), ${out.machine.platform}; ${out.date.slice(0, 10)}; ${out.totalSeconds.toFixed(0)} s.\n\n` +
    "Median (min) of repeated samples, each waiting for its result; every ratio is against an anchor of the same run. " +
    "`(raw)` rows are bare WebGPU with no webdlpack code; `ctx.*` rows are webdlpack's context.\n\n";
  if (out.targets?.length) {
    md += "## Targets\n\n" + table(["target", "this run", "goal", "met"], out.targets.map((t) =>
      [t.target, `${num(t.ratio)}${t.unit}`, `${t.lowerIsBetter ? "≤" : "≥"} ${t.goal}${t.unit}`, t.met ? "yes" : "**no**"]));
  }
  const empty = out.rows.filter((r) => r.nbytes === 0);
  md += `\nEmpty submit + onSubmittedWorkDone: ${empty.map((r) => `${num(r.medianMs * 1000)} µs (min ${num(r.minMs * 1000)})`).join(", then ")}.\n`;
  const sizes = out.sizes;
  for (const dir of ["readback", "upload", "gpu", "cpu"]) {
    const names = [...new Set(out.rows.filter((r) => r.direction === dir).map((r) => r.name))];
    if (!names.length) continue;
    md += `\n## ${{ readback: "GPU → CPU (readback)", upload: "CPU → GPU (upload)", gpu: "GPU → GPU", cpu: "CPU only (the CPU-side limit)" }[dir]}\n\n`;
    md += "ms, median (min) · GB/s of the median\n\n";
    md += table(["path", ...sizes.map(sizeLabel)], names.map((name) => [name, ...sizes.map((n) => {
      const r = pick(out, name, n);
      return r ? `${num(r.medianMs)} (${num(r.minMs)}) · ${num(r.gbps)}` : "—";
    })]));
  }
  return md;
}
