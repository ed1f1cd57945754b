/**
 * Pretrained ONNX models from PyPI wheels on ONNX Runtime Web's WebGPU EP and webdlpack's shared device
 * (tests/real-models/packages.json, docs/real-models.md), with Python in Pyodide on both sides: Python makes
 * the inputs on the GPU and hands them to ORT (zero-copy), ORT runs, Python takes the outputs (zero-copy, ORT's
 * own buffers) and reads them. Outputs must equal ORT's own run on the GPUDevice it makes itself; only the
 * final reads map bytes; nothing alive after dispose; no console error but ORT's own warning lines.
 *
 * - PP-OCRv4 text detection (rapidocr-onnxruntime): float32 NCHW picture → probability map.
 * - Silero VAD with float16 weights (silero-vad, `silero_vad_half.onnx`): audio + state → speech probability
 *   and new state, run twice: the second run's state is the first run's output, handed back by Python as is.
 *
 * The two models share the file's two pages (Pyodide boots once, ORT loads once per page): each test makes and
 * releases its own sessions and tensors, counts what is left and the bytes read from its own start, and checks
 * the console errors that came during it.
 */
import { expect, test, type Page } from "@playwright/test";
import { countGpuReads } from "./fixtures.js";
import { openRealModelsPage, type RealModelsWindow } from "./real-models-page.js";

test.setTimeout(480_000);

/** A page and the console errors it collects. */
type Opened = { page: Page; errors: string[] };
/** The shared-device page (Pyodide, webdlpack) and the page where ORT makes its own device. */
let shared: Opened;
let own: Opened;

test.beforeAll(async ({ browser }) => {
  test.setTimeout(120_000);
  const context = await browser.newContext();
  const open = async (python: boolean): Promise<Opened> => {
    const page = await context.newPage();
    return { page, errors: await openRealModelsPage(page, python) };
  };
  [shared, own] = await Promise.all([open(true), open(false)]);
  await countGpuReads(shared.page);
});

test.afterAll(async () => {
  await shared?.page.context().close();
});

type Feeds = Record<string, [number[], number[]]>;
type Outputs = Record<string, { dims: number[]; data: number[] }>[];

/** `runs` runs of `path` on the shared device, Python on both sides; `chain` maps an output to the input it feeds next. */
async function sharedRuns(page: Page, path: string, feeds: Feeds, runs: number, chain: Record<string, string>) {
  return page.evaluate(
    async ({ path, feeds, runs, chain }) => {
      const w = window as unknown as RealModelsWindow;
      const ctx = w.webdlpack.getContext();
      await ctx.setup();
      const py = w.pyodide;
      const binding = w.adapters.bindOrtToContext(w.ort, ctx);
      const session = await w.ort.InferenceSession.create(await w.realModels.bytes(path), binding.sessionOptions());
      const pointersBefore = ctx.stats().livePointers;
      const readsBefore = (window as unknown as { gpuReadBytes: number }).gpuReadBytes;
      py.globals.set("feeds_js", feeds);
      py.globals.set("chain", chain);
      py.runPython(`
import webdlpack, array
from webdlpack.api import debug as _debug
exports_before = _debug.export_stats()["live"]
chain = chain.to_py()
feeds = {k: webdlpack.asarray(webdlpack.from_buffer(array.array("f", v), shape=tuple(d)), device="webgpu:0")
         for k, (v, d) in feeds_js.to_py().items()}
`);
      const outputs: Record<string, { dims: number[]; data: number[]; copied: boolean }>[] = [];
      const zeroIn: boolean[] = [];
      for (let run = 0; run < runs; run++) {
        const names = py.runPython("list(feeds)") as { toJs(): string[]; destroy(): void };
        const inputs: Record<string, { dispose(): void }> = {};
        for (const name of names.toJs()) {
          py.globals.set("name", name);
          const jt = py.runPython("webdlpack.to_js(feeds[name])") as { dispose(): void };
          inputs[name] = await binding.tensorToOrt(jt); // ORT reads the GPUBuffer Python's tensor is in
          zeroIn.push(w.adapters.handoffInfo(inputs[name])?.zeroCopy === true);
          jt.dispose();
        }
        names.destroy();
        const ortOut = await session.run(inputs);
        for (const t of Object.values(inputs)) t.dispose();
        const got: (typeof outputs)[number] = {};
        for (const [name, ortTensor] of Object.entries(ortOut)) {
          py.globals.set("out_js", binding.tensorFromOrt(ortTensor));
          py.globals.set("name", name);
          const r = (await py.runPythonAsync(`
out = webdlpack.from_js(out_js)          # ORT's output buffer, no copy
out_js.dispose()
cpu = await webdlpack.to_cpu_async(out)
row = [list(out.shape), cpu.tolist(), out.flags.is_copied]
cpu.dispose()
if name in chain:                        # ORT's output goes back in as the next run's input, as it is
    feeds[chain[name]].dispose()
    feeds[chain[name]] = out
else:
    out.dispose()
del out, out_js, cpu
row
`)) as { toJs(): [number[], unknown, boolean]; destroy(): void };
          const [dims, nested, copied] = r.toJs();
          r.destroy();
          got[name] = { dims, data: [nested].flat(8) as number[], copied };
        }
        outputs.push(got);
      }
      py.runPython("for t in feeds.values(): t.dispose()\ndel feeds");
      await session.release();
      return {
        outputs,
        zeroIn,
        readBytes: (window as unknown as { gpuReadBytes: number }).gpuReadBytes - readsBefore,
        exportsLeft: Number(py.runPython('_debug.export_stats()["live"] - exports_before')),
        pointersLeft: ctx.stats().livePointers - pointersBefore,
      };
    },
    { path, feeds, runs, chain },
  );
}

