// Targets and the Markdown report of one `make bench` run (bench/results.json → bench/results.md).
// Every ratio compares two numbers measured in the same run.
import { exchangeSection, exchangeTargets } from "./exchange-report.mjs";
import { sizeLabel } from "./lib.mjs";

const KiB = 1024,
  MiB = 1024 * 1024;

/** Why a target is missed and what would close it, per target id: `(target, out) => text`, used only when it is missed. */
const MISS_NOTES = {
  getBuffer: (t, out) => {
    const cpu = (c) => out.cpuExchange.find((r) => r.case === c && r.nbytes === 64 * MiB).median_us;
    const gap = cpu(PULL) - cpu("py→js pull PyProxy.getBuffer (borrowed view)");
    return (
      `bridge.fromPython costs ${gap.toFixed(1)} µs more per exchange than getBuffer() at 64 MiB: it builds a ` +
      "DLManagedTensorVersioned in the heap and a JS Tensor that owns it (deleter run exactly once, finalizer safety net), " +
      "while getBuffer() wraps a borrowed view with no ownership transfer."
    );
  },
  flat: () =>
    "the fixed per-exchange cost should not depend on size; a miss means a copy or a size-dependent check crept in.",
  toJs: () => "the copy baseline got faster or the exchange slower; see the CPU table.",
  exchange: (t) => t.explain(),
  gpuSmall: (t) =>
    t.share
      ? `webdlpack's share is ${t.us.toFixed(2)} µs of ${t.share.total.toFixed(2)} µs (the frameworks' own part ${t.share.frameworks.toFixed(2)} µs): ` +
        "no GPU-process call is left on the path (registerGPUBuffer's device/destroyed check runs once per GPUBuffer, and ORT " +
        "reuses its output buffers). Per output, tensorFromOrt checks ORT's dims once and registers the buffer untracked, and " +
        "the Tensor over it is its one ledger entry (watched by the finalizer; the description is not validated again), with a " +
        "lease tying ORT's dispose to the last holder; tensorToTfjs (async, one await) locates the buffer and ties the TF.js " +
        "tensor's release to that lease. The median is set by the first hand-off after the page waited on the GPU: timed alone " +
        "(bench/out/first-steps.mjs, SwiftShader) it costs 100-300 µs in tensorFromOrt and 45-335 µs in tensorToTfjs's synchronous " +
        "part, the next ones 10-30 µs, the rest about 9-14 µs; TF.js's own zero-copy constructor costs 45-60 µs when it runs " +
        "first. It is not the CPU waking up (300 µs of spinning first changes nothing) nor ORT's buffers (one hand-off of a buffer " +
        "of webdlpack's own first makes the next real one 15-25 µs): every piece of code first run after ORT's inference pays " +
        "tens of µs (checked Tensor.webgpu alone 75-150 µs, registerGPUBuffer 25-115 µs; bench/out/first-parts.mjs), and the " +
        "bench's few hundred hand-offs per page leave them in V8's lower tiers. Cutting the second ledger entry and the second " +
        "validation moved the A/B share within noise (bench/out/ab-ort.mjs); what would move it is far less code per hand-off, " +
        "e.g. a direct ORT → TF.js hand-off with no webdlpack Tensor in between."
      : `${t.us.toFixed(2)} µs: the Python side runs one JS → Python call and the export (made in C by the native ` +
        "exchange module) and, for to_js, Pyodide wraps the returned JS Tensor in a JsProxy (0.8-0.9 µs) before JS gets it; " +
        "see the CPU exchange rows for the same path without the GPU.",
  steady: (t) => t.explain(),
  gpu: () =>
    "the hand-off does no GPU work, so a miss means host-side bookkeeping (pointer registration, lease, TF.js tensor) " +
    "grew; profile tensorFromOrt / tensorToTfjs / to_js.",
  bucket: () =>
    "a cache hit needs no GPU call; a miss means buffers were not reused (check hits/misses in bench/out/alloc-modes.json).",
  translation: (t, out) => {
    const x = out.translation;
    const checked = x.arrayIndexChecked
      ? ` Measured in the same run, array[handle] with a throwing miss check alone is ${(x.arrayIndexChecked.medianNs / x.arrayIndex.medianNs).toFixed(1)}× ` +
        `the bare index, and gpuPointerToBuffer is ${(x.gpuPointerToBuffer.medianNs / x.arrayIndexChecked.medianNs).toFixed(2)}× that checked lookup ` +
        "(the pattern TVM's WebGPU runtime uses for the same job: bufferTable[ptr] plus an assert)."
      : "";
    return (
      `gpuPointerToBuffer costs ${(x.gpuPointerToBuffer.medianNs - x.arrayIndex.medianNs).toFixed(1)} ns more per call than a bare ` +
      `array[handle], which returns undefined for a stale handle instead of an error; in V8 a lookup that can throw pays for ` +
      `its cold error path.${checked} What would close it: ` +
      "resolving the buffer once per tensor rather than per use, or a lookup variant without the typed errors for callers that " +
      "checked the pointer already (webdlpack does not offer one: a stale pointer must never resolve silently)."
    );
  },
};

