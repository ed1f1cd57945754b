/**
 * GPU byte movement in Chromium (context/transfers/, the one home): readbacks are ordered after all submitted work
 * and never torn by later work, at sizes that take one staging buffer and several pieces; staging buffers are
 * reused and never handed out mapped; uploads, copies and clears; a device lost mid-transfer rejects every pending
 * transfer with DEVICE_LOST and leaves no staging buffer mapped or kept; Python's asarray / from_dlpack(device="cpu")
 * / to_cpu_async go through the same transfers (their counters move).
 */
import { test, expect, type PageTestkit } from "./fixtures.js";

type Webdlpack = typeof import("../../js/src/index.js");
type W = {
  webdlpack: Webdlpack;
  testkit: PageTestkit;
  pyodide: { runPython(c: string): unknown; runPythonAsync(c: string): Promise<unknown> };
};

test("readback ordering, pieces, host targets, uploads, copies and clears in Chromium; staging reused, none left out", async ({
  jsPage,
}) => {
  const r = await jsPage.evaluate(async () => {
    const w = window as unknown as W;
    const { ctx, device } = await w.testkit.setup();
    const MiB = 2 ** 20;
    const bytes = (n: number, seed: number) =>
      Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed * 13 + (i >> 8)) & 0xff);
    const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);
    const out: Record<string, unknown> = {};
    for (const n of [12, 3 * MiB, 9 * MiB + 8]) {
      const ptr = ctx.allocWebGPU(n);
      const first = bytes(n, 1);
      ctx.upload(ptr, first);
      const enc = device.createCommandEncoder();
      enc.clearBuffer(ctx.gpuPointerToBuffer(ptr), 0, 8);
      device.queue.submit([enc.finish()]); // not waited for: the readback still comes after it
      const pending = ctx.readback(ptr);
      ctx.upload(ptr, bytes(n, 2)); // after the readback was asked for: must not be seen
      const want = first.slice();
      want.fill(0, 0, 8);
      out[`ordered ${n}`] = same(new Uint8Array(await pending), want);
      const memory = new WebAssembly.Memory({ initial: Math.ceil((n + 70000) / 65536), maximum: 4000 });
      const into = ctx.readbackInto(ptr, { memory, address: 4099, byteLength: n - 4 }, { byteOffset: 4 });
      memory.grow(10);
      await into;
      out[`wasm ${n}`] = same(new Uint8Array(memory.buffer, 4099, n - 4), bytes(n, 2).subarray(4));
      ctx.freeWebGPU(ptr);
    }
    const a = ctx.allocWebGPU(4 * MiB);
    const b = ctx.allocWebGPU(4 * MiB);
    ctx.upload(a, bytes(4 * MiB, 3));
    ctx.copyBuffer(a, b, { srcOffset: 256, byteLength: 4 * MiB - 256 });
    ctx.clearBuffer(a);
    out.copy = same(
      new Uint8Array(await ctx.readback(b, { byteLength: 4 * MiB - 256 })),
      bytes(4 * MiB, 3).subarray(256),
    );
    out.clear = new Uint8Array(await ctx.readback(a)).every((v) => v === 0);
    out.misaligned = w.testkit.codeOf(() => ctx.copyBuffer(a, b, { srcOffset: 2, byteLength: 8 }));
    ctx.freeWebGPU(a);
    ctx.freeWebGPU(b);
    out.stats = ctx.transferStats(0);
    return out;
  });
  for (const [key, value] of Object.entries(r))
    if (key !== "stats" && key !== "misaligned") expect(value, key).toBe(true);
  expect(r.misaligned).toBe("UNSUPPORTED");
  const s = r.stats as { pending: number; read: { inUse: number; reused: number } };
  expect(s.pending).toBe(0);
  expect(s.read.inUse).toBe(0);
  expect(s.read.reused).toBeGreaterThan(0);
});

test("a device lost mid-transfer: every pending transfer rejects with DEVICE_LOST; no staging buffer stays mapped, out or kept", async ({
  jsPage,
}) => {
  const r = await jsPage.evaluate(async () => {
    const w = window as unknown as W;
    const { ctx } = await w.testkit.setup();
    const adapter = await navigator.gpu.requestAdapter();
    const doomed = await adapter!.requestDevice();
    const made: GPUBuffer[] = [];
    const create = doomed.createBuffer.bind(doomed);
    doomed.createBuffer = (desc: GPUBufferDescriptor) => {
      const buffer = create(desc);
      made.push(buffer);
      return buffer;
    };
    const id = ctx.registerWebGPUDevice(doomed);
    const ptrs = [1024, 5 * 2 ** 20, 12 * 2 ** 20].map((n) => ctx.allocWebGPU(n, { deviceId: id }));
    for (const p of ptrs) ctx.upload(p, new Uint8Array(ctx.gpuPointerInfo(p).requestedSize).fill(7));
    await ctx.readback(ptrs[0]!); // a kept staging buffer must be destroyed too
    const pending: Promise<unknown>[] = [...ptrs, ...ptrs].map((p) => ctx.readback(p));
    pending.push(ctx.readbackInto(ptrs[1]!, new Uint8Array(5 * 2 ** 20)));
    const inFlight = ctx.transferStats(id).pending;
    doomed.destroy();
    const settled = await Promise.allSettled(pending);
    const codes = settled.map((s) =>
      s.status === "rejected" ? ((s.reason as { code?: string }).code ?? String(s.reason)) : "resolved",
    );
    const stats = ctx.transferStats(id);
    const stillMapped = made.filter((b) => b.mapState !== "unmapped").map((b) => b.label);
    const after = w.testkit.codeOf(() => ctx.upload(ptrs[0]!, new Uint8Array(4)));
    for (const p of ptrs) ctx.freeWebGPU(p);
    ctx.unregisterWebGPUDevice(id);
    return { inFlight, codes, stats, stillMapped, after };
  });
  expect(r.inFlight).toBeGreaterThan(0);
  expect(r.codes).toEqual(Array(7).fill("DEVICE_LOST"));
  expect(r.stats.pending).toBe(0);
  expect(r.stats.read.inUse + r.stats.write.inUse).toBe(0);
  expect(r.stats.read.kept + r.stats.write.kept).toBe(0);
  expect(r.stillMapped).toEqual([]);
  expect(r.after).toBe("DEVICE_LOST");
});

