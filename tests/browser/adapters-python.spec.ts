/**
 * The Python leg: an ORT output on the GPU goes to Python (Pyodide) through the
 * webdlpack bridge, comes back as a DLPack tensor and feeds TF.js — the same
 * GPUBuffer all the way, nothing read back until the end.
 */
import { test, expect } from "@playwright/test";
import { openAdaptersPage } from "./fixtures.js";

test("ORT output → Python (same GPU pointer) → back to JS → TF.js op → read back matches NumPy", async ({ page }) => {
  await openAdaptersPage(page, "?pyodide=1");
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, tf, WebGPUBackend, pyodide, py, loadMlp } = window as any;
    const { ref, model } = await loadMlp();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const binding = adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    const { Y } = await session.run({ X: new ort.Tensor("float32", Float32Array.from(ref.input.flat()), [4, 8]) });
    let readBytes = 0;
    const mapAsync = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (this: GPUBuffer, mode: number, offset?: number, size?: number) {
      if ((mode & GPUMapMode.READ) !== 0) readBytes += size ?? this.size - (offset ?? 0);
      return mapAsync.call(this, mode, offset, size);
    };
    const t = binding.tensorFromOrt(Y);
    const pointer = t.data;
    const pt = py.toPython(t);
    t.dispose(); // Python's reference alone keeps the ORT output alive now
    pyodide.globals.set("pt", pt);
    const seen = pyodide
      .runPython(`
import webdlpack
back = webdlpack.from_dlpack(pt)   # Python re-imports it, zero-copy
(tuple(int(v) for v in back.__dlpack_device__()), back.shape, str(back.dtype), back.data_ptr, back.byte_offset)
`)
      .toJs();
    const aliveInPython = Y.location === "gpu-buffer";
    const t2 = py.fromPython(pyodide.globals.get("back"));
    const samePointer = t2.data === pointer;
    const tt = await adapters.tensorToTfjs(tf, t2);
    const s = tf.sigmoid(tt);
    const out = await adapters.tensorFromTfjs(tf, s);
    const before = readBytes;
    const values = Array.from(await adapters.readTensor(out)) as number[];
    out.dispose();
    s.dispose();
    tt.dispose();
    t2.dispose();
    pyodide.runPython("back.dispose(); pt.dispose(); del back, pt");
    pt.destroy();
    const releasedAtEnd = Y.location === "none";
    GPUBuffer.prototype.mapAsync = mapAsync;
    return {
      seen: JSON.parse(JSON.stringify(seen)),
      pointer,
      aliveInPython,
      samePointer,
      before,
      values,
      expected: ref.tfjs_sigmoid.flat(),
      releasedAtEnd,
    };
  });
  expect(r.seen[0]).toEqual([15, 0]);
  expect(r.seen[1]).toEqual([4, 8]);
  expect(r.seen[2]).toContain("float32");
  expect(r.seen[3]).toBe(r.pointer);
  expect(r.seen[4]).toBe(0);
  expect(r.aliveInPython).toBe(true);
  expect(r.samePointer).toBe(true);
  expect(r.before).toBe(0);
  r.values.forEach((v, i) => expect(Math.abs(v - r.expected[i])).toBeLessThan(1e-5));
  expect(r.releasedAtEnd).toBe(true);
});
