// The real-model demo page (web/models.html): a picture the page draws goes Python → TF.js → ORT → Python on
// the one shared WebGPU device, and the result is drawn. The model is PP-OCRv4 text detection from the PyPI
// package rapidocr-onnxruntime (make real-models puts it in build/real-models; docs/real-models.md). Every
// hand-off is checked zero-copy (handoffInfo); the only bytes read back are the probability map Python
// post-processes. `?auto=1` runs at once; the result is left in `window.modelsDemoResult` (scripts/demo.mjs
// prints it and saves a screenshot; tests/browser/demo-models.spec.ts checks it).
import * as webdlpack from "../js/dist/index.js";
import * as adapters from "../js/dist/adapters/index.js";
import { panelSnapshot, startPanel } from "./panel.js";

const $ = (sel) => document.querySelector(sel);
const H = 128;
const W = 384;
const MODEL = new URL("../build/real-models/ppocr-det/model.onnx", import.meta.url);
const LINES = ["webdlpack", "DLPack on one WebGPU device", "Python + TF.js + ONNX Runtime"];

/** Draw the picture: dark text on white, three lines. Returns its RGBA bytes. */
function drawPicture() {
  const g = $("#picture").getContext("2d");
  g.fillStyle = "#fff";
  g.fillRect(0, 0, W, H);
  g.fillStyle = "#111";
  g.font = "bold 26px sans-serif";
  g.fillText(LINES[0], 14, 34);
  g.font = "20px sans-serif";
  g.fillText(LINES[1], 14, 72);
  g.fillText(LINES[2], 14, 108);
  return g.getImageData(0, 0, W, H).data;
}

/** Python's post-processing: threshold the map, 4-connected regions, one box per region of >= 30 pixels. */
const POSTPROCESS = `
import webdlpack
async def boxes_of(prob_js, threshold=0.3):
    prob = webdlpack.from_js(prob_js)                 # ORT's output buffer, not a copy
    cpu = await webdlpack.to_cpu_async(prob)          # the one read back of the pipeline
    _, _, h, w = prob.shape
    values = memoryview(cpu).cast("B").cast("f")
    seen = bytearray(h * w)
    boxes = []
    for start in range(h * w):
        if seen[start] or values[start] < threshold:
            continue
        seen[start] = 1
        stack, count = [start], 0
        y0, x0, y1, x1 = h, w, -1, -1
        while stack:
            i = stack.pop()
            count += 1
            y, x = divmod(i, w)
            y0, x0, y1, x1 = min(y0, y), min(x0, x), max(y1, y), max(x1, x)
            for j in (i - 1 if x > 0 else -1, i + 1 if x < w - 1 else -1, i - w, i + w):
                if 0 <= j < h * w and not seen[j] and values[j] >= threshold:
                    seen[j] = 1
                    stack.append(j)
        if count >= 30:
            boxes.append([x0, y0, x1 - x0 + 1, y1 - y0 + 1, count])
    result = webdlpack.to_js(cpu)                     # the map for the page to draw (heap bytes, no copy)
    copied = prob.flags.is_copied
    prob.dispose()
    cpu.dispose()
    return boxes, result, copied
`;

/** Load Pyodide + webdlpack, ORT and TF.js on the shared device, and the model. */
async function load(status) {
  const ctx = webdlpack.getContext();
  await ctx.setup();
  status("Pyodide…");
  const { loadPyodide } = await import("../node_modules/pyodide/pyodide.mjs");
  const pyodide = await loadPyodide({ indexURL: new URL("../node_modules/pyodide/", import.meta.url).href });
  await webdlpack.loadWebDLPack(pyodide);
  pyodide.runPython(POSTPROCESS);
  status("ONNX Runtime Web + TF.js…");
  // By path, no import map: ORT's WebGPU build, and TF.js core + WebGPU backend as the one module make builds.
  const [ort, { tf, WebGPUBackend }] = await Promise.all([
    import("../node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs"),
    import("../build/web/tfjs-webgpu.js"),
  ]);
  ort.env.wasm.wasmPaths = new URL("../node_modules/onnxruntime-web/dist/", import.meta.url).href;
  ort.env.wasm.numThreads = 1;
  await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
  const binding = adapters.bindOrtToContext(ort, ctx);
  const bytes = new Uint8Array(await (await fetch(MODEL)).arrayBuffer());
  const session = await ort.InferenceSession.create(bytes, binding.sessionOptions());
  return { ctx, pyodide, tf, binding, session };
}

/** One timed step: `fn()` gives { value, zeroCopy, detail }. */
async function step(steps, name, fn) {
  const t0 = performance.now();
  const r = await fn();
  steps.push({ index: steps.length + 1, name, zeroCopy: r.zeroCopy, detail: r.detail, ms: performance.now() - t0 });
  $("#steps tbody").innerHTML = steps
    .map(
      (s) =>
        `<tr><td>${s.index}</td><td>${s.name}<br><small>${s.detail}</small></td>` +
        `<td>${s.zeroCopy ? "zero-copy" : "copy"}</td><td>${s.ms.toFixed(1)} ms</td></tr>`,
    )
    .join("");
  return r.value;
}

