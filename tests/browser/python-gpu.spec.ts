/**
 * WebGPU tensors from Python (Pyodide) in the real browser: allocation and
 * upload through the shared context, JS compute shaders on the same
 * GPUBuffer, explicit cross-device copies, readback synchronously through
 * JSPI (inside runPythonAsync) and asynchronously (to_cpu_async), pointers
 * freed exactly once.
 */
import { test, expect, type PageTestkit } from "./fixtures.js";
import type { Page } from "@playwright/test";

type Webdlpack = typeof import("../../js/src/index.js");
type Context = ReturnType<Webdlpack["getContext"]>;
type PyProxy = { toJs(opts?: object): unknown; destroy(): void };
type W = {
  pyodide: {
    runPython(c: string): unknown;
    runPythonAsync(c: string): Promise<unknown>;
    globals: { get(n: string): unknown; set(n: string, v: unknown): void };
    _module: { HEAPU8: Uint8Array };
  };
  webdlpack: Webdlpack;
  testkit: PageTestkit;
  gpuTest: {
    /**
     * What every test here starts from: the window, Pyodide, the context, device 0
     * and the live pointer count now (`base`, to check that a test leaks nothing).
     */
    env(): { w: W; py: W["pyodide"]; ctx: Context; device: GPUDevice; base: number };
    /** Run `x[i] = expr(i, x[i])` (WGSL, u32 or f32 element) over `count` elements at element offset `first`. */
    dispatch(buffer: GPUBuffer, count: number, first: number, wgslType: "f32" | "u32", expr: string): void;
    /** Bytes of a GPUBuffer, read with mapAsync (after all submitted work). */
    read(buffer: GPUBuffer, offset: number, size: number): Promise<Uint8Array>;
  };
};

/** Set up the page once: device 0, the Python bridge and the `gpuTest` helpers. */
async function ready(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const w = window as unknown as W;
    await w.webdlpack.getContext().setup();
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    if (w.gpuTest) return;
    const device = w.webdlpack.getContext().getWebGPUDevice();
    w.gpuTest = {
      env() {
        const ctx = w.webdlpack.getContext();
        return { w, py: w.pyodide, ctx, device: ctx.getWebGPUDevice(), base: ctx.stats().livePointers };
      },
      dispatch(buffer, count, first, wgslType, expr) {
        const code = `
@group(0) @binding(0) var<storage, read_write> x: array<${wgslType}>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= ${count}u) { return; }
  let v = x[i + ${first}u];
  x[i + ${first}u] = ${expr};
}`;
        w.testkit.dispatch(device, code, { buffer }, Math.ceil(count / 64));
      },
      read: (buffer, offset, size) => w.testkit.readBuffer(device, buffer, offset, size),
    };
  });
}

/** {@link ready}, then run `body` in the page (it runs there: it can use only page globals). */
async function inGpuPage<R>(page: Page, body: () => Promise<R>): Promise<R> {
  await ready(page);
  return page.evaluate(body);
}

