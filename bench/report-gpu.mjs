// The GPU hand-off section of the bench report: each framework pair's hand-off against reading back and re-uploading,
// webdlpack's share of ORT → TF.js, and the GPU → CPU bytes the hand-offs read.
import { cell, num, ratio, table } from "./markdown.mjs";
import { sizeLabel } from "./units.mjs";

/** GPU hand-off vs readback + re-upload. */
export function gpuSection(out) {
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
