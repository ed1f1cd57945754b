/**
 * Who frees what when owners mix, on real WebGPU (regressions found in review):
 * a JS ctx.scope() never frees GPU buffers that C or Python allocated while it was open;
 * disposing the C library first releases the tensors C published that JS never took
 * (their release callbacks still reach the host); copyGPUTensor holds its source across
 * its await, so disposing the source meanwhile neither corrupts the copy nor leaks.
 * Runs on tests/browser/examples.html (import map for "pyodide", "webdlpack", "webdlpack/adapters").
 */
import type { Page } from "@playwright/test";
import { cachedTest as test, expect } from "./fixtures.js";

/**
 * Open the page with its context set up; with `python`, also a Pyodide with webdlpack as window.pyodide (only
 * the tests where C or Python own memory need it: its start is most of a test's time).
 */
async function openExamplesPage(page: Page, python: boolean): Promise<void> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  await page.goto("/tests/browser/examples.html");
  await page.waitForFunction(() => (window as unknown as { examplesReady?: boolean }).examplesReady === true);
  await page.evaluate(async (python) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const w = window as any;
    await w.webdlpack.getContext().setup();
    if (!python) return;
    const { loadPyodide } = await import("pyodide" as string);
    w.pyodide = await loadPyodide({ indexURL: "/node_modules/pyodide/" });
    await w.webdlpack.loadWebDLPack(w.pyodide);
  }, python);
}

test("a JS ctx.scope() does not free C's or Python's GPU allocations made while it is open; C's free still works after it", async ({
  page,
}) => {
  await openExamplesPage(page, true);
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, pyodide } = window as any;
    const ctx = webdlpack.getContext();
    const lib = await webdlpack.loadWebDLPackC(pyodide, { url: "/wasm/build/libwebdlpack.so" });
    const state = (p: number): string => {
      try {
        ctx.gpuPointerInfo(p);
        return "live";
      } catch (e) {
        return (e as { code: string }).code;
      }
    };
    try {
      let cPtr = 0;
      let pyPtr = 0;
      let jsPtr = 0;
      await ctx.scope(async () => {
        cPtr = pyodide.runPython(`
import ctypes, webdlpack
wdl15 = ctypes.CDLL("${lib.path}")
wdl15.wdl_webgpu_alloc.restype = ctypes.c_uint32
wdl15.wdl_webgpu_alloc.argtypes = [ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint32]
wdl15.wdl_webgpu_free.argtypes = [ctypes.c_uint32]
wdl15.wdl_webgpu_alloc(0, 4000, 0)`) as number;
        pyPtr = pyodide.runPython(`g15 = webdlpack.zeros((64,), "float32", device="webgpu:0"); g15.data_ptr`) as number;
        jsPtr = await ctx.allocWebGPUChecked(256, { owner: "js-in-scope" });
      });
      const afterScope = { c: state(cPtr), python: state(pyPtr), js: state(jsPtr) };
      const cFree = pyodide.runPython(`wdl15.wdl_webgpu_free(${cPtr})`) as number;
      pyodide.runPython("g15.dispose(); del g15");
      return {
        afterScope,
        cFree,
        cStats: lib.gpuStats(),
        after: { c: state(cPtr), python: state(pyPtr) },
        live: ctx.stats().livePointers,
      };
    } finally {
      lib.dispose();
    }
  });
  expect(r.afterScope).toEqual({ c: "live", python: "live", js: "STALE_POINTER" });
  expect(r.cFree).toBe(0);
  expect(r.cStats).toEqual({ liveCount: 0, liveBytes: 0 });
  expect(r.after).toEqual({ c: "STALE_POINTER", python: "STALE_POINTER" });
  expect(r.live).toBe(0);
});

