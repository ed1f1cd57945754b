// Statistics, targets and the Markdown report of one GPU transfer run (Node on dawn.node or Chromium).
// Every ratio divides two medians measured in the same run.

import { median, ratioInterval } from "./interval.mjs";

const KiB = 1024,
  MiB = 1024 * 1024;

/** Readable size. */
export function sizeLabel(n) {
  return n === 0 ? "—" : n >= MiB ? `${n / MiB} MiB` : `${n / KiB} KiB`;
}

/** Median, min and count of `samples` (ms). */
function summarize(samples) {
  return { median: median(samples), min: Math.min(...samples), runs: samples.length };
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
    r.gbps = r.nbytes > 0 && r.direction !== "anchor" ? r.nbytes / (s.median * 1e6) : null;
    r.samples = r.samples.map((x) => Math.round(x * 1e4) / 1e4); // 0.1 µs is below every timer's resolution
  }
}

/**
 * The phases a run may hold: fresh devices (suite.js: cold, warm) and as applications use transfers (app.js: the
 * first upload right after setup, one long-lived device in shuffled order, small calls after idle).
 */
export const PHASES = ["cold", "warm", "first", "long", "idle"];
/** What each phase is, for the report. */
export const PHASE_TEXT = {
  cold: "cold: a variant's first call on a fresh device",
  warm: "warm: later calls on a fresh device per size",
  first: "first upload right after `ctx.setup()` (fresh device, no work between)",
  long: "long-lived: one device, every size in shuffled order",
  idle: "idle: small calls on the long-lived device, queue drained and a timer before each",
};

/** The row named `name` at `n` bytes in `phase` (one of {@link PHASES}). */
export function pick(out, name, n, phase = "warm") {
  return out.rows.find((r) => r.name === name && r.nbytes === n && r.phase === phase);
}

/** What webdlpack is held against, per direction: its row, and the hand-written rows (the best of them counts). */
export const COMPARISONS = [
  {
    what: "upload",
    ours: "ctx.upload + wait",
    anchors: [
      "writeBuffer + wait (raw)",
      "staging, a new mapped buffer per call + wait (raw)",
      "staging, one kept buffer mapped again after use + wait (raw)",
    ],
  },
  {
    what: "readback into a kept array",
    ours: "ctx.readbackInto reused TypedArray",
    anchors: ["readback into a reused array (raw)"],
  },
  {
    what: "readback into wasm memory",
    ours: "ctx.readbackInto wasm memory",
    // The hand-written way that puts the bytes where this call puts them (until session 12: a reused array's, a
    // different task — bytes that still had to be copied into wasm memory).
    anchors: ["readback into wasm memory (raw)"],
  },
  {
    what: "readback, a fresh array",
    ours: "ctx.readback (a fresh array)",
    anchors: ["readback into a fresh array (raw)"],
  },
];

/** Per size, phase and comparison: webdlpack's median, the best anchor's, and best ÷ webdlpack (≥ 1: as fast or faster). */
export function targetsFor(out) {
  const t = [];
  for (const n of out.sizes) {
    for (const phase of PHASES) {
      for (const c of COMPARISONS) {
        const ours = pick(out, c.ours, n, phase);
        const anchors = c.anchors.map((a) => pick(out, a, n, phase)).filter((row) => row !== undefined);
        if (ours === undefined || anchors.length === 0) continue;
        const best = anchors.reduce((x, y) => (y.medianMs < x.medianMs ? y : x));
        const interval = ratioInterval(ours.samples, best.samples);
        t.push({
          nbytes: n,
          phase,
          what: c.what,
          oursMs: ours.medianMs,
          best: best.name,
          bestMs: best.medianMs,
          ratio: best.medianMs / ours.medianMs,
          met: best.medianMs / ours.medianMs >= 1,
          // The ratio's 95 % bootstrap interval (interval.mjs; null: too few samples).
          low: interval?.low ?? null,
          high: interval?.high ?? null,
        });
      }
    }
  }
  return t;
}

/** Finish a run's record: stats on every row, targets. */
export function finish(out, env) {
  addStats(out.rows);
  out.env = env;
  out.targets = targetsFor(out);
  return out;
}

/** A ring's counters in words. */
const ringText = (r) =>
  `${r.kept} kept (${sizeLabel(r.keptBytes)}), ${r.inUse} in use, ${r.created} created, ${r.reused} reused`;

