/**
 * One lifetime ledger for every GPU tensor path, on real WebGPU: a tensor made
 * in JS (`Tensor.webgpu`), Python's GPU tensors (owner "python") and the C
 * library's allocations (owner "c", or the name given to loadWebDLPackC) are
 * listed by `ctx.ledger.entries()` with pointer, device, owner, bytes and age,
 * and leave it when released; a scope releases a JS tensor made inside it; a
 * dropped JS tensor is collected, released once and reported by `ctx.leaks()`.
 * (The ORT and TF.js adapters' tensors: adapters-e2e.spec.ts.)
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";
import type * as WDL from "../../js/src/index.js";
import type * as CLIB from "../../js/src/bridge/clib/index.js";

type Lib = typeof WDL & typeof CLIB;
type JsTensor = WDL.Tensor;
type Row = { kind: string; owner: string; deviceId: number | null; bytes: number; aged: boolean };
type PyPage = {
  webdlpack: Lib;
  pyodide: CLIB.ClibPyodide & { runPython(code: string): unknown };
};

test("a JS Tensor.webgpu is a ledger entry with its owner until disposed; a scope disposes one made inside it", async ({
  jsPage,
}) => {
  const r = await jsPage.evaluate(async () => {
    const { getContext, Tensor } = (window as unknown as { webdlpack: Lib }).webdlpack;
    const ctx = getContext();
    await ctx.setup();
    const rows = (p: number): Row[] =>
      ctx.ledger
        .entries()
        .filter((e) => e.pointer === p)
        .map((e) => ({ kind: e.kind, owner: e.owner, deviceId: e.deviceId, bytes: e.bytes, aged: e.ageMs >= 0 }));
    let released = 0;
    const ptr = await ctx.allocWebGPUChecked(4096, { owner: "my-app" });
    const t = Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [16, 16],
      onRelease: () => {
        released++;
        ctx.freeWebGPU(ptr);
      },
    });
    const named = Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "uint8",
      shape: [8],
      byteOffset: 8,
      owner: "physics",
      onRelease: () => undefined,
    });
    const live = rows(ptr);
    named.dispose();
    t.dispose();
    const afterDispose = { rows: rows(ptr), released };
    // A scope releases the tensor made inside it (which frees its buffer), not the one returned.
    let inner = 0;
    let innerTensor: JsTensor | null = null;
    const kept = ctx.scope(() => {
      const a = ctx.allocWebGPU(256);
      innerTensor = Tensor.webgpu({
        pointer: a,
        deviceId: 0,
        dtype: "int32",
        shape: [64],
        onRelease: () => {
          inner++;
          ctx.freeWebGPU(a);
        },
      });
      const b = ctx.allocWebGPU(256);
      return Tensor.webgpu({
        pointer: b,
        deviceId: 0,
        dtype: "int32",
        shape: [64],
        onRelease: () => ctx.freeWebGPU(b),
      });
    });
    const tensor = innerTensor as unknown as JsTensor;
    let useAfterScope = "";
    try {
      void tensor.shape;
    } catch (e) {
      useAfterScope = (e as { code: string }).code;
    }
    const scope = {
      inner,
      disposed: tensor.disposed,
      useAfterScope,
      keptAlive: !kept.disposed && rows(kept.data).length === 2,
    };
    tensor.dispose(); // already released by the scope: nothing runs twice
    const keptPtr = kept.data;
    kept.dispose();
    return {
      ptr,
      live,
      afterDispose,
      scope,
      innerAfter: inner,
      keptGone: rows(keptPtr).length,
      entries: ctx.ledger.entries().length,
    };
  });
  expect(r.live).toEqual([
    { kind: "gpu-buffer", owner: "my-app", deviceId: 0, bytes: 4096, aged: true },
    { kind: "tensor", owner: "js", deviceId: 0, bytes: 1024, aged: true },
    { kind: "tensor", owner: "physics", deviceId: 0, bytes: 8, aged: true },
  ]);
  expect(r.afterDispose).toEqual({ rows: [], released: 1 });
  expect(r.scope).toEqual({ inner: 1, disposed: true, useAfterScope: "DISPOSED", keptAlive: true });
  expect(r.innerAfter).toBe(1);
  expect(r.keptGone).toBe(0);
  expect(r.entries).toBe(0);
});

test("a dropped JS Tensor.webgpu is collected, released once and reported as a tensor leak", async ({ jsPage }) => {
  const warnings: string[] = [];
  jsPage.on("console", (msg) => {
    if (msg.type() === "warning" && msg.text().includes("webdlpack: leaked tensor")) warnings.push(msg.text());
  });
  const r = await jsPage.evaluate(async () => {
    const { Tensor } = (window as unknown as { webdlpack: Lib }).webdlpack;
    const { setup, codeOf, collectLeaks } = (window as unknown as HarnessWindow).testkit;
    const { ctx } = await setup();
    ctx.debug.captureStacks = true;
    const counter = { released: 0 };
    let ptr = 0;
    (function makeAndDropTensor() {
      const p = ctx.allocWebGPU(2048, { owner: "forgetful" });
      ptr = p;
      Tensor.webgpu({
        pointer: p,
        deviceId: 0,
        dtype: "float32",
        shape: [512],
        owner: "forgetful",
        onRelease: () => {
          counter.released++;
          ctx.freeWebGPU(p);
        },
      });
    })();
    await collectLeaks(ctx);
    const code = codeOf(() => ctx.gpuPointerToBuffer(ptr), "live");
    return {
      leaks: ctx.leaks(),
      ptr,
      code,
      released: counter.released,
      left: ctx.ledger.entries().filter((e) => e.pointer === ptr).length,
    };
  });
  expect(r.leaks).toHaveLength(1);
  expect(r.leaks[0]).toMatchObject({ kind: "tensor", owner: "forgetful", deviceId: 0, bytes: 2048, pointer: r.ptr });
  expect(r.leaks[0]!.where).toContain("makeAndDropTensor");
  expect(r.released).toBe(1);
  expect(r.code).toBe("STALE_POINTER");
  expect(r.left).toBe(0);
  await expect.poll(() => warnings.length).toBe(1);
});

test("Python's GPU tensors (owner python) and C's allocations (owner c, or the loader's name) are ledger entries until freed", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as PyPage;
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    const py = (code: string): unknown => {
      const v = w.pyodide.runPython(code) as { toJs?: () => unknown };
      return typeof v === "object" && v !== null && typeof v.toJs === "function" ? v.toJs() : v;
    };
    const rows = (p: number): Row[] =>
      ctx.ledger
        .entries()
        .filter((e) => e.pointer === p)
        .map((e) => ({ kind: e.kind, owner: e.owner, deviceId: e.deviceId, bytes: e.bytes, aged: e.ageMs >= 0 }));
    // Python.
    const [pz, pa] = py(`
import webdlpack, array
z10 = webdlpack.zeros((10, 10), "float32", device="webgpu:0")
a10 = webdlpack.asarray(array.array("h", [1, 2, 3]), device="webgpu:0")
[z10.data_ptr, a10.data_ptr]
`) as [number, number];
    const python = {
      zeros: rows(pz),
      upload: rows(pa),
      owners: ctx
        .stats()
        .owners.filter((o) => o.owner === "python")
        .map((o) => o.livePointers),
    };
    py("z10.dispose(); a10.dispose(); del z10, a10");
    const pythonAfter = rows(pz).length + rows(pa).length;
    // C, default owner and a named one.
    const results: Record<string, { live: Row[]; after: number }> = {};
    for (const owner of [undefined, "c-physics"]) {
      const lib = await w.webdlpack.loadWebDLPackC(w.pyodide, {
        url: "/wasm/build/libwebdlpack.so",
        ...(owner ? { owner } : {}),
      });
      try {
        const p = py(`
import ctypes
wdl10 = ctypes.CDLL("${lib.path}")
wdl10.wdl_webgpu_alloc.restype = ctypes.c_uint32
wdl10.wdl_webgpu_alloc.argtypes = [ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint32]
wdl10.wdl_webgpu_free.argtypes = [ctypes.c_uint32]
cp10 = wdl10.wdl_webgpu_alloc(0, 3000, 0)
cp10`) as number;
        const live = rows(p);
        py("assert wdl10.wdl_webgpu_free(cp10) == 0");
        results[owner ?? "c"] = { live, after: rows(p).length };
      } finally {
        lib.dispose();
      }
    }
    return { python, pythonAfter, c: results };
  });
  expect(r.python.zeros).toEqual([{ kind: "gpu-buffer", owner: "python", deviceId: 0, bytes: 512, aged: true }]);
  expect(r.python.upload).toEqual([{ kind: "gpu-buffer", owner: "python", deviceId: 0, bytes: 256, aged: true }]);
  expect(r.python.owners).toEqual([2]);
  expect(r.pythonAfter).toBe(0);
  expect(r.c["c"]).toEqual({
    live: [{ kind: "gpu-buffer", owner: "c", deviceId: 0, bytes: 4096, aged: true }],
    after: 0,
  });
  expect(r.c["c-physics"]).toEqual({
    live: [{ kind: "gpu-buffer", owner: "c-physics", deviceId: 0, bytes: 4096, aged: true }],
    after: 0,
  });
});

test("with webdlpack.scope(): Python's GPU tensors made inside are freed at the end (pointer STALE, ledger entry gone) unless kept", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as PyPage;
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    const base = ctx.stats().livePointers;
    const out = (
      w.pyodide.runPython(`
import webdlpack, array
with webdlpack.scope() as s11:
    tmp11 = webdlpack.zeros((256,), "float32", device="webgpu:0")
    up11 = webdlpack.asarray(array.array("i", [1, 2, 3]), device="webgpu:0")
    kept11 = webdlpack.keep(webdlpack.zeros((8,), "uint8", device="webgpu:0"))
    inside11 = [tmp11.data_ptr, up11.data_ptr, kept11.data_ptr]
[inside11, s11.disposed, tmp11.disposed, up11.disposed, kept11.disposed]
`) as { toJs(): [number[], number, boolean, boolean, boolean] }
    ).toJs();
    const [[tmp, up, kept], disposed, tmpDisposed, upDisposed, keptDisposed] = out;
    const stale = (p: number): string =>
      (window as unknown as HarnessWindow).testkit.codeOf(() => ctx.gpuPointerInfo(p), "live");
    const states = { tmp: stale(tmp!), up: stale(up!), kept: stale(kept!) };
    const ledgerPointers = ctx.ledger.entries().map((e) => e.pointer);
    const liveAfterScope = ctx.stats().livePointers - base;
    w.pyodide.runPython("kept11.dispose(); del tmp11, up11, kept11, s11, inside11");
    return {
      disposed,
      tmpDisposed,
      upDisposed,
      keptDisposed,
      states,
      inLedger: [tmp, up, kept].map((p) => ledgerPointers.includes(p!)),
      liveAfterScope,
      liveAtEnd: ctx.stats().livePointers - base,
    };
  });
  expect(r.disposed).toBe(2);
  expect([r.tmpDisposed, r.upDisposed, r.keptDisposed]).toEqual([true, true, false]);
  expect(r.states).toEqual({ tmp: "STALE_POINTER", up: "STALE_POINTER", kept: "live" });
  expect(r.inLedger).toEqual([false, false, true]);
  expect(r.liveAfterScope).toBe(1);
  expect(r.liveAtEnd).toBe(0);
});
