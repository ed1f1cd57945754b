// Statistics, targets and the Markdown report of one GPU transfer run (Node on dawn.node or Chromium).
// Every ratio divides two medians measured in the same run.

const KiB = 1024,
  MiB = 1024 * 1024;

/** Readable size. */
export function sizeLabel(n) {
  return n === 0 ? "—" : n >= MiB ? `${n / MiB} MiB` : `${n / KiB} KiB`;
}

/** Median, min and count of `samples` (ms). */
function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], runs: sorted.length };
}

/** A short file-name label for an adapter: "swiftshader", "nvidia-h100-80gb-hbm3", … */
export function adapterLabel(a) {
  const text = [a.vendor, a.architecture, a.device, a.description].join(" ");
  if (/swiftshader/i.test(text)) return "swiftshader";
  // Chromium reports the device as a PCI id ("0x2330") and the name in the description; dawn.node the other way round.
  const name =
    a.device && !/^0x[0-9a-f]+$/i.test(a.device) ? a.device : a.description || a.architecture || a.device || "unknown";
  const words = `${a.vendor ?? ""} ${name}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .split("-");
  if (words.length > 1 && words[0] === words[1]) words.shift();
  return words.join("-").slice(0, 48);
}

/** Add median/min (ms) and GB/s to each row (in place); drops nothing, keeps the samples. */
function addStats(rows) {
  for (const r of rows) {
    const s = summarize(r.samples);
    r.medianMs = s.median;
    r.minMs = s.min;
    r.runs = s.runs;
    r.gbps = r.nbytes > 0 ? r.nbytes / (s.median * 1e6) : null;
    r.samples = r.samples.map((x) => Math.round(x * 1e4) / 1e4); // 0.1 µs is below every timer's resolution
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
    if (env === "chromium")
      add({
        target: `${name} within 1.3× bare mapAsync at ${sizeLabel(big)}`,
        ratio: ms(name, big) / bare,
        goal: 1.3,
        lowerIsBetter: true,
        unit: "×",
      });
    if (env === "node")
      add({ target: `${name} ≥ 8 GB/s at ${sizeLabel(big)}`, ratio: gb(name, big), goal: 8, unit: " GB/s" });
  }

  const wb = ms("writeBuffer + wait", big);
  if (env === "chromium")
    add({
      target: `ctx.upload + wait ≥ 3× faster than writeBuffer + wait at ${sizeLabel(big)}`,
      ratio: wb / ms("ctx.upload + wait", big),
      goal: 3,
      unit: "×",
    });
  if (env === "node")
    add({
      target: `ctx.upload + wait ≥ 8 GB/s at ${sizeLabel(big)}`,
      ratio: gb("ctx.upload + wait", big),
      goal: 8,
      unit: " GB/s",
    });
  add({
    target: `1 KiB ctx.readback within ${env === "node" ? 2 : 1.5}× the empty-submit round trip`,
    ratio: ms("ctx.readback (new)", KiB) / empty,
    goal: env === "node" ? 2 : 1.5,
    lowerIsBetter: true,
    unit: "×",
  });
  const old = ms("ctx.readback (old algorithm)", big);
  for (const name of ["ctx.readbackInto wasm memory", "ctx.readbackInto reused TypedArray", "ctx.readback (new)"]) {
    add({
      target: `${name} ≥ 2× faster than the old ctx.readback at ${sizeLabel(big)}`,
      ratio: old / ms(name, big),
      goal: 2,
      unit: "×",
    });
  }
  return t;
}

/** Finish a run's record: stats on every row, targets. */
export function finish(out, env) {
  addStats(out.rows);
  out.env = env;
  out.targets = targetsFor(out, env);
  return out;
}

const num = (x) =>
  x == null ? "—" : x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3);
const table = (head, rows) =>
  `| ${head.join(" | ")} |\n|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|\n` +
  rows.map((r) => `| ${r.join(" | ")} |`).join("\n") +
  "\n";

/** The report as Markdown: targets, then one table per direction (time and GB/s per size). */
export function markdownReport(out) {
  const a = out.adapter;
  let md =
    `# GPU transfers — ${out.runtime}\n\nAdapter: vendor \`${a.vendor}\`, architecture \`${a.architecture}\`, device \`${a.device ?? ""}\`` +
    `${a.description ? `, "${a.description}"` : ""}; maxBufferSize ${out.limits.maxBufferSize}. ` +
    `${out.machine.cpus} cores (${out.machine.cpu}), ${out.machine.platform}; ${out.date.slice(0, 10)}; ${out.totalSeconds.toFixed(0)} s.\n\n` +
    "Median (min) of repeated samples, each waiting for its result; every ratio is against an anchor of the same run. " +
    "`(raw)` rows are bare WebGPU with no webdlpack code; `ctx.*` rows are webdlpack's context.\n\n";
  if (out.targets?.length) {
    const software = /swiftshader/i.test(JSON.stringify(out.adapter));
    md +=
      "## Targets\n\n" +
      (software
        ? "The issue's target on SwiftShader is the new readback ≥ 2× faster than the old ctx.readback at 16 MiB; " +
          "the other goals are the H100's, shown here for comparison.\n\n"
        : "") +
      table(
        ["target", "this run", "goal", "met"],
        out.targets.map((t) => [
          t.target,
          `${num(t.ratio)}${t.unit}`,
          `${t.lowerIsBetter ? "≤" : "≥"} ${t.goal}${t.unit}`,
          t.met ? "yes" : "**no**",
        ]),
      );
  }
  md += whereTimeGoes(out);
  const empty = out.rows.filter((r) => r.nbytes === 0);
  md += `\nEmpty submit + onSubmittedWorkDone: ${empty.map((r) => `${num(r.medianMs * 1000)} µs (min ${num(r.minMs * 1000)})`).join(", then ")}.\n`;
  const sizes = out.sizes;
  for (const dir of ["readback", "upload", "gpu", "cpu"]) {
    const names = [...new Set(out.rows.filter((r) => r.direction === dir).map((r) => r.name))];
    if (!names.length) continue;
    md += `\n## ${{ readback: "GPU → CPU (readback)", upload: "CPU → GPU (upload)", gpu: "GPU → GPU", cpu: "CPU only (the CPU-side limit)" }[dir]}\n\n`;
    md += "ms, median (min) · GB/s of the median\n\n";
    md += table(
      ["path", ...sizes.map(sizeLabel)],
      names.map((name) => [
        name,
        ...sizes.map((n) => {
          const r = pick(out, name, n);
          return r ? `${num(r.medianMs)} (${num(r.minMs)}) · ${num(r.gbps)}` : "—";
        }),
      ]),
    );
  }
  return md;
}