test("Python uploads array.array → JS shader doubles it in place on the same GPUBuffer → Python reads back sync (JSPI) and async", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, base } = (window as unknown as W).gpuTest.env();
    const head = (
      py.runPython(`
import webdlpack, array
from webdlpack.api import debug as _debug
gpu0 = _debug.gpu_stats()
src1 = array.array("f", [float(i) for i in range(100)])
g1 = webdlpack.asarray(src1, device="webgpu:0")
src1[0] = -1.0   # the upload took the bytes: later host writes do not reach the GPU
jt1 = webdlpack.to_js(g1)
[tuple(int(v) for v in g1.__dlpack_device__()), g1.data_ptr, g1.byte_offset, g1.flags.is_copied, str(g1.device)]
`) as PyProxy
    ).toJs() as [number[], number, number, boolean, string];
    const jt = py.globals.get("jt1") as import("../../js/src/index.js").Tensor;
    const ptr = head[1];
    const info = ctx.gpuPointerInfo(ptr);
    const sameBuffer = jt.gpuBuffer === ctx.gpuPointerToBuffer(ptr);
    const jsSeesPointer = jt.data === ptr && jt.storage === "webgpu";
    w.gpuTest.dispatch(jt.gpuBuffer, 100, 0, "f32", "v * 2.0 + 1.0");
    // Sync: from_dlpack(device="cpu") and __dlpack__(dl_device=(1, 0)) inside runPythonAsync block through JSPI.
    const sync = (
      (await py.runPythonAsync(`
c1 = webdlpack.from_dlpack(g1, device="cpu")
cap = g1.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=True)
c2 = webdlpack.from_capsule(cap)
c3 = g1.to_device("cpu")
[c1.tolist(), c1.flags.is_copied, str(c1.device), c2.tolist() == c1.tolist(), c2.flags.is_copied, c3.tolist() == c1.tolist()]
`)) as PyProxy
    ).toJs() as [number[], boolean, string, boolean, boolean, boolean];
    // Async: await to_cpu_async.
    const asyncVals = (
      (await py.runPythonAsync(`
a1 = await webdlpack.to_cpu_async(g1)
a1.tolist()
`)) as PyProxy
    ).toJs() as number[];
    // Releases: Python drops g1 first; the JS export still holds the pointer.
    py.runPython("g1.dispose(); del g1; c1.dispose(); c2.dispose(); c3.dispose(); a1.dispose(); del cap");
    const liveWhileJsHolds = ctx.stats().livePointers - base;
    jt.dispose();
    const liveAfter = ctx.stats().livePointers - base;
    const staleCode = w.testkit.codeOf(() => ctx.gpuPointerInfo(ptr));
    const stats = (
      py.runPython(`
s = _debug.gpu_stats()
[s["allocated"] - gpu0["allocated"], s["freed"] - gpu0["freed"], s["free_errors"]]
`) as PyProxy
    ).toJs() as number[];
    py.runPython("del jt1");
    return {
      head,
      owner: info.owner,
      requested: info.requestedSize,
      sameBuffer,
      jsSeesPointer,
      sync,
      asyncVals,
      liveWhileJsHolds,
      liveAfter,
      staleCode,
      stats,
    };
  });
  const expected = Array.from({ length: 100 }, (_, i) => i * 2 + 1);
  expect(r.head[0]).toEqual([15, 0]);
  expect(r.head[1]).toBeGreaterThan(0);
  expect(r.head.slice(2)).toEqual([0, true, "webgpu:0"]);
  expect(r.owner).toBe("python");
  expect(r.requested).toBeGreaterThanOrEqual(400);
  expect(r.sameBuffer).toBe(true);
  expect(r.jsSeesPointer).toBe(true);
  expect(r.sync[0]).toEqual(expected);
  expect(r.sync.slice(1)).toEqual([true, "cpu", true, true, true]);
  expect(r.asyncVals).toEqual(expected);
  expect(r.liveWhileJsHolds).toBe(1);
  expect(r.liveAfter).toBe(0);
  expect(r.staleCode).toBe("STALE_POINTER");
  expect(r.stats).toEqual([1, 1, 0]);
});

test("sync readback outside runPythonAsync is a clear typed error naming the fix, and starts no GPU work", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { py } = (window as unknown as W).gpuTest.env();
    let maps = 0;
    const mapAsync = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
      maps++;
      return mapAsync.apply(this, args);
    };
    try {
      const out = (
        py.runPython(`
import webdlpack
g2 = webdlpack.zeros((3,), "int32", device="webgpu:0")
msgs = []
for attempt in (lambda: webdlpack.from_dlpack(g2, device="cpu"),
                lambda: g2.__dlpack__(max_version=(1, 1), dl_device=(1, 0)),
                lambda: g2.to_device("cpu")):
    try:
        attempt()
        msgs.append("no error")
    except BufferError as e:
        msgs.append([type(e).__name__, e.code.name, e.field, e.expected, isinstance(e, ValueError)])
g2.dispose()
msgs
`) as PyProxy
      ).toJs() as unknown[][];
      return { out, maps };
    } finally {
      GPUBuffer.prototype.mapAsync = mapAsync;
    }
  });
  expect(r.out).toHaveLength(3);
  for (const m of r.out) {
    expect(m[0]).toBe("WebDLPackDeviceError");
    expect(m[1]).toBe("UNSUPPORTED");
    expect(m[2]).toBe("device");
    expect(String(m[3])).toContain("runPythonAsync");
    expect(String(m[3])).toContain("await webdlpack.to_cpu_async(x)");
    expect(m[4]).toBe(true);
  }
  expect(r.maps).toBe(0);
});