const TO_JS = "py→js webdlpack.to_js → JS consumer";
const PULL = "py→js pull bridge.fromPython";

/** GPU hand-offs at 1 KiB (issue 13): Python → JS ≤ 2 µs, webdlpack's share of ORT → TF.js ≤ 2 µs (ratio = µs ÷ 2 µs). */
function gpuSmallTargets(out) {
  const row = out.gpuHandoff.sizes[KiB];
  if (row === undefined) return [];
  const rows = [];
  for (const [key, what] of [
    ["pythonToJs", "webdlpack.to_js(g).gpuBuffer"],
    ["pythonPullToJs", "bridge.fromPython(g).gpuBuffer"],
  ]) {
    if (row[key])
      rows.push({
        id: "gpuSmall",
        target: `GPU hand-off at 1 KiB, Python → JS (${what}) ≤ 2 µs (µs ÷ 2 µs)`,
        ratio: (row[key].webdlpack.medianMs * 1000) / 2,
        goal: 1,
        lowerIsBetter: true,
        us: row[key].webdlpack.medianMs * 1000,
      });
  }
  const share = ortShares(out.gpuHandoff).find((x) => x.nbytes === KiB);
  if (share)
    rows.push({
      id: "gpuSmall",
      target: "GPU hand-off at 1 KiB, ORT-web → TF.js: webdlpack's share ≤ 2 µs (µs ÷ 2 µs)",
      ratio: share.webdlpack / 2,
      goal: 1,
      lowerIsBetter: true,
      us: share.webdlpack,
      share,
    });
  return rows;
}

/** The targets with this run's ratios: `{id, target, ratio, goal, lowerIsBetter?, met, note?}`. */
export function targets(out) {
  const cpu = (c, n) => out.cpuExchange.find((r) => r.case === c && r.nbytes === n);
  const wd = cpu(TO_JS, 64 * MiB);
  const rows = [
    ...exchangeTargets(out),
    {
      id: "toJs",
      target: "webdlpack.to_js ≥ 1000× faster than Pyodide's copy (pyodide.ffi.to_js) at 64 MiB",
      ratio: cpu("py→js pyodide.ffi.to_js (copy) → JS consumer", 64 * MiB).median_us / wd.median_us,
      goal: 1000,
    },
    {
      id: "getBuffer",
      target: "bridge.fromPython no slower than getBuffer() at 64 MiB (getBuffer time ÷ webdlpack time)",
      ratio: cpu("py→js pull PyProxy.getBuffer (borrowed view)", 64 * MiB).median_us / cpu(PULL, 64 * MiB).median_us,
      goal: 1,
    },
    {
      id: "flat",
      target: "to_js(64 MiB) ÷ to_js(1 KiB) ≤ 1.5",
      ratio: wd.median_us / cpu(TO_JS, KiB).median_us,
      goal: 1.5,
      lowerIsBetter: true,
    },
    {
      id: "gpu",
      target: "GPU hand-off ORT → TF.js ≥ 50× faster than readback + re-upload at 16 MiB",
      ratio: out.gpuHandoff.sizes[16 * MiB].ortToTfjs.speedup,
      goal: 50,
    },
    {
      id: "gpu",
      target: "GPU hand-off Python → JS ≥ 50× faster than readback + re-upload at 16 MiB",
      ratio: out.gpuHandoff.sizes[16 * MiB].pythonToJs.speedup,
      goal: 50,
    },
    {
      id: "gpu",
      target: "GPU hand-off Transformers.js → TF.js ≥ 50× faster than readback + re-upload at 16 MiB",
      ratio: out.frameworkHandoff.sizes[16 * MiB].transformersToTfjs.speedup,
      goal: 50,
    },
    {
      id: "gpu",
      target: "GPU hand-off LiteRT.js → ORT-web ≥ 50× faster than readback + re-upload at 16 MiB",
      ratio: out.frameworkHandoff.sizes[16 * MiB].litertToOrt.speedup,
      goal: 50,
    },
    ...(out.tvmHandoff === undefined ? [] : tvmTargets(out.tvmHandoff)),
    ...gpuSmallTargets(out),
    {
      id: "bucket",
      target: "bucket allocator ≥ 10× faster than raw createBuffer + destroy at 16 MiB",
      ratio: out.allocModes.sizes[16 * MiB].bucket.speedupVsRaw,
      goal: 10,
    },
    {
      id: "translation",
      target: "pointer translation ≤ 2× an array index (gpuPointerToBuffer ÷ array[handle])",
      ratio: out.translation.ratio,
      goal: 2,
      lowerIsBetter: true,
    },
  ];
  for (const t of rows) {
    t.met = (t.lowerIsBetter ? t.ratio <= t.goal : t.ratio >= t.goal) && t.extraMet !== false;
    if (!t.met) t.note = MISS_NOTES[t.id](t, out);
    delete t.explain;
  }
  return rows;
}

