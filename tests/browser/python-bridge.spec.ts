/**
 * Python in Pyodide ↔ JS through the bridge (loadWebDLPack), in the real
 * browser: zero-copy both ways, deleters exactly once, typed errors.
 */
import { test, expect } from "./fixtures.js";

type W = {
  pyodide: {
    runPython(c: string): unknown;
    runPythonAsync(c: string): Promise<unknown>;
    globals: { get(n: string): unknown; set(n: string, v: unknown): void };
    _module: { HEAPU8: Uint8Array };
  };
  webdlpack: typeof import("../../js/src/index.js");
};

test("Python → JS: to_js gives a view on the same heap bytes; JS writes, Python sees; dispose runs the deleter once", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    py.runPython(`
import webdlpack, array
from webdlpack.api import debug as _debug
src = array.array("f", [0.5 * i for i in range(12)])
t = webdlpack.from_buffer(src, shape=(3, 4))
before = _debug.export_stats()["live"]
jt = webdlpack.to_js(t)
`);
    const jt = py.globals.get("jt") as import("../../js/src/index.js").Tensor;
    const view = jt.view as Float32Array;
    const sameHeap = view.buffer === py._module.HEAPU8.buffer;
    const dataPtr = Number(py.runPython("t.data_ptr + t.byte_offset"));
    const values = Array.from(view);
    view[5] = -99;
    const pySees = Number(py.runPython("src[5]"));
    const liveWhileHeld = Number(py.runPython("_debug.export_stats()['live'] - before"));
    jt.dispose();
    const liveAfter = Number(py.runPython("_debug.export_stats()['live'] - before"));
    const unknown = Number(py.runPython("_debug.export_stats()['unknown_deletes']"));
    return {
      sameHeap,
      offsetOk: view.byteOffset === dataPtr,
      values,
      pySees,
      liveWhileHeld,
      liveAfter,
      unknown,
      pythonVersion: bridge.pythonVersion,
    };
  });
  expect(r.sameHeap).toBe(true);
  expect(r.offsetOk).toBe(true);
  expect(r.values).toEqual(Array.from({ length: 12 }, (_, i) => 0.5 * i));
  expect(r.pySees).toBe(-99);
  expect(r.liveWhileHeld).toBe(1);
  expect(r.liveAfter).toBe(0);
  expect(r.unknown).toBe(0);
  expect(r.pythonVersion).toBe("0.1.0");
});

test("JS → Python: from_js of a heap tensor is zero-copy; a TypedArray outside the heap is copied once with IS_COPIED; copy=False refuses", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    // A JS-made tensor that lives in the heap: Python exports an empty tensor, JS fills it.
    const heapTensor = bridge.fromPython(py.runPython("import webdlpack; webdlpack.zeros((4,), 'int32')"));
    (heapTensor.view as Int32Array).set([7, 8, 9, 10]);
    py.globals.set("ht", heapTensor);
    const zeroCopy = py.runPython(`
pt = webdlpack.from_js(ht)
(pt.tolist(), pt.flags.is_copied, pt.data_ptr + pt.byte_offset)
`) as { toJs(): [number[], boolean, number] };
    const [vals, copied, ptr] = zeroCopy.toJs();
    const sameAddress = ptr === (heapTensor.view as Int32Array).byteOffset;
    // Outside the heap: a plain Float64Array.
    py.globals.set("outside", new Float64Array([1.25, 2.5]));
    const copiedRes = (
      py.runPython(`
c = webdlpack.from_js(outside)
(c.tolist(), c.flags.is_copied, str(c.dtype))
`) as { toJs(): [number[], boolean, string] }
    ).toJs();
    let refusal = "";
    try {
      py.runPython(`
try:
    webdlpack.from_js(outside, copy=False)
except BufferError as e:
    refusal = f"{type(e).__name__}: {e}"
`);
      refusal = String(py.globals.get("refusal"));
    } catch (e) {
      refusal = `unexpected: ${String(e)}`;
    }
    py.runPython("pt.dispose(); c.dispose()");
    heapTensor.dispose();
    return { vals, copied, sameAddress, copiedRes, refusal };
  });
  expect(r.vals).toEqual([7, 8, 9, 10]);
  expect(r.copied).toBe(false);
  expect(r.sameAddress).toBe(true);
  expect(r.copiedRes).toEqual([[1.25, 2.5], true, "float64"]);
  expect(r.refusal).toMatch(/BufferError: \[COPY_REQUIRED\]/);
  expect(r.refusal).toMatch(/a JS ArrayBuffer, not in this host's memory; exporting needs a copy/); // says why
});

