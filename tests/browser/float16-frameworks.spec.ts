/**
 * float16 at a model's edges (docs/float16.md), on the shared device in the real browser: Python makes a
 * float16 GPU tensor, ONNX Runtime Web takes it as a float16 input and gives float16 outputs in its own GPU
 * buffers (tests/data/half_moves.onnx, scripts/make_fp16_model.py: Identity and Reshape, which ORT runs without
 * a shader, so also on SwiftShader, which lacks `shader-f16`), Python and JS read them. TF.js has no float16:
 * a float16 tensor is refused with a typed error. float16 arithmetic in ORT (half_affine.onnx) needs the
 * device's `shader-f16`: where it is missing ORT's run fails with its own error and webdlpack keeps nothing.
 */
import { cachedTest as test, expect } from "./fixtures.js";
import { openRealModelsPage, type RealModelsWindow } from "./real-models-page.js";

test.setTimeout(300_000);

/** Inputs exact in float16 (1, -2, 0.5, the largest finite 65504, the smallest subnormal 2^-24, …). */
const X = [1, -2, 0.5, 65504, 2 ** -24, 100, 0, 7.75];

test("float16 into and out of ORT-web on the shared device via Python, zero-copy; JS reads a Float16Array; TF.js refuses float16 (UNSUPPORTED)", async ({
  page,
}) => {
  const errors = await openRealModelsPage(page);
  const r = await page.evaluate(
    async ({ xs }) => {
      const w = window as unknown as RealModelsWindow;
      const ctx = w.webdlpack.getContext();
      await ctx.setup();
      const a = w.adapters;
      const py = w.pyodide;
      await a.registerTfjsWebGPUBackend(w.tf, w.WebGPUBackend, ctx, "webgpu");
      const binding = a.bindOrtToContext(w.ort, ctx);
      const model = new Uint8Array(await (await fetch("/tests/data/half_moves.onnx")).arrayBuffer());
      const session = await w.ort.InferenceSession.create(model, binding.sessionOptions());
      const pointersBefore = ctx.stats().livePointers;
      py.globals.set("xs", xs);
      const x = py.runPython(`
import webdlpack, struct
from webdlpack.api import debug as _debug
exports_before = _debug.export_stats()["live"]
raw = bytearray(struct.pack("<%de" % len(xs.to_py()), *xs.to_py()))
x = webdlpack.asarray(webdlpack.from_buffer(raw, dtype="float16"), device="webgpu:0")
webdlpack.to_js(x)
`) as { dispose(): void; dtype: unknown };
      const feed = await binding.tensorToOrt(x);
      const feedInfo = [feed.type, a.handoffInfo(feed)?.zeroCopy];
      const out = await session.run({ X: feed });
      feed.dispose();
      const y = binding.tensorFromOrt(out.Y);
      const z = binding.tensorFromOrt(out.Z);
      const outTypes = [out.Y.type, out.Z.type, [...out.Z.dims]];
      // JS reads the float16 output itself: a Float16Array (Chromium has one).
      const yJs = await a.readTensor(y);
      py.globals.set("y_js", y);
      py.globals.set("z_js", z);
      const back = (await py.runPythonAsync(`
y = webdlpack.from_js(y_js)
z = webdlpack.from_js(z_js)
yc = await webdlpack.to_cpu_async(y)
zc = await webdlpack.to_cpu_async(z)
row = [str(y.dtype), y.flags.is_copied, memoryview(yc).format, yc.tolist(), str(z.dtype), list(z.shape), zc.tolist()]
for t in (y, z, yc, zc):
    t.dispose()
del y, z, yc, zc, y_js, z_js
row
`)) as { toJs(): unknown[]; destroy(): void };
      const pyRow = back.toJs();
      back.destroy();
      // TF.js: float16 is refused, typed, before anything changes hands.
      let refusal: unknown[] = [];
      try {
        (await a.tensorToTfjs(w.tf, y)).dispose();
      } catch (err) {
        const e = err as { name: string; code: string; field: string; value: unknown };
        refusal = [e.name, e.code, e.field, e.value];
      }
      const tensorsAfterRefusal = w.tf.memory().numTensors;
      for (const t of [y, z, x]) t.dispose();
      for (const t of Object.values(out)) (t as { dispose(): void }).dispose();
      py.runPython("x.dispose(); del x");
      await session.release();
      return {
        feedInfo,
        outTypes,
        yJs: [yJs.constructor.name, Array.from(yJs as ArrayLike<number>)],
        pyRow,
        refusal,
        tensorsAfterRefusal,
        exportsLeft: Number(py.runPython('_debug.export_stats()["live"] - exports_before')),
        pointersLeft: ctx.stats().livePointers - pointersBefore,
      };
    },
    { xs: X },
  );
  expect(r.feedInfo).toEqual(["float16", true]);
  expect(r.outTypes).toEqual(["float16", "float16", [2, X.length / 2]]);
  expect(r.yJs).toEqual(["Float16Array", X]);
  expect(r.pyRow).toEqual(["float16", false, "e", X, "float16", [2, X.length / 2], [X.slice(0, 4), X.slice(4)]]);
  expect(r.refusal).toEqual(["WebDLPackError", "UNSUPPORTED", "dtype", "float16"]);
  expect(r.tensorsAfterRefusal).toBe(0);
  expect(r.exportsLeft).toBe(0);
  expect(r.pointersLeft).toBe(0);
  expect(errors).toEqual([]);
});