test("ordering: JS submits a shader that writes a tensor, Python reads it at once and sees the new values", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py } = (window as unknown as W).gpuTest.env();
    py.runPython(`
import webdlpack
z3 = webdlpack.zeros((256,), "uint32", device="webgpu:0")
jz3 = webdlpack.to_js(z3)
`);
    const zeros = (
      (await py.runPythonAsync("webdlpack.from_dlpack(z3, device='cpu').tolist()")) as PyProxy
    ).toJs() as number[];
    const jz = py.globals.get("jz3") as import("../../js/src/index.js").Tensor;
    const rounds: boolean[] = [];
    for (let k = 1; k <= 3; k++) {
      // No await between the submit and Python's read: only queue order makes this right.
      w.gpuTest.dispatch(jz.gpuBuffer, 256, 0, "u32", `i * ${k}u + 7u`);
      const sync = (
        (await py.runPythonAsync("webdlpack.from_dlpack(z3, device='cpu').tolist()")) as PyProxy
      ).toJs() as number[];
      w.gpuTest.dispatch(jz.gpuBuffer, 256, 0, "u32", "v + 1u");
      const asyncVals = (
        (await py.runPythonAsync("(await webdlpack.to_cpu_async(z3)).tolist()")) as PyProxy
      ).toJs() as number[];
      rounds.push(sync.every((v, i) => v === i * k + 7) && asyncVals.every((v, i) => v === i * k + 8));
    }
    jz.dispose();
    py.runPython("z3.dispose(); del z3, jz3");
    return { zeros: zeros.every((v) => v === 0) && zeros.length === 256, rounds };
  });
  expect(r.zeros).toBe(true);
  expect(r.rounds).toEqual([true, true, true]);
});

test("a JS-made GPU tensor → Python (same pointer as data_ptr, byte_offset kept) → freed exactly once when the last owner lets go", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, device, base } = (window as unknown as W).gpuTest.env();
    const ptr = await ctx.allocWebGPUChecked(64);
    device.queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr),
      0,
      new Float32Array(Array.from({ length: 16 }, (_, i) => i + 0.5)),
    );
    let released = 0;
    const t = w.webdlpack.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [2, 3],
      byteOffset: 16,
      onRelease: () => {
        released++;
        ctx.freeWebGPU(ptr);
      },
    });
    py.globals.set("jt4", t);
    const seen = (
      py.runPython(`
import webdlpack
p4 = webdlpack.from_js(jt4)
[p4.data_ptr, p4.byte_offset, tuple(int(v) for v in p4.__dlpack_device__()), p4.shape, p4.flags.is_copied]
`) as PyProxy
    ).toJs() as [number, number, number[], number[], boolean];
    t.dispose(); // Python's import alone holds the pointer now
    const afterJsDispose = { released, live: ctx.stats().livePointers - base };
    const values = (
      (await py.runPythonAsync("webdlpack.from_dlpack(p4, device='cpu').tolist()")) as PyProxy
    ).toJs() as number[][];
    // Python → JS again: the same GPUBuffer object.
    py.runPython("jp4 = webdlpack.to_js(p4)");
    const jp = py.globals.get("jp4") as import("../../js/src/index.js").Tensor;
    const sameBuffer = jp.gpuBuffer === ctx.gpuPointerToBuffer(ptr) && jp.byteOffset === 16;
    py.runPython("p4.dispose(); del p4");
    const afterPython = released;
    jp.dispose();
    py.runPython("del jp4, jt4");
    const staleCode = w.testkit.codeOf(() => ctx.gpuPointerInfo(ptr));
    return {
      ptr,
      seen,
      afterJsDispose,
      values,
      sameBuffer,
      afterPython,
      released,
      live: ctx.stats().livePointers - base,
      staleCode,
    };
  });
  expect(r.seen[0]).toBe(r.ptr);
  expect(r.seen.slice(1)).toEqual([16, [15, 0], [2, 3], false]);
  expect(r.afterJsDispose).toEqual({ released: 0, live: 1 });
  expect(r.values).toEqual([
    [4.5, 5.5, 6.5],
    [7.5, 8.5, 9.5],
  ]);
  expect(r.sameBuffer).toBe(true);
  expect(r.afterPython).toBe(0); // the JS export of Python's tensor still holds it
  expect(r.released).toBe(1);
  expect(r.live).toBe(0);
  expect(r.staleCode).toBe("STALE_POINTER");
});