test("tensor.toPython(): a JS framework hands a tensor to Python without the bridge object; zero-copy in the heap, a copy outside", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    const heapTensor = bridge.fromPython(py.runPython("import webdlpack; webdlpack.zeros((2, 3), 'float32')"));
    (heapTensor.view as Float32Array).set([1, 2, 3, 4, 5, 6]);
    // What a framework does: it has a webdlpack Tensor and a Python function to call.
    const consume = py.runPython(`
def consume(t):
    return (t.shape, t.tolist(), t.flags.is_copied, t.data_ptr + t.byte_offset)
consume
`) as ((t: unknown) => { toJs(): [number[], number[][], boolean, number] }) & { destroy(): void };
    const inHeap = heapTensor.toPython({ pyodide: py }) as { destroy(): void; dispose(): void };
    const [shape, values, copied, address] = consume(inHeap).toJs();
    const outside = w.webdlpack.Tensor.fromTypedArray(new Int16Array([-1, 2, -3]));
    const copy = outside.toPython() as { destroy(): void; dispose(): void };
    const [, copyValues, copyFlag] = consume(copy).toJs();
    let refusal = "";
    try {
      outside.toPython({ copy: false });
    } catch (e) {
      refusal = String((e as { code?: string }).code);
    }
    inHeap.dispose();
    inHeap.destroy();
    copy.dispose();
    copy.destroy();
    consume.destroy();
    const heapStillValid = Array.from(heapTensor.view as Float32Array);
    const sameAddress = address === (heapTensor.view as Float32Array).byteOffset;
    heapTensor.dispose();
    outside.dispose();
    return { shape, values, copied, sameAddress, copyValues, copyFlag, refusal, heapStillValid };
  });
  expect(r.shape).toEqual([2, 3]);
  expect(r.values).toEqual([
    [1, 2, 3],
    [4, 5, 6],
  ]);
  expect(r.copied).toBe(false);
  expect(r.sameAddress).toBe(true);
  expect(r.copyValues).toEqual([-1, 2, -3]);
  expect(r.copyFlag).toBe(true);
  expect(r.refusal).toBe("COPY_REQUIRED");
  expect(r.heapStillValid).toEqual([1, 2, 3, 4, 5, 6]);
});

test("10 000 exchange cycles (to_js, from_js, capsule) leave the wasm heap, Python's allocations and refcounts where they started", async ({
  shared,
}) => {
  test.setTimeout(120_000);
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    py.runPython(`
import array, gc, sys, webdlpack
from webdlpack.api import debug as _debug
src12 = array.array("f", range(256))
t12 = webdlpack.from_buffer(src12)
`);
    const heapTensor = bridge.fromPython(py.runPython("webdlpack.zeros((64,), 'int32')"));
    py.globals.set("ht12", heapTensor);
    const measure = (): number[] =>
      (
        py.runPython(`
gc.collect()
[sys.getallocatedblocks(), sys.getrefcount(src12), sys.getrefcount(t12), _debug.live_exports(), _debug.live_imports()]
`) as { toJs(): number[] }
      ).toJs();
    const cycles = (n: number): void => {
      py.globals.set("n12", n);
      py.runPython(`
for _ in range(n12):
    jt = webdlpack.to_js(t12)      # Python → JS, JS owns the struct
    jt.view
    jt.dispose()
    p = webdlpack.from_js(ht12)     # JS → Python
    p.dispose()
    u = webdlpack.from_dlpack(t12)  # capsule made and consumed
    u.dispose()
del jt, p, u
`);
    };
    cycles(200); // warm caches (templates, pooled table entries) before the baseline
    const before = measure();
    const heapBefore = py._module.HEAPU8.buffer.byteLength;
    const jsExportsBefore = w.webdlpack.liveExportCount();
    cycles(10_000);
    const after = measure();
    const result = {
      before,
      after,
      heapGrowth: py._module.HEAPU8.buffer.byteLength - heapBefore,
      jsExports: w.webdlpack.liveExportCount() - jsExportsBefore,
      unknownDeletes: Number(py.runPython("_debug.export_stats()['unknown_deletes']")),
    };
    py.runPython("del t12, src12, ht12, n12");
    heapTensor.dispose();
    return result;
  });
  const [blocks0, srcRefs0, tRefs0, exports0, imports0] = r.before;
  const [blocks1, srcRefs1, tRefs1, exports1, imports1] = r.after;
  expect(Math.abs(blocks1! - blocks0!)).toBeLessThan(50); // 30 000 exchanges: nothing per cycle stays allocated
  expect([srcRefs1, tRefs1, exports1, imports1]).toEqual([srcRefs0, tRefs0, exports0, imports0]);
  expect(r.heapGrowth).toBe(0);
  expect(r.jsExports).toBe(0);
  expect(r.unknownDeletes).toBe(0);
});

