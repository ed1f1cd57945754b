/**
 * A pretrained TF.js graph model from a registry package (MoveNet SinglePose Lightning, shipped in
 * @vladmandic/human; tests/real-models/packages.json, docs/real-models.md) on webdlpack's shared device, with
 * Python in Pyodide on both sides of it: Python makes the int32 picture on the GPU, hands it to TF.js
 * (zero-copy), runs the model, takes the keypoints back (zero-copy, read-only) and reads them. The result must
 * equal TF.js's own run on the GPUDevice it makes itself, with nothing mapped for reading but the final
 * keypoints, nothing alive after dispose, and no console error.
 */
import { cachedTest as test, countGpuReads, expect } from "./fixtures.js";
import { openRealModelsPage, type RealModelsWindow } from "./real-models-page.js";

test.setTimeout(480_000);

test("MoveNet (TF.js graph model, int32 input, float16-quantized weights): shared device via Python = TF.js's own device, zero-copy hand-offs, nothing left", async ({
  page,
}) => {
  const errors = await openRealModelsPage(page);
  const own = await page.evaluate(async () => {
    const w = window as unknown as RealModelsWindow;
    return Array.from(await w.realModels.movenetOwn(w.tf, w.tfconv, w.realModels.picture(192, 192)));
  });
  await countGpuReads(page);
  const r = await page.evaluate(async () => {
    const w = window as unknown as RealModelsWindow;
    const ctx = w.webdlpack.getContext();
    const py = w.pyodide;
    const a = w.adapters;
    await ctx.setup();
    await a.registerTfjsWebGPUBackend(w.tf, w.WebGPUBackend, ctx, "webgpu"); // TF.js's "webgpu" now on the shared device
    const model = await w.tfconv.loadGraphModel("/build/real-models/movenet/model.json");
    py.globals.set("pixels", w.realModels.picture(192, 192));
    const tensorsBefore = w.tf.memory().numTensors;
    const pointersBefore = ctx.stats().livePointers;
    const readsBefore = (window as unknown as { gpuReadBytes: number }).gpuReadBytes;
    // Python makes the picture on the GPU and hands it to JS (to_js: the same GPU pointer).
    const img = py.runPython(`
import webdlpack
from webdlpack.api import debug as _debug
exports_before = _debug.export_stats()["live"]
img = webdlpack.asarray(webdlpack.from_buffer(pixels.to_py(), shape=(1, 192, 192, 3)), device="webgpu:0")
webdlpack.to_js(img)
`) as import("../../js/src/index.js").Tensor;
    const x = await a.tensorToTfjs(w.tf, img); // TF.js reads img's GPUBuffer
    const zeroIn = a.handoffInfo(x)?.zeroCopy;
    const y = w.tfjsPredict(model, x);
    const k = await a.tensorFromTfjs(w.tf, y); // a webdlpack tensor over TF.js's output buffer
    py.globals.set("k_js", k);
    const out = (await py.runPythonAsync(`
k = webdlpack.from_js(k_js)                     # Python takes TF.js's output, same GPU buffer
out_info = [k.flags.is_copied, k.flags.read_only, str(k.dtype), list(k.shape)]
cpu = await webdlpack.to_cpu_async(k)
values = cpu.tolist()
k.dispose(); img.dispose(); cpu.dispose()
del k, img, cpu, k_js
[out_info, values]
`)) as { toJs(): unknown[]; destroy(): void };
    const [outInfo, values] = out.toJs() as [unknown[], number[][][][]];
    out.destroy();
    for (const t of [k, img]) t.dispose();
    for (const t of [y, x]) t.dispose();
    const exportsLeft = Number(py.runPython('_debug.export_stats()["live"] - exports_before'));
    const readBytes = (window as unknown as { gpuReadBytes: number }).gpuReadBytes - readsBefore;
    model.dispose();
    return {
      zeroIn,
      outInfo,
      values: values.flat(3),
      exportsLeft,
      readBytes,
      tensorsLeft: w.tf.memory().numTensors - tensorsBefore,
      pointersLeft: ctx.stats().livePointers - pointersBefore,
    };
  });
  // Same kernels on the same adapter with the same weights and input: only the GPUDevice object differs, so
  // the keypoints are expected to be identical (tolerance 0; docs/real-models.md).
  expect(r.values).toEqual(own);
  expect(r.values.length).toBe(17 * 3);
  expect(r.zeroIn).toBe(true);
  expect(r.outInfo).toEqual([false, true, "float32", [1, 1, 17, 3]]);
  expect(r.readBytes).toBeGreaterThanOrEqual(17 * 3 * 4); // the keypoints, read once
  expect(r.readBytes).toBeLessThan(17 * 3 * 4 + 256); // … and nothing else (the hand-offs map nothing)
  expect(r.exportsLeft).toBe(0);
  expect(r.tensorsLeft).toBeLessThanOrEqual(0);
  expect(r.pointersLeft).toBe(0);
  expect(errors).toEqual([]);
});