test("copy=False across devices is a BufferError both ways; copy=None copies (array API); nothing leaks", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { py, ctx, base } = (window as unknown as W).gpuTest.env();
    const out = (
      (await py.runPythonAsync(`
import webdlpack, array
cpu5 = webdlpack.from_buffer(array.array("h", [1, -2, 3]))
g5 = webdlpack.from_dlpack(cpu5, device="webgpu:0")          # copy=None: allowed to copy
res = []
for attempt in (lambda: webdlpack.from_dlpack(cpu5, device="webgpu:0", copy=False),
                lambda: cpu5.__dlpack__(max_version=(1, 1), dl_device=(15, 0), copy=False),
                lambda: webdlpack.asarray(array.array("h", [1]), device="webgpu:0", copy=False),
                lambda: webdlpack.from_dlpack(g5, device="cpu", copy=False),
                lambda: g5.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=False)):
    try:
        attempt()
        res.append("no error")
    except BufferError as e:
        res.append(e.code.name)
back = webdlpack.from_dlpack(g5, device="cpu")                # copy=None: allowed to copy
gcopy = g5.copy()                                             # same device: a GPU copy
gcopy_back = webdlpack.from_dlpack(gcopy, device="cpu", copy=True)
res += [g5.flags.is_copied, back.tolist(), back.flags.is_copied, gcopy.data_ptr != g5.data_ptr, gcopy_back.tolist()]
for x in (cpu5, g5, back, gcopy, gcopy_back):
    x.dispose()
del x, g5, gcopy
res
`)) as PyProxy
    ).toJs() as unknown[];
    return { out, live: ctx.stats().livePointers - base };
  });
  expect(r.out.slice(0, 5)).toEqual([
    "COPY_REQUIRED",
    "COPY_REQUIRED",
    "COPY_REQUIRED",
    "COPY_REQUIRED",
    "COPY_REQUIRED",
  ]);
  expect(r.out.slice(5)).toEqual([true, [1, -2, 3], true, true, [1, -2, 3]]);
  expect(r.live).toBe(0);
});