const num = (x) =>
  x == null ? "—" : x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3);
const table = (head, rows) =>
  `| ${head.join(" | ")} |\n|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|\n` +
  rows.map((r) => `| ${r.join(" | ")} |`).join("\n") +
  "\n";

/** The per-size table: webdlpack against the best hand-written anchor, cold and warm. */
function targetTable(out) {
  const cell = (n, phase, what) => {
    const x = out.targets.find((t) => t.nbytes === n && t.phase === phase && t.what === what);
    return x
      ? `${num(x.oursMs)} / ${num(x.bestMs)} = ${x.met ? "" : "**"}${x.ratio.toFixed(2)}×${x.met ? "" : "**"}`
      : "—";
  };
  const whats = COMPARISONS.map((c) => c.what);
  const rows = [];
  for (const phase of PHASES)
    for (const n of out.sizes)
      if (out.targets.some((t) => t.nbytes === n && t.phase === phase))
        rows.push([`${sizeLabel(n)} ${phase}`, ...whats.map((w) => cell(n, phase, w))]);
  return table(["size", ...whats], rows);
}

/**
 * The cells below 1 with their ratio's 95 % bootstrap interval (interval.mjs), and how many below 0.9 stay below it
 * over the whole interval: a sentence ("" when every cell is ≥ 1 or no interval was taken).
 */
export function intervalText(targets) {
  const below = targets.filter((t) => !t.met && t.low !== null && t.low !== undefined);
  if (below.length === 0) return "";
  const under = below.filter((t) => t.ratio < 0.9);
  const sure = under.filter((t) => t.high < 0.9).length;
  const tied = below.filter((t) => t.high >= 1).length;
  const cells = below.map(
    (t) =>
      `${sizeLabel(t.nbytes)} ${t.phase} ${t.what} ${t.ratio.toFixed(2)} (${t.low.toFixed(2)}–${t.high.toFixed(2)})`,
  );
  return (
    `\nThe cells below 1 with their ratio's 95 % bootstrap interval (the rounds resampled 2000 times, both sides of a ` +
    `round drawn together; bench/gpu/interval.mjs): ${cells.join("; ")}. Of the ${under.length} below 0.9, ${sure} ` +
    `stay below 0.9 over the whole interval; of the ${below.length} below 1, ${tied} reach 1 within it.\n`
  );
}