test("float16 arithmetic in ORT-web needs shader-f16: values where the device has it, else ORT's own error and nothing kept", async ({
  page,
}) => {
  const errors = await openRealModelsPage(page, false);
  const r = await page.evaluate(async (xs) => {
    const w = window as unknown as RealModelsWindow;
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    const a = w.adapters;
    const binding = a.bindOrtToContext(w.ort, ctx);
    const model = new Uint8Array(await (await fetch("/tests/data/half_affine.onnx")).arrayBuffer());
    const session = await w.ort.InferenceSession.create(model, binding.sessionOptions());
    const pointersBefore = ctx.stats().livePointers;
    const F16 = (globalThis as unknown as { Float16Array: new (v: number[]) => ArrayLike<number> }).Float16Array;
    const ptr = ctx.allocWebGPU(xs.length * 2, { owner: "test" });
    ctx.upload(ptr, new F16(xs) as unknown as Uint8Array);
    const x = w.webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float16", shape: [xs.length] });
    const feed = await binding.tensorToOrt(x);
    let outcome: unknown[];
    try {
      const out = await session.run({ X: feed });
      const y = binding.tensorFromOrt(out.Y);
      const z = binding.tensorFromOrt(out.Z);
      outcome = ["ran", Array.from(await a.readTensor(y)), Array.from(await a.readTensor(z))];
      for (const t of [y, z]) t.dispose();
    } catch (err) {
      outcome = ["refused", String((err as Error).message)];
    }
    feed.dispose();
    x.dispose();
    ctx.freeWebGPU(ptr);
    await session.release();
    return {
      hasF16: ctx.getWebGPUDevice().features.has("shader-f16"),
      outcome,
      pointersLeft: ctx.stats().livePointers - pointersBefore,
    };
  }, X);
  if (r.hasF16) {
    const y = X.map((v) => Math.max(v, 0) * 0.5 + 0.25);
    expect(r.outcome).toEqual(["ran", y, y]);
  } else {
    expect(r.outcome[0]).toBe("refused");
    expect(r.outcome[1]).toMatch(/requires f16 but the device does not support it/);
  }
  expect(r.pointersLeft).toBe(0);
  // ORT logs its refusal itself (level E) through console.error; nothing else may appear.
  const shaderF16 = /requires f16 but the device does not support it/;
  expect(r.hasF16 ? errors : errors.filter((e) => !shaderF16.test(e))).toEqual([]);
});