test("Python's asarray(device='webgpu:0'), from_dlpack(device='cpu') and to_cpu_async move bytes through the context's transfers", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    const before = ctx.transferStats(0);
    const py = w.pyodide;
    const result = (await py.runPythonAsync(`
import array, webdlpack
n = 6 * 1024 * 1024 // 4      # 6 MiB of float32: a readback in several pieces
src = array.array("f", [float(i % 1000) for i in range(n)])
g = webdlpack.asarray(src, device="webgpu:0")
c = webdlpack.from_dlpack(g, device="cpu")
a = await webdlpack.to_cpu_async(g)
ok = c.tolist() == src.tolist() and a.tolist() == src.tolist()
for t in (g, c, a):
    t.dispose()
ok
`)) as boolean;
    const after = ctx.transferStats(0);
    return { result, before, after };
  });
  expect(r.result).toBe(true);
  expect(r.after.read.created + r.after.read.reused).toBeGreaterThan(r.before.read.created + r.before.read.reused);
  expect(r.after.lastUploadPath).not.toBeNull();
  expect(r.after.pending).toBe(0);
  expect(r.after.read.inUse).toBe(0);
});

test("the C library's memory ⇄ a GPU pointer C allocated: lib.upload / lib.readback, through the context's transfers", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    type Lib = Webdlpack & { loadWebDLPackC: typeof import("../../js/src/index.js").loadWebDLPackC };
    const w = window as unknown as W & {
      webdlpack: Lib;
      pyodide: { _module: { HEAPU8: Uint8Array } };
    };
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    const lib = await w.webdlpack.loadWebDLPackC(w.pyodide as never, { url: "/wasm/build/libwebdlpack.so" });
    const m = w.pyodide._module;
    const heap = w.webdlpack.emscriptenHost(m as never); // Pyodide's malloc/free, whichever way it exposes them
    const n = 5 * 2 ** 20 + 3; // several pieces, an odd length
    const ptr = lib.check(lib.exports.wdl_webgpu_alloc(0, BigInt(n + 8), 0), "wdl_webgpu_alloc", true) >>> 0;
    const src = heap.malloc(n);
    const dst = heap.malloc(n);
    try {
      for (let i = 0; i < n; i++) m.HEAPU8[src + i] = (i * 11 + 5) & 0xff;
      const before = ctx.transferStats(0);
      lib.upload(ptr, src, n, 4);
      await lib.readback(ptr, dst, n, 4);
      let same = true;
      for (let i = 0; i < n; i++)
        if (m.HEAPU8[dst + i] !== m.HEAPU8[src + i]) {
          same = false;
          break;
        }
      const after = ctx.transferStats(0);
      const outside = await lib.readback(ptr, dst, n, 1 << 30).then(
        () => "no error",
        (e: { code?: string }) => e.code,
      );
      return {
        same,
        reads: after.read.created + after.read.reused - before.read.created - before.read.reused,
        outside,
        owner: ctx.gpuPointerInfo(ptr).owner,
      };
    } finally {
      lib.exports.wdl_webgpu_free(ptr);
      heap.free(src);
      heap.free(dst);
    }
  });
  expect(r.same).toBe(true);
  expect(r.reads).toBeGreaterThan(1);
  expect(r.outside).toBe("OUT_OF_BOUNDS");
  expect(r.owner).toBe("c");
});

test("the GPU transfer benchmark page times every variant cold and warm (1 KiB only) and checks the bytes it moves", async ({
  page,
}) => {
  await page.goto("/bench/gpu/transfers.html?sizes=1024&coldReps=1");
  await page.waitForFunction(() => (window as unknown as { __result?: unknown }).__result !== undefined, null, {
    timeout: 60_000,
  });
  const r = await page.evaluate(
    () =>
      (
        window as unknown as {
          __result: { error?: string; rows: { name: string; phase: string; samples: number[] }[] };
        }
      ).__result,
  );
  expect(r.error).toBeUndefined();
  const names = r.rows.map((row) => row.name);
  for (const name of [
    "writeBuffer + wait (raw)",
    "staging, a new mapped buffer per call + wait (raw)",
    "staging, one kept buffer mapped again after use + wait (raw)",
    "readback into a reused array (raw)",
    "readback into a fresh array (raw)",
    "empty submit + onSubmittedWorkDone (raw)",
    "ctx.upload + wait",
    "ctx.readbackInto reused TypedArray",
    "ctx.readbackInto wasm memory",
    "ctx.readback (a fresh array)",
  ]) {
    expect(names, name).toContain(name);
  }
  for (const row of r.rows) expect(row.samples.length, row.name).toBeGreaterThan(0);
  for (const phase of ["cold", "warm"])
    expect(r.rows.filter((row) => row.phase === phase).length, phase).toBe(new Set(names).size);
});