/**
 * The same runs on ORT's own device (a session with no device given), in plain JS, in a page of their own:
 * once ORT made its own device, the shared device is refused in that page (BAD_DEVICE, ort.env.webgpu.device).
 */
async function ownRuns(path: string, feeds: Feeds, runs: number, chain: Record<string, string>): Promise<Outputs> {
  const errorsBefore = own.errors.length;
  const out = await own.page.evaluate(
    ({ path, feeds, runs, chain }) => {
      const w = window as unknown as RealModelsWindow;
      return w.realModels.ortOwnRuns(w.ort, path, feeds, runs, chain);
    },
    { path, feeds, runs, chain },
  );
  expect(own.errors.slice(errorsBefore)).toEqual([]);
  return out;
}

/** Own run, shared run, and the checks every model shares; returns the shared outputs. */
async function checkModel(path: string, feeds: Feeds, runs: number, chain: Record<string, string>) {
  const errorsBefore = shared.errors.length;
  const ownOut = await ownRuns(path, feeds, runs, chain);
  const sharedOut = await sharedRuns(shared.page, path, feeds, runs, chain);
  let outputBytes = 0;
  for (let run = 0; run < runs; run++)
    for (const [name, o] of Object.entries(ownOut[run]!)) {
      const s = sharedOut.outputs[run]![name]!;
      expect(s.dims, `${name} run ${run}`).toEqual(o.dims);
      // ORT's WebGPU EP picks its kernels from the model and the adapter; both devices come from the same
      // adapter, so the values are expected to be identical (tolerance 0; docs/real-models.md).
      expect(s.data, `${name} run ${run}`).toEqual(o.data);
      expect(s.copied).toBe(false);
      outputBytes += o.data.length * 4;
    }
  expect(sharedOut.zeroIn.every(Boolean)).toBe(true);
  expect(sharedOut.readBytes).toBeGreaterThanOrEqual(outputBytes);
  expect(sharedOut.readBytes).toBeLessThan(outputBytes + 256 * Object.keys(ownOut[0]!).length * runs); // only the reads
  expect(sharedOut.exportsLeft).toBe(0);
  expect(sharedOut.pointersLeft).toBe(0);
  expect(shared.errors.slice(errorsBefore)).toEqual([]);
  return sharedOut.outputs;
}

test("PP-OCRv4 text detection (ONNX, rapidocr-onnxruntime): shared device via Python = ORT's own device, zero-copy, nothing left", async () => {
  // 64×160 (PP-OCR wants multiples of 32): one line of strokes on white; the compile dominates, not the pixels.
  const x = await shared.page.evaluate(() =>
    Array.from((window as unknown as RealModelsWindow).realModels.ocrInput(64, 160)),
  );
  const out = await checkModel("ppocr-det/model.onnx", { x: [x, [1, 3, 64, 160]] }, 1, {});
  const map = out[0]!["sigmoid_0.tmp_0"]!;
  expect(map.dims).toEqual([1, 1, 64, 160]);
  // A probability map: every value in [0, 1], text rows above the background.
  expect(map.data.every((v) => v >= 0 && v <= 1)).toBe(true);
});

test("Silero VAD, float16 weights (ONNX, silero-vad): two chained runs on the shared device via Python = ORT's own device", async () => {
  const audio = await shared.page.evaluate(() =>
    Array.from((window as unknown as RealModelsWindow).realModels.audioChunk(512, 0)),
  );
  const feeds: Feeds = { input: [audio, [1, 512]], state: [new Array(256).fill(0), [2, 1, 128]] };
  const out = await checkModel("silero-vad/model_half.onnx", feeds, 2, { stateN: "state" });
  for (const run of out) {
    expect(run["output"]!.dims).toEqual([1, 1]);
    expect(run["stateN"]!.dims).toEqual([2, 1, 128]);
  }
  expect(out[1]!["stateN"]!.data).not.toEqual(out[0]!["stateN"]!.data); // the state moved on
});
