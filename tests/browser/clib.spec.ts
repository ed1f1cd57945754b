/**
 * The webdlpack C library inside Pyodide in Chromium with real WebGPU
 * (SwiftShader): Python calls the C library with ctypes, C allocates a
 * GPUBuffer through the page-wide context, JS writes and reads the very
 * buffer C's pointer names, and C frees it.
 */
import { test, expect } from "./fixtures.js";
import type * as WDL from "../../js/src/index.js";
import type * as CLIB from "../../js/src/bridge/clib/index.js";

type Lib = typeof WDL;

test("C in Pyodide allocates a WebGPU buffer through the context; JS reads it; C frees it", async ({ shared }) => {
  const result = await shared.evaluate(async () => {
    const w = window as unknown as { webdlpack: Lib & Partial<typeof CLIB>; pyodide: CLIB.ClibPyodide & { runPython(code: string): unknown } };
    const clib: Pick<typeof CLIB, "loadWebDLPackC"> = w.webdlpack as typeof CLIB;
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    const lib = await clib.loadWebDLPackC(w.pyodide, { url: "/wasm/build/libwebdlpack.so" });
    const py = (code: string): unknown => {
      const r = w.pyodide.runPython(code) as { toJs?: () => unknown };
      return typeof r === "object" && r !== null && typeof r.toJs === "function" ? r.toJs() : r;
    };
    try {
      py(`
import ctypes
from ctypes import c_int32, c_uint32, c_uint64, c_char_p
class Info(ctypes.Structure):
    _fields_ = [("nbytes", c_uint64), ("allocated_nbytes", c_uint64), ("device_id", c_int32),
                ("usage", c_uint32), ("owned", c_uint32), ("reserved", c_uint32)]
wdl = ctypes.CDLL("${lib.path}")
wdl.wdl_webgpu_alloc.restype = c_uint32
wdl.wdl_webgpu_alloc.argtypes = [c_int32, c_uint64, c_uint32]
wdl.wdl_webgpu_free.argtypes = [c_uint32]
wdl.wdl_webgpu_query.argtypes = [c_uint32, ctypes.POINTER(Info)]
wdl.wdl_last_error_message.restype = c_char_p
`);
      const ptr = py("gp = wdl.wdl_webgpu_alloc(0, 4000, 0); gp") as number;
      const allocError = ptr === 0 ? (py("wdl.wdl_last_error_message().decode()") as string) : "";
      const query = py("qi = Info(); [wdl.wdl_webgpu_query(gp, ctypes.byref(qi)), qi.nbytes, qi.allocated_nbytes, qi.usage, qi.owned]") as number[];

      // JS uses the very buffer C's pointer names: write, copy out, read back.
      const device = ctx.getWebGPUDevice(0);
      const buffer = ctx.gpuPointerToBuffer(ptr);
      const values = Float32Array.from({ length: 1000 }, (_, i) => i * 0.25 - 3);
      device.queue.writeBuffer(buffer, 0, values);
      const staging = device.createBuffer({ size: 4000, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buffer, 0, staging, 0, 4000);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const back = Array.from(new Float32Array(staging.getMappedRange().slice(0)));
      staging.unmap();
      staging.destroy();

      const statsLive = lib.gpuStats();
      const freeRc = py("wdl.wdl_webgpu_free(gp)") as number;
      let afterFree = "no error";
      try {
        ctx.gpuPointerInfo(ptr);
      } catch (e) {
        afterFree = (e as { code?: string }).code ?? String(e);
      }
      const doubleFree = py("[wdl.wdl_webgpu_free(gp), wdl.wdl_last_error_code(), wdl.wdl_last_error_message().decode()]") as [number, number, string];
      return {
        ptr, allocError, query, matches: back.every((v, i) => v === values[i]), n: back.length,
        statsLive, statsAfter: lib.gpuStats(), freeRc, afterFree, doubleFree,
      };
    } finally {
      lib.dispose();
    }
  });
  expect(result.allocError).toBe("");
  expect(result.ptr).toBeGreaterThan(0);
  expect(result.query).toEqual([0, 4000, 4000, 0x8c, 1]);
  expect(result.n).toBe(1000);
  expect(result.matches).toBe(true);
  expect(result.statsLive).toEqual({ liveCount: 1, liveBytes: 4000 });
  expect(result.freeRc).toBe(0);
  expect(result.afterFree).toBe("STALE_POINTER");
  expect(result.statsAfter).toEqual({ liveCount: 0, liveBytes: 0 });
  expect(result.doubleFree[0]).toBe(-1);
  expect(result.doubleFree[1]).toBe(18); // DOUBLE_FREE
  expect(result.doubleFree[2]).toMatch(/^\[DOUBLE_FREE\]/);
});