/** The pipeline, once. */
async function run(env) {
  const { pyodide, tf, binding, session } = env;
  const steps = [];
  const rgba = drawPicture();
  pyodide.globals.set("rgba", rgba);
  const img = await step(steps, "Python: the picture onto the GPU (int32 H×W×4)", () => ({
    value: pyodide.runPython(
      'img = webdlpack.asarray(webdlpack.from_buffer(__import__("array").array("i", rgba.to_py()), shape=(128, 384, 4)), device="webgpu:0")\nwebdlpack.to_js(img)',
    ),
    zeroCopy: false,
    detail: "one upload: the page's pixels into a GPU buffer Python owns",
  }));
  const x = await step(steps, "TF.js takes Python's buffer", async () => {
    const t = await adapters.tensorToTfjs(tf, img);
    return { value: t, zeroCopy: adapters.handoffInfo(t).zeroCopy, detail: "tf.tensor over the same GPUBuffer" };
  });
  const nchw = await step(steps, "TF.js: RGB, (v/255 − 0.5)/0.5, NCHW", () => ({
    value: tf.tidy(() => {
      const rgb = tf.cast(tf.slice(x, [0, 0, 0], [H, W, 3]), "float32");
      return tf.expandDims(tf.transpose(tf.sub(tf.div(rgb, 127.5), 1), [2, 0, 1]), 0);
    }),
    zeroCopy: true,
    detail: "three TF.js kernels on the shared device",
  }));
  const toOrt = await step(steps, "TF.js → ONNX Runtime", async () => {
    const t = await adapters.tensorFromTfjs(tf, nchw);
    const o = await binding.tensorToOrt(t);
    t.dispose();
    return { value: o, zeroCopy: adapters.handoffInfo(o).zeroCopy, detail: "TF.js's output buffer is ORT's input" };
  });
  const out = await step(steps, "ORT: PP-OCRv4 text detection", async () => {
    const r = await session.run({ x: toOrt });
    return { value: r["sigmoid_0.tmp_0"], zeroCopy: true, detail: "output left on the GPU (gpu-buffer)" };
  });
  const probJs = binding.tensorFromOrt(out);
  const [boxes, mapJs, copied] = await step(steps, "Python: threshold + boxes over ORT's buffer", async () => {
    const r = await pyodide.globals.get("boxes_of")(probJs);
    const [b, m, c] = r.toJs({ create_pyproxies: false });
    r.destroy();
    return { value: [b, m, c], zeroCopy: !c, detail: `${b.length} boxes; the map read back once (${H * W * 4} B)` };
  });
  drawResult(mapJs.view, boxes);
  for (const t of [mapJs, probJs, toOrt, img]) t.dispose();
  for (const t of [nchw, x]) t.dispose();
  pyodide.runPython("img.dispose(); del img");
  const handoffsZeroCopy = steps
    .filter((s) => s.name.includes("→") || s.name.includes("takes"))
    .every((s) => s.zeroCopy);
  const panel = panelSnapshot(env.ctx);
  return { ok: handoffsZeroCopy && !copied && boxes.length > 0, steps, boxes, handoffsZeroCopy, panel };
}

/** The picture again, with the probability map in red and Python's boxes in green. */
function drawResult(map, boxes) {
  const g = $("#result").getContext("2d");
  g.drawImage($("#picture"), 0, 0);
  const over = g.getImageData(0, 0, W, H);
  for (let i = 0; i < H * W; i++) {
    const p = map[i];
    over.data[i * 4] = Math.round(over.data[i * 4] * (1 - p) + 255 * p);
    over.data[i * 4 + 1] = Math.round(over.data[i * 4 + 1] * (1 - p));
    over.data[i * 4 + 2] = Math.round(over.data[i * 4 + 2] * (1 - p));
  }
  g.putImageData(over, 0, 0);
  g.strokeStyle = "#1a7f37";
  g.lineWidth = 2;
  for (const [x, y, w, h] of boxes) g.strokeRect(x - 1, y - 1, w + 2, h + 2);
}

/** Put index.html's allocation panel section into this page (one copy of its markup) and start it. */
async function mountPanel(ctx) {
  const html = await (await fetch(new URL("./index.html", import.meta.url))).text();
  const section = new DOMParser().parseFromString(html, "text/html").querySelector("#allocations");
  section.querySelector("#leak")?.parentElement?.removeChild(section.querySelector("#leak"));
  $("#panel-slot").replaceWith(document.adoptNode(section));
  return startPanel(() => panelSnapshot(ctx));
}

const status = (text) => {
  $("#status").textContent = text;
};
try {
  const env = await load(status);
  const refresh = await mountPanel(env.ctx);
  status("ready");
  const go = async () => {
    $("#run").disabled = true;
    status("running…");
    const result = await run(env);
    await refresh();
    $("#verdict").textContent = result.ok
      ? `OK: ${result.boxes.length} text boxes; every hand-off zero-copy; one read back (the map Python post-processed).`
      : "FAILED: a hand-off copied, or no text was found.";
    status("done");
    $("#run").disabled = false;
    return result;
  };
  $("#run").disabled = false;
  $("#run").addEventListener("click", go);
  if (new URLSearchParams(location.search).get("auto") === "1") window.modelsDemoResult = await go();
} catch (err) {
  status(`failed: ${err.code ? `[${err.code}] ` : ""}${err.message}`);
  window.modelsDemoResult = { ok: false, error: String(err.message ?? err) };
}