test("byte_offset and strides (negative too) are honoured on upload and on readback, also with copy=True and unaligned offsets; strided GPU copies are refused saying what to do", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, device, base } = (window as unknown as W).gpuTest.env();
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    /** Dispose the JS tensors, then free their GPU pointer and heap block. */
    const release = (tensors: { dispose(): void }[], gpuPtr: number, heapAddr: number): void => {
      for (const t of tensors) t.dispose();
      ctx.freeWebGPU(gpuPtr);
      bridge.host.free(heapAddr);
    };
    // Upload: a heap tensor with byte_offset 8, and a strided one (every other element).
    const addr = bridge.host.malloc(64); // Pyodide's malloc, whichever way it exposes it
    new Float32Array(py._module.HEAPU8.buffer, addr, 16).set(Array.from({ length: 16 }, (_, i) => 10 + i));
    const shifted = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr,
      byteOffset: 8,
      dtype: "float32",
      shape: [4],
    });
    const strided = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr,
      dtype: "float32",
      shape: [2, 2],
      strides: [8, 2],
    });
    py.globals.set("shifted6", shifted);
    py.globals.set("strided6", strided);
    const up = (
      py.runPython(`
import webdlpack
s6 = webdlpack.from_js(shifted6)
t6 = webdlpack.from_js(strided6)
gs6 = webdlpack.asarray(s6, device="webgpu:0")
gt6 = webdlpack.asarray(t6, device="webgpu:0")
[s6.byte_offset, t6.strides, gs6.data_ptr, gt6.data_ptr, gt6.strides is None]
`) as PyProxy
    ).toJs() as [number, number[], number, number, boolean];
    const readF32 = async (ptr: number, n: number) =>
      Array.from(new Float32Array((await w.gpuTest.read(ctx.gpuPointerToBuffer(ptr), 0, n * 4)).buffer));
    const uploadedShifted = await readF32(up[2], 4);
    const uploadedStrided = await readF32(up[3], 4);
    // Readback: JS GPU tensors with byte offsets (4-aligned and not) and strides.
    const ptr = await ctx.allocWebGPUChecked(64);
    device.queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr),
      0,
      new Int16Array(Array.from({ length: 32 }, (_, i) => 100 + i)),
    );
    const views = [
      w.webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "int16", shape: [3], byteOffset: 2 }),
      w.webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "int16", shape: [5], byteOffset: 6 }),
      w.webdlpack.Tensor.webgpu({
        pointer: ptr,
        deviceId: 0,
        dtype: "int16",
        shape: [2, 3],
        strides: [10, 3],
        byteOffset: 4,
      }),
      w.webdlpack.Tensor.webgpu({
        pointer: ptr,
        deviceId: 0,
        dtype: "int16",
        shape: [4],
        strides: [-2],
        byteOffset: 14,
      }),
    ];
    py.globals.set("views6", views);
    const back = (
      (await py.runPythonAsync(`
out = []
for v in views6:
    p = webdlpack.from_js(v)
    sync = webdlpack.from_dlpack(p, device="cpu")
    asy = await webdlpack.to_cpu_async(p)
    out.append([sync.tolist(), asy.tolist(), sync.strides is None])
    for x in (p, sync, asy):
        x.dispose()
del p, sync, asy, x
for x in (s6, t6, gs6, gt6):
    x.dispose()
del x, s6, t6, gs6, gt6, shifted6, strided6, views6
out
`)) as PyProxy
    ).toJs() as unknown[][];
    release([...views, shifted, strided], ptr, addr);
    // More layouts: negative-stride / offset CPU → webgpu uploads, copy=True readbacks of offset and
    // strided GPU tensors; a strided GPU copy is refused saying what to do.
    const addr2 = bridge.host.malloc(96);
    new Int32Array(py._module.HEAPU8.buffer, addr2, 24).set(Array.from({ length: 24 }, (_, i) => i));
    // CPU sources: reversed rows and columns from byte_offset 92 (the last element), and a transposed view at byte_offset 4.
    const reversed = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr2,
      byteOffset: 92,
      dtype: "int32",
      shape: [4, 6],
      strides: [-6, -1],
    });
    const transposed = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr2,
      byteOffset: 4,
      dtype: "int32",
      shape: [3, 2],
      strides: [1, 6],
    });
    py.globals.set("rev12", reversed);
    py.globals.set("tr12", transposed);
    const ptr2 = await ctx.allocWebGPUChecked(128);
    device.queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr2),
      0,
      Int32Array.from({ length: 32 }, (_, i) => 100 + i),
    );
    const gpuViews = [
      w.webdlpack.Tensor.webgpu({ pointer: ptr2, deviceId: 0, dtype: "int32", shape: [5], byteOffset: 12 }),
      w.webdlpack.Tensor.webgpu({
        pointer: ptr2,
        deviceId: 0,
        dtype: "int32",
        shape: [2, 3],
        strides: [1, -4],
        byteOffset: 40,
      }),
    ];
    py.globals.set("gv12", gpuViews);
    const more = (
      (await py.runPythonAsync(`
res = []
for src in (rev12, tr12):
    c = webdlpack.from_js(src)
    g = webdlpack.asarray(c, device="webgpu:0")
    res.append([c.strides, c.byte_offset, g.strides is None, g.byte_offset, g.flags.is_copied, c.tolist(),
                webdlpack.from_dlpack(g, device="cpu", copy=True).tolist()])
    c.dispose(); g.dispose()
for v in gv12:
    p = webdlpack.from_js(v)
    a = webdlpack.from_dlpack(p, device="cpu", copy=True)
    b = webdlpack.from_capsule(p.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=True))
    res.append([a.tolist(), b.tolist(), a.flags.is_copied, b.flags.is_copied, a.strides is None, a.byte_offset])
    a.dispose(); b.dispose()
    try:
        cp = p.copy()
        res.append(webdlpack.from_dlpack(cp, device="cpu").tolist())
        cp.dispose()
        del cp
    except BufferError as e:
        res.append([e.code.name, e.field, e.expected, "read it back" in str(e)])
    p.dispose()
del c, g, p, a, b, src, v, rev12, tr12, gv12
res
`)) as PyProxy
    ).toJs() as unknown[][];
    release([...gpuViews, reversed, transposed], ptr2, addr2);
    return { up, uploadedShifted, uploadedStrided, back, more, live: ctx.stats().livePointers - base };
  });
  expect(r.up[0]).toBe(8);
  expect(r.up[1]).toEqual([8, 2]);
  expect(r.up[4]).toBe(true);
  expect(r.uploadedShifted).toEqual([12, 13, 14, 15]);
  expect(r.uploadedStrided).toEqual([10, 12, 18, 20]);
  expect(r.back[0]).toEqual([[101, 102, 103], [101, 102, 103], true]);
  expect(r.back[1]).toEqual([[103, 104, 105, 106, 107], [103, 104, 105, 106, 107], true]);
  expect(r.back[2]).toEqual([
    [
      [102, 105, 108],
      [112, 115, 118],
    ],
    [
      [102, 105, 108],
      [112, 115, 118],
    ],
    true,
  ]);
  expect(r.back[3]).toEqual([[107, 105, 103, 101], [107, 105, 103, 101], true]);
  const rev = [
    [23, 22, 21, 20, 19, 18],
    [17, 16, 15, 14, 13, 12],
    [11, 10, 9, 8, 7, 6],
    [5, 4, 3, 2, 1, 0],
  ];
  expect(r.more[0]).toEqual([[-6, -1], 92, true, 0, true, rev, rev]);
  const tr = [
    [1, 7],
    [2, 8],
    [3, 9],
  ];
  expect(r.more[1]).toEqual([[1, 6], 4, true, 0, true, tr, tr]);
  expect(r.more[2]).toEqual([[103, 104, 105, 106, 107], [103, 104, 105, 106, 107], true, true, true, 0]);
  expect(r.more[3]).toEqual([103, 104, 105, 106, 107]); // contiguous at an offset: copied on the GPU
  const strided = [
    [110, 106, 102],
    [111, 107, 103],
  ];
  expect(r.more[4]).toEqual([strided, strided, true, true, true, 0]);
  expect(r.more[5]).toEqual(["UNSUPPORTED", "strides", "None (C-contiguous)", true]);
  expect(r.live).toBe(0);
});

