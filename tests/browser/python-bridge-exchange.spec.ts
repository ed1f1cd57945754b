/**
 * Python in Pyodide ↔ JS through the bridge (loadWebDLPack), in the real browser: zero-copy both
 * ways in the heap, a copy (IS_COPIED) from outside it and a refusal with copy=False, deleters
 * exactly once; tensor.toPython() without the bridge object.
 */
import { test, expect } from "./fixtures.js";
import type { PyWindow } from "./python-page.js";

test("Python → JS: to_js gives a view on the same heap bytes; JS writes, Python sees; dispose runs the deleter once", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as PyWindow;
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
    const w = window as unknown as PyWindow;
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
    const w = window as unknown as PyWindow;
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
