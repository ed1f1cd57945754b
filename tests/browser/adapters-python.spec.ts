/**
 * The Python leg: an ORT output on the GPU goes to Python (Pyodide) through the
 * webdlpack bridge, comes back as a DLPack tensor and feeds TF.js — the same
 * GPUBuffer all the way, nothing read back until the end.
 */
import { cachedTest as test, expect, openAdaptersPage } from "./fixtures.js";

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
    // The adopted output's pointer has no ledger entry of its own: its holders do, Python's export among them.
    const holders = ctx.ledger
      .entries()
      // biome-ignore lint/suspicious/noExplicitAny: page-side ledger rows
      .filter((e: any) => e.pointer === pointer)
      // biome-ignore lint/suspicious/noExplicitAny: page-side ledger rows
      .map((e: any) => `${e.kind}:${e.owner}`);
    const livePointers = ctx.stats().livePointers;
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
      holders,
      livePointers,
    };
  });
  expect(r.livePointers).toBe(1);
  expect(r.holders).toEqual(["export:python"]);
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

test("the ledger lists Python as a holder while Python alone keeps an adopted GPU buffer alive", async ({ page }) => {
  await openAdaptersPage(page, "?pyodide=1");
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, pyodide, py } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const buffer = ctx.getWebGPUDevice().createBuffer({
      size: 64,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    const base = ctx.stats().livePointers;
    const rows = () =>
      ctx.ledger
        .entries()
        // biome-ignore lint/suspicious/noExplicitAny: page-side ledger rows
        .map((e: any) => `${e.kind}:${e.owner}:${e.pointer === pointer}:${e.bytes}`)
        .sort();
    // An adopted buffer (its pointer is not a ledger entry of its own: each holder is).
    const t = adapters.tensorFromGPUBuffer(buffer, { dtype: "float32", shape: [16], owned: true });
    const pointer = t.data;
    const whileJsHolds = rows();
    const pt = py.toPython(t);
    const bothHold = rows();
    t.dispose(); // Python's reference alone keeps the buffer alive now
    const pythonHolds = { live: ctx.stats().livePointers - base, rows: rows() };
    pyodide.globals.set("pt", pt);
    pyodide.runPython("pt.dispose(); del pt");
    pt.destroy();
    return { whileJsHolds, bothHold, pythonHolds, after: { live: ctx.stats().livePointers - base, rows: rows() } };
  });
  const own = "webdlpack.adapters.gpu-buffer";
  expect(r.whileJsHolds).toEqual([`gpu-buffer:${own}:true:64`, `tensor:${own}:true:64`]);
  expect(r.bothHold).toEqual(["export:python:true:64", `gpu-buffer:${own}:true:64`, `tensor:${own}:true:64`]);
  expect(r.pythonHolds).toEqual({ live: 1, rows: ["export:python:true:64", `gpu-buffer:${own}:true:64`] });
  expect(r.after).toEqual({ live: 0, rows: [] });
});
