/**
 * Lifetimes across the Python (Pyodide) ↔ JS bridge in the real browser: 10 000 exchange cycles leave
 * the heap, allocations and refcounts where they started; a to_js tensor JS drops is collected and
 * its deleter runs once; heap growth re-derives JS views; a malformed struct is a typed error whose
 * deleter still runs once.
 */
import { test, expect } from "./fixtures.js";
import type { PyWindow } from "./python-page.js";

test("10 000 exchange cycles (to_js, from_js, capsule) leave the wasm heap, Python's allocations and refcounts where they started", async ({
  shared,
}) => {
  test.setTimeout(120_000);
  const r = await shared.evaluate(async () => {
    const w = window as unknown as PyWindow;
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
    const w = window as unknown as PyWindow;
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
    const w = window as unknown as PyWindow;
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
    const w = window as unknown as PyWindow;
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