test("GPU errors from Python are typed: unknown device, stale pointer", async ({ shared }) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx } = (window as unknown as W).gpuTest.env();
    const ptr = await ctx.allocWebGPUChecked(16);
    const t = w.webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4] });
    py.globals.set("jt7", t);
    py.runPython("import webdlpack; p7 = webdlpack.from_js(jt7)");
    ctx.freeWebGPU(ptr); // freed behind Python's back
    const out = (
      (await py.runPythonAsync(`
res = []
for attempt in (lambda: webdlpack.empty((2,), device="webgpu:7"),
                lambda: webdlpack.from_dlpack(p7, device="cpu")):
    try:
        attempt()
        res.append("no error")
    except ValueError as e:
        res.append([type(e).__name__, e.code.name, e.field])
try:
    await webdlpack.to_cpu_async(p7)
    res.append("no error")
except BufferError as e:
    res.append([type(e).__name__, e.code.name, e.field])
p7.dispose()
del p7, jt7
res
`)) as PyProxy
    ).toJs() as unknown[][];
    t.dispose();
    return out;
  });
  expect(r[0]).toEqual(["WebDLPackDeviceError", "UNKNOWN_DEVICE", expect.any(String)]);
  expect(r[1]?.[1]).toBe("STALE_POINTER");
  expect(r[2]?.[1]).toBe("STALE_POINTER");
});

