// The targets of one `make bench` run (bench/results.json → bench/results.md): each with this run's ratio, whether it
// is met, and for a missed one why and what would close it; and their Markdown table. Every ratio compares two
// numbers measured in the same run.
import { exchangeTargets } from "./exchange-report.mjs";
import { ratio, table } from "./markdown.mjs";
import { ortShares } from "./report-gpu.mjs";

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

/** The targets table and, for each missed target, why and what would close it. */
export function targetsSection(out) {
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
