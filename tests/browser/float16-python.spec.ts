/**
 * float16 between JS and Python in Pyodide (docs/float16.md): a float16 tensor Python hands to JS is a
 * `Float16Array` there, and Python can touch that array again (it arrives as a struct-format "e" buffer,
 * not Pyodide's "Unknown typed array type 'Float16Array'"); a JS Float16Array becomes a float16 tensor in
 * Python, zero-copy when it lies in the heap; Pyodide's own `to_js` of an "e" buffer gives a Float16Array.
 */
import { test, expect } from "./fixtures.js";
import type { PyWindow } from "./python-page.js";

/** The bit patterns of 1, -2, 0.5, +inf, 65504 (largest finite), 2^-24 (smallest subnormal) as float16. */
const BITS = [0x3c00, 0xc000, 0x3800, 0x7c00, 0x7bff, 0x0001];
const VALUES = [1, -2, 0.5, Infinity, 65504, 2 ** -24];

test("Python → JS → Python: a float16 tensor is a Float16Array in JS; Python reads that array back as format 'e', zero-copy", async ({
  shared,
}) => {
  const r = await shared.evaluate(async (bits) => {
    const w = window as unknown as PyWindow;
    const py = w.pyodide;
    await w.webdlpack.loadWebDLPack(py as never);
    py.globals.set("bits", bits);
    py.runPython(`
import webdlpack, struct
from webdlpack.api import debug as _debug
before = _debug.export_stats()["live"]
raw = bytearray(struct.pack("<%dH" % len(bits.to_py()), *bits.to_py()))
t = webdlpack.from_buffer(raw, dtype="float16")
jt = webdlpack.to_js(t)
v = jt.view                      # raised RuntimeError: Unknown typed array type 'Float16Array' before
mv = v.to_memoryview()
back = webdlpack.from_js(v)      # the Float16Array itself, over the heap: lent, not copied
`);
    const jt = py.globals.get("jt") as import("../../js/src/index.js").Tensor;
    const view = jt.view;
    const got = py.runPython(`
(type(v).__name__, mv.format, mv.itemsize, mv.tolist(), v.to_py().tolist(), str(back.dtype), back.tolist(),
 back.flags.is_copied, back.data_ptr + back.byte_offset == t.data_ptr + t.byte_offset)
`) as { toJs(): unknown[]; destroy(): void };
    const out = got.toJs();
    got.destroy();
    py.runPython("del v, mv, back");
    jt.dispose();
    const live = Number(py.runPython("_debug.export_stats()['live'] - before"));
    return {
      ctor: view.constructor.name,
      jsValues: Array.from(view as unknown as ArrayLike<number>),
      py: out,
      live,
    };
  }, BITS);
  expect(r.ctor).toBe("Float16Array");
  expect(r.jsValues).toEqual(VALUES);
  const [proxyType, format, itemsize, mvList, toPyList, dtype, backList, copied, sameAddress] = r.py;
  expect(proxyType).toBe("JsProxy");
  expect(format).toBe("e");
  expect(itemsize).toBe(2);
  expect(mvList).toEqual(VALUES);
  expect(toPyList).toEqual(VALUES);
  expect(dtype).toBe("float16");
  expect(backList).toEqual(VALUES);
  expect(copied).toBe(false);
  expect(sameAddress).toBe(true);
  expect(r.live).toBe(0);
});

test("JS → Python: a Float16Array outside the heap is one copy (IS_COPIED); Pyodide's to_js of an 'e' buffer is a Float16Array", async ({
  shared,
}) => {
  const r = await shared.evaluate(async (values) => {
    const { pyodide: py, webdlpack } = window as unknown as PyWindow;
    const bridge = await webdlpack.loadWebDLPack(py as never);
    const F16 = (globalThis as unknown as { Float16Array: new (v: number[]) => ArrayLike<number> }).Float16Array;
    py.globals.set("outside", new F16(values));
    const got = py.runPython(`
import webdlpack, pyodide.ffi
c = webdlpack.from_js(outside)
js_arr = pyodide.ffi.to_js(memoryview(bytearray(memoryview(c).cast("B"))).cast("e"))
(str(c.dtype), c.tolist(), c.flags.is_copied, js_arr.constructor.name, list(js_arr.to_py().tolist()))
`) as { toJs(): unknown[]; destroy(): void };
    const out = got.toJs();
    got.destroy();
    // A JS float16 tensor handed to Python with toPython(): same values, dtype float16.
    const js = webdlpack.Tensor.fromTypedArray(new F16(values) as never);
    const p = bridge.toPython(js) as unknown as { tolist(): { toJs(): unknown }; dtype: unknown; destroy(): void };
    const viaToPython = (p.tolist() as { toJs(): unknown }).toJs();
    const dtype = String(p.dtype);
    p.destroy();
    js.dispose();
    py.runPython("del c, js_arr");
    return { out, viaToPython, dtype };
  }, VALUES);
  expect(r.out).toEqual(["float16", VALUES, true, "Float16Array", VALUES]);
  expect(r.viaToPython).toEqual(VALUES);
  expect(r.dtype).toBe("float16");
});