test("stream: None and -1 are accepted for WebGPU tensors (one queue, nothing waits), other values are typed errors", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, base } = (window as unknown as W).gpuTest.env();
    py.runPython(`
import webdlpack
g11 = webdlpack.zeros((64,), "uint32", device="webgpu:0")
jg11 = webdlpack.to_js(g11)
`);
    const jg = py.globals.get("jg11") as import("../../js/src/index.js").Tensor;
    // JS writes through a shader; the consumer asks with stream=-1 / None and still sees the writes (queue order).
    w.gpuTest.dispatch(jg.gpuBuffer, 64, 0, "u32", "i * 3u + 1u");
    const out = (
      (await py.runPythonAsync(`
res = []
for stream in (None, -1):
    p = webdlpack.from_capsule(g11.__dlpack__(stream=stream, max_version=(1, 1)))
    res.append([p.data_ptr == g11.data_ptr, tuple(int(v) for v in p.__dlpack_device__())])
    p.dispose()
back = webdlpack.from_capsule(g11.__dlpack__(stream=-1, max_version=(1, 1), dl_device=(1, 0), copy=True))
res.append(back.tolist()[:4])
res.append(g11.to_device("cpu", stream=-1).tolist()[:4])
for attempt in (lambda: g11.__dlpack__(stream=0, max_version=(1, 1)),
                lambda: g11.__dlpack__(stream=1, max_version=(1, 1)),
                lambda: g11.__dlpack__(stream=True, max_version=(1, 1)),
                lambda: g11.to_device("webgpu:0", stream=2),
                lambda: g11.__dlpack__(stream=5, max_version=(1, 1), dl_device=(1, 0), copy=True)):
    try:
        attempt()
        res.append("no error")
    except ValueError as e:
        res.append([type(e).__name__, e.code.name, e.field, e.expected])
back.dispose(); g11.dispose()
del g11, back, p
res
`)) as PyProxy
    ).toJs() as unknown[];
    jg.dispose();
    py.runPython("del jg11");
    return { out, live: ctx.stats().livePointers - base };
  });
  expect(r.out.slice(0, 2)).toEqual([
    [true, [15, 0]],
    [true, [15, 0]],
  ]);
  expect(r.out[2]).toEqual([1, 4, 7, 10]);
  expect(r.out[3]).toEqual([1, 4, 7, 10]);
  const gpuErr = [
    "WebDLPackValueError",
    "INVALID_ARGUMENT",
    "stream",
    "None (the device queue) or -1 (no synchronization)",
  ];
  expect(r.out.slice(4, 8)).toEqual([gpuErr, gpuErr, gpuErr, gpuErr]);
  expect(r.out[8]).toEqual(["WebDLPackValueError", "INVALID_ARGUMENT", "stream", "None or -1 (no synchronization)"]); // the consumer's device: cpu
  expect(r.live).toBe(0);
});

test("webdlpack.empty(device='webgpu:0') allocates a GPU tensor: (15, 0), a live pointer of the right size, owner python; freed on dispose", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, ctx } = (window as unknown as W).gpuTest.env();
    const out = (
      w.pyodide.runPython(`
import webdlpack
e13 = webdlpack.empty((3, 5), "int16", device="webgpu:0")
[e13.__dlpack_device__(), e13.shape, str(e13.dtype), e13.data_ptr, e13.byte_offset, e13.nbytes, e13.strides]
`) as { toJs(): [[number, number], number[], string, number, number, number, number[] | null] }
    ).toJs();
    const ptr = out[3];
    const info = ctx.gpuPointerInfo(ptr);
    const owner = ctx.ledger.entries().find((e) => e.pointer === ptr)?.owner;
    w.pyodide.runPython("e13.dispose(); del e13");
    const after = w.testkit.codeOf(() => ctx.gpuPointerInfo(ptr));
    return {
      device: out[0],
      shape: out[1],
      dtype: out[2],
      byteOffset: out[4],
      nbytes: out[5],
      strides: out[6],
      size: info.size,
      deviceId: info.deviceId,
      owner,
      after,
    };
  });
  expect(r.device).toEqual([15, 0]);
  expect(r.shape).toEqual([3, 5]);
  expect(r.dtype).toBe("int16");
  expect(r.byteOffset).toBe(0);
  expect(r.nbytes).toBe(30);
  expect(r.strides ?? null).toBeNull(); // None: C-contiguous
  expect(r.size).toBeGreaterThanOrEqual(30);
  expect(r.deviceId).toBe(0);
  expect(r.owner).toBe("python");
  expect(r.after).toBe("STALE_POINTER");
});

test("a packed sub-byte webdlpack.empty on webgpu:0 allocates its packed size (12 fp4 elements: 6 bytes), not a byte per element", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, ctx } = (window as unknown as W).gpuTest.env();
    const out = (
      w.pyodide.runPython(`
import webdlpack
e4 = webdlpack.empty((12,), "float4_e2m1fn", device="webgpu:0")
[e4.data_ptr, e4.nbytes, e4._owner.nbytes]
`) as { toJs(): [number, number, number] }
    ).toJs();
    const info = ctx.gpuPointerInfo(out[0]);
    w.pyodide.runPython("e4.dispose(); del e4");
    return { nbytes: out[1], bytes: out[2], size: info.size };
  });
  expect(r.nbytes).toBe(6);
  expect(r.bytes).toBe(6); // the allocation Python asked for (the pointer's buffer may be a larger bucket)
  expect(r.size).toBeGreaterThanOrEqual(6);
});