test("a to_js tensor JS drops without dispose is collected: the safety net runs Python's deleter exactly once", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const py = w.pyodide;
    await w.webdlpack.loadWebDLPack(py as never);
    const gc = (window as unknown as { gc: () => void }).gc;
    const live = (): number => Number(py.runPython("_debug.live_exports()"));
    py.runPython(`
import array, webdlpack
from webdlpack.api import debug as _debug
src14 = array.array("f", [1.0, 2.0, 3.0])
t14 = webdlpack.from_buffer(src14)
`);
    const base = live();
    const unknownBase = Number(py.runPython("_debug.export_stats()['unknown_deletes']"));
    let sum = 0;
    (function useAndDrop() {
      for (let i = 0; i < 3; i++) {
        const jt = py.runPython("webdlpack.to_js(t14)") as { view: Float32Array }; // never disposed
        sum += jt.view[i]!;
      }
    })();
    const whileHeld = live() - base;
    for (let i = 0; i < 50 && live() > base; i++) {
      gc();
      await new Promise((res) => setTimeout(res, 10));
    }
    const result = {
      sum,
      whileHeld,
      afterGC: live() - base,
      unknownDeletes: Number(py.runPython("_debug.export_stats()['unknown_deletes']")) - unknownBase,
    };
    py.runPython("del t14, src14");
    return result;
  });
  expect(r.sum).toBe(6);
  expect(r.whileHeld).toBe(3); // three exports, each kept alive by its JS tensor
  expect(r.afterGC).toBe(0); // collected: each deleter ran ...
  expect(r.unknownDeletes).toBe(0); // ... exactly once
});

test("heap growth between export and use: the JS view is re-derived and still shows Python's bytes", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const py = w.pyodide;
    await w.webdlpack.loadWebDLPack(py as never);
    py.runPython(`
import webdlpack, array
g = array.array("d", [3.0, 1.0, 4.0, 1.0, 5.0])
gj = webdlpack.to_js(webdlpack.from_buffer(g))
`);
    const gj = py.globals.get("gj") as import("../../js/src/index.js").Tensor;
    const oldView = gj.view as Float64Array;
    const oldBytes = py._module.HEAPU8.buffer.byteLength;
    // Grow the heap: allocate more than the whole heap holds now (free space left by earlier tests on this
    // shared page cannot absorb it), and keep it until after the read.
    py.runPython(`big = bytearray(${oldBytes} + 16 * 1024 * 1024)`);
    const newBytes = py._module.HEAPU8.buffer.byteLength;
    const detached = oldView.length === 0;
    const values = Array.from(gj.view as Float64Array);
    gj.dispose();
    py.runPython("del big");
    return { grew: newBytes > oldBytes, detached, values };
  });
  expect(r.grew).toBe(true);
  expect(r.detached).toBe(true);
  expect(r.values).toEqual([3, 1, 4, 1, 5]);
});

test("a malformed struct handed in from JS is a typed error in Python, and its deleter still runs once", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W;
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    const host = bridge.host;
    // A valid struct made by JS, then corrupted: ndim = 99.
    const t = w.webdlpack.Tensor.fromTypedArray(new Float32Array([1, 2, 3]));
    const address = t.toManaged(host);
    new DataView(host.buffer).setInt32(address + 24 + 12, 99, true); // dl_tensor.ndim
    py.globals.set("bad_address", address);
    const live = w.webdlpack.liveExportCount();
    const msg = String(
      py.runPython(`
from webdlpack.api import managed as _exchange
try:
    _exchange.import_managed(bad_address)
    msg = "no error"
except ValueError as e:
    msg = f"{type(e).__name__}: {e}"
msg
`),
    );
    const liveAfter = w.webdlpack.liveExportCount();
    t.dispose();
    return { msg, released: live - liveAfter };
  });
  expect(r.msg).toMatch(/ValueError: \[BAD_NDIM\].*ndim.*99/);
  expect(r.released).toBe(1);
});