/** tvmjs ⇄ ORT-web at 16 MiB (bench/tvm-handoff.mjs; absent from results made before it existed). */
function tvmTargets(tvm) {
  return [
    {
      id: "gpu",
      target: "GPU hand-off tvmjs → ORT-web ≥ 50× faster than readback + re-upload at 16 MiB",
      ratio: tvm.sizes[16 * MiB].tvmToOrt.speedup,
      goal: 50,
    },
    {
      id: "gpu",
      target: "GPU hand-off ORT-web → tvmjs ≥ 50× faster than readback + re-upload at 16 MiB",
      ratio: tvm.sizes[16 * MiB].ortToTvm.speedup,
      goal: 50,
    },
  ];
}

const num = (x) => (x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const cell = (median, min) => `${num(median)} (${num(min)})`;
const ratio = (x) => `${num(x)}×`;
const table = (head, rows) =>
  `| ${head.join(" | ")} |\n|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|\n` +
  rows.map((r) => `| ${r.join(" | ")} |`).join("\n") +
  "\n";

/** GPU hand-off vs readback + re-upload. */
function gpuSection(out) {
  const rows = [];
  const groups = [
    [
      out.gpuHandoff,
      [
        ["ortToTfjs", "ORT-web output → TF.js"],
        ["pythonToJs", "Python WebGPU tensor → JS (webdlpack.to_js)"],
        ["pythonPullToJs", "Python WebGPU tensor → JS, JS pulls (bridge.fromPython)"],
      ],
    ],
    [
      out.frameworkHandoff,
      [
        ["transformersToTfjs", "Transformers.js output → TF.js"],
        ["litertToOrt", "LiteRT.js output → ORT-web"],
      ],
    ],
    [
      out.tvmHandoff,
      [
        ["tvmToOrt", "tvmjs output → ORT-web"],
        ["ortToTvm", "ORT-web output → tvmjs"],
      ],
    ],
  ];
  for (const [result, cases] of groups) {
    if (result === undefined) continue;
    for (const [n, row] of Object.entries(result.sizes)) {
      for (const [key, label] of cases) {
        const x = row[key];
        if (x === undefined) continue;
        rows.push([
          `${label}, ${sizeLabel(Number(n))}`,
          cell(x.webdlpack.medianMs * 1000, x.webdlpack.minMs * 1000),
          cell(x.readbackReupload.medianMs * 1000, x.readbackReupload.minMs * 1000),
          ratio(x.speedup),
        ]);
      }
    }
  }
  return (
    "## GPU hand-off\n\nµs per hand-off, median (min). webdlpack: the consumer gets the same GPUBuffer " +
    "(ORT: `tensorFromOrt` + `tensorToTfjs`; Python: `webdlpack.to_js(g).gpuBuffer`; Transformers.js: `tensorFromTransformers` + " +
    "`tensorToTfjs`; LiteRT.js: `tensorFromLiteRt` + `tensorToOrt`; tvmjs: `tensorFromTvm` + `tensorToOrt`, " +
    "`tensorFromOrt` + `tensorToTvm`). Baseline: read back to the CPU " +
    "(`Y.getData()` / `await to_cpu_async(g)` / `out.ort_tensor.getData()` / LiteRT's `await out.data()` / tvmjs's " +
    "CPU `copyFrom` + `sync()`) and upload into a new GPUBuffer (`createBuffer` + `writeBuffer`; into tvmjs: " +
    "`tvm.empty(…).copyFrom(data)`) that the consumer then wraps.\n\n" +
    table(["hand-off", "webdlpack", "readback + re-upload", "speed-up"], rows) +
    ortShareLine(out.gpuHandoff) +
    frameworkBytesLine(out.frameworkHandoff)
  );
}

/** ORT → TF.js per size: the frameworks' own part (ORT output getters + TF.js zero-copy constructor) and webdlpack's share. */
export function ortShares(gpu) {
  return Object.entries(gpu.sizes)
    .filter(([, row]) => row.ortConstructors)
    .map(([n, row]) => {
      const total = row.ortToTfjs.webdlpack.medianMs * 1000,
        frameworks = row.ortConstructors.median * 1000;
      return { nbytes: Number(n), total, frameworks, webdlpack: total - frameworks };
    });
}

function ortShareLine(gpu) {
  const shares = ortShares(gpu);
  if (!shares.length) return "";
  return (
    "\nORT-web output → TF.js split, medians of the same run: " +
    shares
      .map(
        (x) =>
          `${sizeLabel(x.nbytes)}: ` +
          `${num(x.total)} µs in all, of which the frameworks' own part (reading the ORT output, TF.js's ` +
          `\`tf.tensor({buffer, zeroCopy: true})\`, timed alone on fresh outputs) ${num(x.frameworks)} µs and webdlpack's share ` +
          `${num(x.webdlpack)} µs`,
      )
      .join("; ") +
    ".\n"
  );
}

/** GPU → CPU bytes the Transformers.js / LiteRT.js hand-offs and their baselines read (mapAsync, counted in the page). */
function frameworkBytesLine(fw) {
  const parts = Object.entries(fw.sizes).map(
    ([n, { checks: c }]) =>
      `${sizeLabel(Number(n))}: Transformers.js → TF.js ` +
      `${c.tjsHandoffBytesRead} B (baseline ${c.tjsReadbackBytesRead} B), LiteRT.js → ORT-web ${c.lrHandoffBytesRead} B (baseline ${c.lrReadbackBytesRead} B)`,
  );
  return `\nGPU → CPU bytes read per hand-off (mapAsync, counted in the page): ${parts.join("; ")}.\n`;
}

/** Allocator modes vs raw createBuffer. */
function allocSection(out) {
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
function memoryCostSection(out) {
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
function translationSection(out) {
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

/** The targets table and, for each missed target, why and what would close it. */
function targetsSection(out) {
  let md = table(
    ["target", "this run", "goal", "met"],
    out.targets.map((t) => [
      t.target,
      ratio(t.ratio),
      `${t.lowerIsBetter ? "≤" : "≥"} ${t.goal}×`,
      t.met ? "yes" : "**no**",
    ]),
  );
  const missed = out.targets.filter((t) => !t.met);
  if (missed.length) md += "\n" + missed.map((t) => `- **${t.target}** — missed: ${t.note}`).join("\n") + "\n";
  return md;
}

/** One line naming what the numbers were measured on. */
function machineLine(out) {
  return (
    `${out.browser}, WebGPU adapter ${out.adapter}, Pyodide ${out.pyodide} (Python ${out.python}), ` +
    `${out.machine.cpus} cores (${out.machine.cpu}), ${out.machine.memGiB} GiB, ${out.machine.platform}; ${out.date.slice(0, 10)}. ` +
    `Made by \`make bench\` in ${out.totalSeconds.toFixed(0)} s`
  );
}

/** The whole report as Markdown. */
export function markdownReport(out) {
  let md = `# webdlpack benchmarks\n\n${machineLine(out)}; plots: cpu-exchange.png, gpu-handoff.png, allocator.png.\n\n`;
  md += "## Targets\n\n" + targetsSection(out);
  md +=
    "\n" +
    [exchangeSection(out), gpuSection(out), allocSection(out), memoryCostSection(out), translationSection(out)].join(
      "\n",
    );
  return md;
}

/** Markers around docs/benchmarks.md's generated section, which `make bench` rewrites. */
export const README_MARKERS = ["<!-- bench:begin (written by make bench) -->", "<!-- bench:end -->"];

/** docs/benchmarks.md's generated section: the same numbers as results.md, one heading level down. */
export function readmeSection(out) {
  const demote = (md) => md.replace(/^## /gm, "#### ");
  return (
    `${machineLine(out)}. Median (min) of repeated samples; every ratio is against a baseline measured in the same run. ` +
    "Full tables: [`bench/results.md`](../bench/results.md); raw numbers: `bench/results.json`.\n\n" +
    targetsSection(out) +
    "\n" +
    [exchangeSection(out), gpuSection(out), allocSection(out), memoryCostSection(out), translationSection(out)]
      .map(demote)
      .join("\n") +
    "\n![CPU exchange](../bench/cpu-exchange.png)\n\n![GPU hand-off](../bench/gpu-handoff.png)\n\n![allocator](../bench/allocator.png)\n"
  );
}

/** `readme` with the text between {@link README_MARKERS} replaced by `section`; throws if the markers are missing. */
export function replaceReadmeSection(readme, section) {
  const [begin, end] = README_MARKERS;
  const i = readme.indexOf(begin),
    j = readme.indexOf(end);
  if (i < 0 || j < i) throw new Error(`README.md has no benchmark markers (${begin} … ${end})`);
  return `${readme.slice(0, i + begin.length)}\n${section}${readme.slice(j)}`;
}