/** At 16 MiB (or the largest size): the anchors that bound each webdlpack path, as one paragraph. */
function whereTimeGoes(out) {
  const n = out.sizes.includes(16 * MiB) ? 16 * MiB : Math.max(...out.sizes);
  const ms = (name) => pick(out, name, n)?.medianMs;
  const bare = ms("bare mapAsync (copy + submit + map + unmap)");
  const touched = ms("CPU copy into touched memory");
  const fresh = ms("CPU copy into fresh memory");
  const into = ms("ctx.readbackInto reused TypedArray");
  const neu = ms("ctx.readback (new)");
  const wb = ms("writeBuffer + wait");
  const staged = ms("MAP_WRITE staging, kept + wait (raw)");
  const up = ms("ctx.upload + wait");
  if ([bare, touched, fresh, into, neu].some((x) => x === undefined)) return "";
  const f = (x) => `${num(x)} ms`;
  let text =
    `\n## Where the time goes (${sizeLabel(n)}, medians of this run)\n\n` +
    `- Readback into memory already touched: GPU copy + map alone (bare mapAsync) ${f(bare)}, a CPU copy of the bytes into ` +
    `touched memory ${f(touched)}; done one after the other that is ${f(bare + touched)}, ctx.readbackInto takes ${f(into)} ` +
    "(its pieces overlap the two).\n" +
    `- Readback into a new array: the CPU copy into fresh memory alone takes ${f(fresh)} (page faults: the kernel hands out and ` +
    `zeroes each 4 KiB page on first write) against ${f(touched)} into touched memory; ctx.readback takes ${f(neu)}.\n`;
  if (wb !== undefined && staged !== undefined && up !== undefined) {
    const path = pick(out, "ctx.upload + wait", n)?.path;
    text +=
      `- Upload: writeBuffer + wait ${f(wb)}, a kept MAP_WRITE staging buffer (map, fill, unmap, copy, wait) ${f(staged)}; ` +
      `ctx.upload + wait ${f(up)}${path ? ` (path taken: ${path})` : ""}.\n`;
  }
  return text;
}