/** The report as Markdown: the per-size table, then every row's median (min) by direction and phase. */
export function markdownReport(out) {
  const a = out.adapter;
  const missed = out.targets.filter((t) => !t.met).length;
  let md =
    `# GPU transfers — ${out.runtime}\n\nAdapter: vendor \`${a.vendor}\`, architecture \`${a.architecture}\`, device \`${a.device ?? ""}\`` +
    `${a.description ? `, "${a.description}"` : ""}; maxBufferSize ${out.limits.maxBufferSize}. ` +
    `${out.machine.cpus} cores (${out.machine.cpu}), ${out.machine.platform}; ${out.date.slice(0, 10)}; ${out.totalSeconds.toFixed(0)} s.\n\n` +
    "Cold: a variant's first call on a fresh device (webdlpack's after `ctx.setup` on it), median of the cold calls. " +
    "Warm: median of rounds that time every variant once, each round in a new (seeded, shuffled) order. " +
    "As applications use transfers (bench/gpu/app.js): first — an upload as the first call right after `ctx.setup()` " +
    "on a fresh device, the host bytes made before and the destination from a synchronous `ctx.allocWebGPU`; long — " +
    "one long-lived device, each round the sizes in a new shuffled order and every variant once per size, the first " +
    "round left out; idle — the small sizes on that device with the queue drained and a timer before every call. " +
    "`(raw)` rows are hand-written WebGPU with no webdlpack code; `ctx.*` rows are webdlpack's context.\n\n" +
    "## webdlpack against the best hand-written code, per size\n\n" +
    "ms of webdlpack / ms of the fastest hand-written variant of the same size and phase in this run = their ratio " +
    `(≥ 1: webdlpack as fast or faster). ${out.targets.length - missed} of ${out.targets.length} cells ≥ 1` +
    `${missed ? `; below 1 in bold` : ""}.\n\n` +
    targetTable(out) +
    intervalText(out.targets);
  const empty = pick(out, "empty submit + onSubmittedWorkDone (raw)", 1024);
  const small = pick(out, "ctx.readback (a fresh array)", 1024);
  if (empty && small)
    md += `\n1 KiB: \`ctx.readback\` ${num(small.medianMs * 1000)} µs against the empty submit's ${num(empty.medianMs * 1000)} µs timed among the same rounds (${(small.medianMs / empty.medianMs).toFixed(2)}×).\n`;
  if (out.setups?.length)
    md += `\n\`ctx.setup\` on a fresh device: first ${num(out.setups[0])} ms (measures the adapter, makes staging ready), later ones median ${num([...out.setups.slice(1)].sort((x, y) => x - y)[Math.floor((out.setups.length - 1) / 2)])} ms (the adapter's figures reused, staging made ready).\n`;
  const c = out.calibration;
  if (c)
    md +=
      `\nWhat setup measured and decided (ms, writeBuffer / staging, cold then warm${c.upload[0]?.pairs === undefined ? "" : c.upload[0]?.pieces === undefined ? " (medians of interleaved pairs)" : " (medians of interleaved rounds; staging in smaller pieces timed in the same rounds)"} → the way of the size's class, ` +
      `cold / warm; \`ctx.transferStats().calibration\`): ` +
      c.upload
        .map((u) => {
          const way = (w) => (w === undefined ? "" : w === "staging" ? "st" : "wb");
          const inPieces = u.pieceBytes ? ` in ${sizeLabel(u.pieceBytes)} pieces` : "";
          const decided =
            u.cold === undefined ? "" : ` → ${way(u.cold)}/${way(u.warm)}${inPieces} from ${sizeLabel(u.fromBytes)}`;
          const pairs = u.pairs === undefined ? "" : ` (${u.pairs} ${u.pieces === undefined ? "pairs" : "rounds"})`;
          const pieces = (u.pieces ?? [])
            .map((p) => `, in ${sizeLabel(p.pieceBytes)} pieces ${num(p.staging)}`)
            .join("");
          return `${sizeLabel(u.bytes)} ${num(u.writeBufferCold)}/${num(u.stagingCold)}, ${num(u.writeBuffer)}/${num(u.staging)}${pieces}${pairs}${decided}`;
        })
        .join("; ") +
      (c.newStagingMs === undefined
        ? ""
        : `; new staging at the largest size ${num(c.newStagingMs)} (${c.makeStaging ? "made" : "not made"} where none is ready)`) +
      `; read staging map ${num(c.readMapMs)} vs touching fresh memory ${num(c.touchMs)}` +
      (c.readInTurn === undefined
        ? ""
        : `; new read staging ${num(c.newReadMs)} vs a GPU copy ${num(c.snapshotMs)} (large first readbacks ${c.readInTurn ? "in turns" : "in new staging"})`) +
      `; ${num(c.totalMs)} ms in all.\n`;
  if (out.app)
    md +=
      `\nThe long-lived device's staging after its rounds: read ${ringText(out.app.afterLong.read)}; write ` +
      `${ringText(out.app.afterLong.write)} (${out.app.longRounds} rounds${out.app.smallRepeats > 1 ? `, the small sizes ${out.app.smallRepeats} times a round` : ""}; idle: ${out.app.idleRounds} rounds, ` +
      `${out.app.idleMs} ms between calls).\n`;
  for (const phase of PHASES) {
    for (const dir of ["upload", "readback", "anchor"]) {
      const names = [...new Set(out.rows.filter((r) => r.direction === dir && r.phase === phase).map((r) => r.name))];
      if (!names.length) continue;
      md += `\n## ${PHASE_TEXT[phase]}: ${{ readback: "GPU → CPU (readback)", upload: "CPU → GPU (upload)", anchor: "the queue round trip" }[dir]}\n\n`;
      md += "ms, median (min) · GB/s of the median\n\n";
      md += table(
        ["path", ...out.sizes.map(sizeLabel)],
        names.map((name) => [
          name,
          ...out.sizes.map((n) => {
            const r = pick(out, name, n, phase);
            return r
              ? `${num(r.medianMs)} (${num(r.minMs)})${r.gbps ? ` · ${num(r.gbps)}` : ""}${r.path ? ` ${r.path}` : ""}`
              : "—";
          }),
        ]),
      );
    }
  }
  return md;
}
