/**
 * Python WebGPU tensors in the real browser: `copy.deepcopy` is a GPU copy
 * that outlives the original, owners refuse to be copied or pickled,
 * `memoryview(t)` (PEP 688, Pyodide's Python 3.14) works for CPU tensors and
 * is a typed error for GPU ones, a tensor kept by an inner scope is freed by
 * the enclosing one, and bad `copy` / `device` arguments fail before any GPU work.
 */
import { test, expect } from "./fixtures.js";
import type { Page } from "@playwright/test";

type Webdlpack = typeof import("../../js/src/index.js");
type PyProxy = { toJs(opts?: object): unknown };
type W = {
  pyodide: { runPythonAsync(c: string): Promise<unknown> };
  webdlpack: Webdlpack;
};

/** Run Python `code` (its last expression is the result) after setting up device 0 and the bridge. */
async function runPy(page: Page, code: string): Promise<{ out: unknown; live: number }> {
  return page.evaluate(async (source) => {
    const w = window as unknown as W;
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    const base = ctx.stats().livePointers;
    const result = await w.pyodide.runPythonAsync(source);
    const out = (result as PyProxy | undefined)?.toJs
      ? (result as PyProxy).toJs({ dict_converter: Object.fromEntries })
      : result;
    return { out, live: ctx.stats().livePointers - base };
  }, code);
}

test("copy.deepcopy of a WebGPU tensor is a GPU copy that outlives the original; copy.copy is the tensor; pickling and owner copies are typed errors", async ({
  shared,
}) => {
  const r = await runPy(
    shared,
    `
import copy, gc, pickle, array
import webdlpack
from webdlpack.api import debug as _debug
g = webdlpack.asarray(array.array("f", [1.5, -2.0, 3.25]), device="webgpu:0")
before = _debug.gpu_stats()
d = copy.deepcopy(g)
made = _debug.gpu_stats()["allocated"] - before["allocated"]
res = {"made": made, "newPointer": d.data_ptr != g.data_ptr, "device": str(d.device), "shallow": copy.copy(g) is g}
g.dispose(); del g; gc.collect()
res["values"] = webdlpack.from_dlpack(d, device="cpu").tolist()   # readback through JSPI
errors = []
for attempt in (lambda: pickle.dumps(d), lambda: copy.copy(d._owner), lambda: copy.deepcopy(d._owner), lambda: pickle.dumps(d._owner)):
    try:
        attempt()
        errors.append("no error")
    except webdlpack.WebDLPackTypeError as e:
        errors.append(f"{e.code.name} {e.field}")
try:
    memoryview(d)
    errors.append("no error")
except webdlpack.WebDLPackBufferError as e:
    errors.append(f"{e.code.name} {e.field}")
res["errors"] = errors
d.dispose(); del d; gc.collect()
res
`,
  );
  const out = r.out as Record<string, unknown>;
  expect(out.made).toBe(1);
  expect(out.newPointer).toBe(true);
  expect(out.device).toBe("webgpu:0");
  expect(out.shallow).toBe(true);
  expect(out.values).toEqual([1.5, -2, 3.25]);
  expect(out.errors).toEqual([
    "INVALID_ARGUMENT tensor",
    "INVALID_ARGUMENT GPUAllocation",
    "INVALID_ARGUMENT GPUAllocation",
    "INVALID_ARGUMENT GPUAllocation",
    "BAD_DEVICE device",
  ]);
  expect(r.live).toBe(0);
});

test("memoryview(t) of a CPU tensor in the browser's Pyodide shares the wasm bytes and holds them after dispose", async ({
  shared,
}) => {
  const r = await runPy(
    shared,
    `
import webdlpack, sys
t = webdlpack.zeros((2, 2), "int32")
m = memoryview(t)
m[1, 1] = 42
t.dispose()
res = [sys.version_info >= (3, 12), m.format, list(m.shape), m.tolist()]
m.release()
res
`,
  );
  expect(r.out).toEqual([
    true,
    "i",
    [2, 2],
    [
      [0, 0],
      [0, 42],
    ],
  ]);
});

test("a GPU tensor kept by an inner scope is freed when the enclosing scope closes; webdlpack.keep outlives both", async ({
  shared,
}) => {
  const r = await runPy(
    shared,
    `
import gc
import webdlpack
from webdlpack.api import debug as _debug
s0 = _debug.gpu_stats()
with webdlpack.scope():
    with webdlpack.scope() as inner:
        handed_up = inner.keep(webdlpack.zeros((4,), "float32", device="webgpu:0"))
        kept = webdlpack.keep(webdlpack.zeros((4,), "float32", device="webgpu:0"))
        webdlpack.zeros((4,), "float32", device="webgpu:0")
    after_inner = _debug.gpu_stats()["live"] - s0["live"]
after_outer = _debug.gpu_stats()["live"] - s0["live"]
res = [after_inner, after_outer, handed_up.disposed, kept.disposed]
kept.dispose(); del kept, handed_up; gc.collect()
res
`,
  );
  expect(r.out).toEqual([2, 1, true, false]);
  expect(r.live).toBe(0);
});

test("bad copy and device arguments for WebGPU tensors are typed errors raised before any GPU work", async ({
  shared,
}) => {
  const r = await runPy(
    shared,
    `
import gc
import webdlpack
from webdlpack.api import debug as _debug
g = webdlpack.zeros((2,), "float32", device="webgpu:0")
s0 = _debug.gpu_stats()["allocated"]
res = []
for attempt in (lambda: webdlpack.from_dlpack(g, device="cuda"),
                lambda: webdlpack.from_dlpack(g, copy="yes"),
                lambda: webdlpack.asarray(g, device="cpu", copy=1),
                lambda: g.__dlpack__(copy=2),
                lambda: g.to_device("vulkan:0"),
                lambda: webdlpack.zeros("34", device="webgpu:0"),
                lambda: webdlpack.empty((2.5,), device="webgpu:0")):
    try:
        attempt()
        res.append("no error")
    except webdlpack.WebDLPackError as e:
        res.append(f"{type(e).__name__} {e.code.name} {e.field}")
res.append(_debug.gpu_stats()["allocated"] - s0)
g.dispose(); del g; gc.collect()
res
`,
  );
  expect(r.out).toEqual([
    "WebDLPackDeviceError BAD_DEVICE device",
    "CopyArgumentError INVALID_ARGUMENT copy", // a WebDLPackTypeError that is also a ValueError, as in NumPy
    "CopyArgumentError INVALID_ARGUMENT copy",
    "CopyArgumentError INVALID_ARGUMENT copy",
    "WebDLPackDeviceError BAD_DEVICE device",
    "WebDLPackTypeError BAD_SHAPE shape",
    "WebDLPackTypeError BAD_SHAPE shape[0]",
    0,
  ]);
  expect(r.live).toBe(0);
});