test("micropip installs the same wheel from a local URL", async ({ browser }) => {
  const page = await browser.newPage();
  await page.goto("/tests/browser/harness.html?webdlpack=0");
  await page.evaluate(() => (window as unknown as { harnessReady: Promise<boolean> }).harnessReady);
  const version = await page.evaluate(async () => {
    const w = window as unknown as W;
    // The micropip this Pyodide's lock names (the Makefile vendors each pinned Pyodide's).
    const lock = await (await fetch("/node_modules/pyodide/pyodide-lock.json")).json();
    await w.webdlpack.loadWebDLPack(w.pyodide as never, {
      installer: "micropip",
      micropipURL: `/build/vendor/${lock.packages.micropip.file_name}`,
    });
    return String(
      w.pyodide.runPython(
        "import webdlpack, micropip; webdlpack.__version__ + ' ' + str('webdlpack' in micropip.list())",
      ),
    );
  });
  await page.close();
  expect(version).toBe("0.1.0 True");
});

test("a Tensor of a second copy of webdlpack on the page (CPU and WebGPU) goes to Python through this copy's bridge; an unbranded look-alike and a plain object are refused, saying why", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as W & { testkit: { failure(fn: () => unknown): Promise<Record<string, unknown>> } };
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never); // the harness's copy: the bundle
    // A second copy: the ES module tree is another module instance, with its own Tensor class.
    const other = (await import("/js/dist/index.js" as string)) as typeof import("../../js/src/index.js");
    const ctx = other.getContext(); // the one shared context
    await ctx.setup();
    const cpu = other.Tensor.fromTypedArray(new Float32Array([1, 2, 3, 4]));
    const ptr = await ctx.allocWebGPUChecked(16);
    ctx.upload(ptr, new Float32Array([5, 6, 7, 8]));
    const gpu = other.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [4],
      onRelease: () => ctx.freeWebGPU(ptr),
    });
    const distinctClasses = other.Tensor !== w.webdlpack.Tensor && !(cpu instanceof w.webdlpack.Tensor);
    py.globals.set("other_cpu", cpu); // the JS object itself, for is_js_tensor
    const isJsTensor = (
      (await py.runPythonAsync(
        "import webdlpack\nout = [webdlpack.is_js_tensor(other_cpu), webdlpack.is_js_tensor({})]\ndel other_cpu\nout",
      )) as { toJs(): unknown }
    ).toJs();
    py.globals.set("a", bridge.toPython(cpu));
    py.globals.set("g", bridge.toPython(gpu));
    const values = (
      (await py.runPythonAsync(
        "import webdlpack\nc = await webdlpack.to_cpu_async(g)\nout = (a.tolist(), c.tolist())\nfor x in (c, g, a): x.dispose()\ndel a, g, c\nout",
      )) as { toJs(): unknown }
    ).toJs();
    cpu.dispose();
    gpu.dispose();
    const oldCopy = { dtype: {}, device: {}, shape: [4], toManaged: () => 0, dispose: () => undefined };
    return {
      distinctClasses,
      isJsTensor,
      values,
      oldCopy: await w.testkit.failure(() => bridge.toPython(oldCopy as never)),
      plain: await w.testkit.failure(() => bridge.toPython({ x: 1 } as never)),
      live: ctx.stats().livePointers,
    };
  });
  expect(r.distinctClasses).toBe(true);
  expect(r.isJsTensor).toEqual([true, false]);
  expect(r.values).toEqual([
    [1, 2, 3, 4],
    [5, 6, 7, 8],
  ]);
  expect(r.oldCopy.code).toBe("INVALID_ARGUMENT");
  expect(r.oldCopy.message).toContain("another copy of webdlpack, too old");
  expect(r.oldCopy.message).toContain("load one copy of webdlpack");
  expect(r.plain.code).toBe("INVALID_ARGUMENT");
  expect(r.plain.message).toContain("take a webdlpack Tensor or a TypedArray");
  expect(r.plain.value).not.toBe("[object Object]");
  expect(r.live).toBe(0);
});