test("lib.dispose() releases the tensors C published that JS never took, while C can still free their GPU buffers", async ({
  page,
}) => {
  await openExamplesPage(page, true);
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, pyodide } = window as any;
    const ctx = webdlpack.getContext();
    const base = ctx.stats().livePointers;
    const lib = await webdlpack.loadWebDLPackC(pyodide, {
      url: "/wasm/build/examples/c_webgpu_tensor.so",
      path: "/lib/c_webgpu_tensor_15.so",
    });
    const handle = pyodide.runPython(`
import ctypes
example15 = ctypes.CDLL("${lib.path}")
example15.example_gpu_tensor.restype = ctypes.c_int32
example15.example_gpu_tensor()`) as number;
    const liveBefore = ctx.stats().livePointers - base;
    lib.dispose(); // the handle was never taken
    return { handle, liveBefore, liveAfter: ctx.stats().livePointers - base };
  });
  expect(r.handle).toBeGreaterThan(0);
  expect(r.liveBefore).toBe(1);
  expect(r.liveAfter).toBe(0);
});

test("copyGPUTensor holds its source across its await: disposing the source meanwhile still gives the right copy, and nothing leaks", async ({
  page,
}) => {
  await openExamplesPage(page, false);
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const webdlpack = (window as any).webdlpack;
    const { copyGPUTensor, readTensor } = await import("webdlpack/adapters" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup();
    ctx.setCacheMode("disabled"); // a cache miss, so copyGPUTensor really awaits before copying
    const base = ctx.stats().livePointers;
    const ptr = await ctx.allocWebGPUChecked(64, { owner: "source" });
    const values = Float32Array.from({ length: 16 }, (_, i) => i * 1.5);
    ctx.getWebGPUDevice(0).queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, values);
    let released = 0;
    const src = webdlpack.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [4, 4],
      strides: [1, 4],
      onRelease: () => {
        released += 1;
        ctx.freeWebGPU(ptr);
      },
    });
    const pending = copyGPUTensor(src);
    src.dispose(); // while copyGPUTensor awaits its allocation
    const releasedWhileCopying = released;
    const copy = await pending;
    const got = Array.from((await readTensor(copy)) as Float32Array);
    copy.dispose();
    const result = { got, releasedWhileCopying, releasedAfter: released, live: ctx.stats().livePointers - base };
    ctx.setCacheMode("bucket");
    return result;
  });
  // strides [1, 4]: element (i, j) is values[i + 4j], copied C-contiguously
  const expected: number[] = [];
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) expected.push((i + 4 * j) * 1.5);
  expect(r.got).toEqual(expected);
  expect(r.releasedWhileCopying).toBe(0); // held by the copy
  expect(r.releasedAfter).toBe(1); // released once, after the copy was submitted
  expect(r.live).toBe(0);
});

test("packed sub-byte GPU tensors are refused by the adapters' copy and readback with a typed error, nothing allocated", async ({
  page,
}) => {
  await openExamplesPage(page, false);
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const webdlpack = (window as any).webdlpack;
    const { copyGPUTensor, readTensor } = await import("webdlpack/adapters" as string);
    const ctx = webdlpack.getContext();
    const base = ctx.stats().livePointers;
    const ptr = await ctx.allocWebGPUChecked(16);
    ctx.getWebGPUDevice(0).queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr),
      0,
      Uint8Array.from({ length: 16 }, (_, i) => i % 16),
    );
    const packed = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "int4", shape: [32] });
    const errors: unknown[] = [];
    for (const attempt of [() => copyGPUTensor(packed), () => readTensor(packed)]) {
      try {
        await attempt();
        errors.push("no error");
      } catch (e) {
        const err = e as { code: string; field: string; value: string };
        errors.push([err.code, err.field, err.value]);
      }
    }
    ctx.freeWebGPU(ptr);
    return { errors, live: ctx.stats().livePointers - base };
  });
  expect(r.errors).toEqual([
    ["UNSUPPORTED", "tensor.dtype", "int4"],
    ["UNSUPPORTED", "tensor.dtype", "int4"],
  ]);
  expect(r.live).toBe(0);
});
