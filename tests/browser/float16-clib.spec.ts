/**
 * float16 between Python, JS and the webdlpack C library in Pyodide (docs/float16.md), in the real browser: a
 * float16 tensor Python made reaches C as dtype {kDLFloat, 16, 1} over the same heap bytes (no copy), and a
 * float16 tensor C allocated reaches JS as a Float16Array and Python as format "e"; every export released once.
 */
import { test, expect } from "./fixtures.js";
import type * as WDL from "../../js/src/index.js";
import type * as CLIB from "../../js/src/bridge/clib/index.js";

/** Exact float16 values: 1, -2, 0.5, the largest finite, the smallest subnormal, 0. */
const X = [1, -2, 0.5, 65504, 2 ** -24, 0];

test("float16 Python → JS → C (same bytes, dtype {2, 16, 1}) and C → JS (Float16Array) → Python ('e')", async ({
  shared,
}) => {
  const r = await shared.evaluate(async (xs) => {
    const w = window as unknown as {
      webdlpack: typeof WDL & typeof CLIB;
      pyodide: CLIB.ClibPyodide & {
        _module: { HEAPU8: Uint8Array };
        runPython(code: string): unknown;
        globals: { set(name: string, value: unknown): void };
      };
    };
    const { LAYOUT } = w.webdlpack;
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    const lib = await w.webdlpack.loadWebDLPackC(py, { url: "/wasm/build/libwebdlpack.so" });
    const F16 = (
      globalThis as unknown as { Float16Array: new (b: ArrayBufferLike, o: number, n: number) => ArrayLike<number> }
    ).Float16Array;
    const dl = LAYOUT.DLManagedTensorVersioned.dl_tensor;
    try {
      // Python → JS → C.
      py.globals.set("xs", xs);
      const jt = py.runPython(`
import webdlpack, struct
from webdlpack.api import debug as _debug
exports_before = _debug.export_stats()["live"]
t = webdlpack.from_buffer(bytearray(struct.pack("<%de" % len(xs.to_py()), *xs.to_py())), dtype="float16")
webdlpack.to_js(t)
`) as WDL.Tensor;
      const struct = lib.exports.wdl_tensor_from_js(lib.publishTensor(jt.toManaged(bridge.host))) >>> 0;
      const heap = () => new DataView(py._module.HEAPU8.buffer);
      const checked = lib.exports.wdl_managed_tensor_check(struct);
      const nbytesAt = bridge.host.malloc(8);
      lib.check(lib.exports.wdl_tensor_nbytes(struct + dl, nbytesAt), "wdl_tensor_nbytes");
      const nbytes = Number(heap().getBigUint64(nbytesAt, true));
      bridge.host.free(nbytesAt);
      const dtype = [0, 1].map((i) => heap().getUint8(struct + dl + LAYOUT.DLTensor.dtype + i));
      dtype.push(heap().getUint16(struct + dl + LAYOUT.DLTensor.dtype + 2, true));
      const data = heap().getUint32(struct + dl + LAYOUT.DLTensor.data, true);
      const sameBytes = data === (jt.view as unknown as { byteOffset: number }).byteOffset;
      const inC = Array.from(new F16(py._module.HEAPU8.buffer, data, xs.length));
      lib.releaseTensor(struct); // C's release: the export's deleter
      jt.dispose();
      py.runPython("t.dispose(); del t");
      const exportsLeft = Number(py.runPython('_debug.export_stats()["live"] - exports_before'));

      // C → JS → Python.
      const liveBefore = lib.exports.wdl_managed_tensor_live_count();
      const args = bridge.host.malloc(16);
      new Uint8Array(py._module.HEAPU8.buffer, args, 4).set([2, 16, 1, 0]); // kDLFloat, 16 bits, 1 lane
      heap().setBigInt64(args + 8, BigInt(xs.length), true);
      const made = lib.check(lib.exports.wdl_managed_tensor_alloc_cpu_p(args, 1, args + 8), "alloc", true) >>> 0;
      bridge.host.free(args);
      const madeData = heap().getUint32(made + dl + LAYOUT.DLTensor.data, true);
      const target = new F16(py._module.HEAPU8.buffer, madeData, xs.length) as unknown as { set(v: number[]): void };
      target.set(xs); // what C's code would write: binary16 values
      const fromC = w.webdlpack.Tensor.fromManaged(bridge.host, lib.takeTensor(lib.exports.wdl_tensor_to_js(made)), {
        versioned: true,
      });
      const jsView = [fromC.view.constructor.name, Array.from(fromC.view as unknown as ArrayLike<number>)];
      const p = bridge.toPython(fromC);
      py.globals.set("p", p);
      const pyRow = (
        py.runPython("[str(p.dtype), memoryview(p).format, p.tolist(), p.flags.is_copied]") as {
          toJs(): unknown[];
        }
      ).toJs();
      py.runPython("p.dispose(); del p");
      (p as { destroy(): void }).destroy();
      fromC.dispose();
      return {
        checked,
        nbytes,
        dtype,
        sameBytes,
        inC,
        exportsLeft,
        jsView,
        pyRow,
        cLeft: lib.exports.wdl_managed_tensor_live_count() - liveBefore,
      };
    } finally {
      lib.dispose();
    }
  }, X);
  expect(r.checked).toBe(0);
  expect(r.nbytes).toBe(2 * X.length);
  expect(r.dtype).toEqual([2, 16, 1]);
  expect(r.sameBytes).toBe(true);
  expect(r.inC).toEqual(X);
  expect(r.exportsLeft).toBe(0);
  expect(r.jsView).toEqual(["Float16Array", X]);
  expect(r.pyRow).toEqual(["float16", "e", X, false]);
  expect(r.cLeft).toBe(0);
});
