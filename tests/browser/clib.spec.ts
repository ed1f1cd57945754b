/**
 * The webdlpack C library inside Pyodide in Chromium with real WebGPU
 * (SwiftShader): Python calls the C library with ctypes, C allocates a
 * GPUBuffer through the page-wide context, JS writes and reads the very
 * buffer C's pointer names, and C frees it.
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";
import type * as WDL from "../../js/src/index.js";
import type * as CLIB from "../../js/src/bridge/clib/index.js";

type Lib = typeof WDL;

test("C in Pyodide allocates a WebGPU buffer through the context; JS reads it; C frees it", async ({ shared }) => {
  const result = await shared.evaluate(async () => {
    const w = window as unknown as {
      webdlpack: Lib & Partial<typeof CLIB>;
      pyodide: CLIB.ClibPyodide & { runPython(code: string): unknown };
    };
    const { testkit } = window as unknown as HarnessWindow;
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
      const query = py(
        "qi = Info(); [wdl.wdl_webgpu_query(gp, ctypes.byref(qi)), qi.nbytes, qi.allocated_nbytes, qi.usage, qi.owned]",
      ) as number[];

      // JS uses the very buffer C's pointer names: write, copy out, read back.
      const device = ctx.getWebGPUDevice(0);
      const buffer = ctx.gpuPointerToBuffer(ptr);
      const values = Float32Array.from({ length: 1000 }, (_, i) => i * 0.25 - 3);
      device.queue.writeBuffer(buffer, 0, values);
      const back = Array.from(new Float32Array((await testkit.readBuffer(device, buffer, 0, 4000)).buffer));

      const statsLive = lib.gpuStats();
      const freeRc = py("wdl.wdl_webgpu_free(gp)") as number;
      const afterFree = testkit.codeOf(() => ctx.gpuPointerInfo(ptr));
      const doubleFree = py(
        "[wdl.wdl_webgpu_free(gp), wdl.wdl_last_error_code(), wdl.wdl_last_error_message().decode()]",
      ) as [number, number, string];
      return {
        ptr,
        allocError,
        query,
        matches: back.every((v, i) => v === values[i]),
        n: back.length,
        statsLive,
        statsAfter: lib.gpuStats(),
        freeRc,
        afterFree,
        doubleFree,
      };
    } finally {
      lib.dispose();
    }
  });
  expect(result.allocError).toBe("");
  expect(result.ptr).toBeGreaterThan(0);
  expect(result.query).toEqual([0, 4000, 4096, 0x8c, 1]); // nbytes as asked; the buffer has the bucket size class
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

test("a JS-made GPU tensor → Python (zero-copy, same pointer) → C resolves the same buffer through the host → freed exactly once", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as {
      webdlpack: Lib & typeof CLIB;
      pyodide: CLIB.ClibPyodide & { runPython(code: string): unknown; globals: { set(n: string, v: unknown): void } };
    };
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    const lib = await w.webdlpack.loadWebDLPackC(w.pyodide, { url: "/wasm/build/libwebdlpack.so" });
    const py = (code: string): unknown => {
      const v = w.pyodide.runPython(code) as { toJs?: () => unknown };
      return typeof v === "object" && v !== null && typeof v.toJs === "function" ? v.toJs() : v;
    };
    const ledgerRows = (p: number) =>
      ctx.ledger
        .entries()
        .filter((e) => e.pointer === p)
        .map((e) => `${e.kind}:${e.owner}`)
        .sort();
    try {
      // JS makes the tensor: 4 float32 at byte_offset 16 of a 64-byte allocation, owned through onRelease.
      const ptr = await ctx.allocWebGPUChecked(64, { owner: "js-test" });
      const buffer = ctx.gpuPointerToBuffer(ptr);
      ctx.getWebGPUDevice().queue.writeBuffer(
        buffer,
        0,
        Float32Array.from({ length: 16 }, (_, i) => i * 1.5),
      );
      let released = 0;
      const jt = w.webdlpack.Tensor.webgpu({
        pointer: ptr,
        deviceId: 0,
        dtype: "float32",
        shape: [2, 2],
        byteOffset: 16,
        owner: "js-test",
        onRelease: () => {
          released++;
          ctx.freeWebGPU(ptr);
        },
      });
      const ledgerWhileJs = ledgerRows(ptr);
      w.pyodide.globals.set("jt9", jt);
      // Python imports it zero-copy, exports a DLPack capsule, and hands the struct to C (C now owns it).
      const seen = py(`
import ctypes, webdlpack
from ctypes import c_int32, c_uint32, c_uint64, c_void_p
from webdlpack.core.abi import DLManagedTensorVersioned
class Info9(ctypes.Structure):
    _fields_ = [("nbytes", c_uint64), ("allocated_nbytes", c_uint64), ("device_id", c_int32),
                ("usage", c_uint32), ("owned", c_uint32), ("reserved", c_uint32)]
wdl9 = ctypes.CDLL("${lib.path}")
wdl9.wdl_webgpu_tensor_query.argtypes = [c_void_p, ctypes.POINTER(Info9)]
wdl9.wdl_managed_tensor_validate.argtypes = [c_void_p, c_uint64]
wdl9.wdl_managed_tensor_release.argtypes = [c_void_p]
wdl9.wdl_last_error_message.restype = ctypes.c_char_p
p9 = webdlpack.from_js(jt9)
cap9 = p9.__dlpack__(max_version=(1, 1))
get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
get_ptr.restype, get_ptr.argtypes = c_void_p, [ctypes.py_object, ctypes.c_char_p]
set_name = ctypes.pythonapi.PyCapsule_SetName
set_name.restype, set_name.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
mt9 = get_ptr(cap9, b"dltensor_versioned")
set_name(cap9, b"used_dltensor_versioned")   # consumed: C owns the struct now
del cap9
[p9.data_ptr, p9.byte_offset, DLManagedTensorVersioned.from_address(mt9).dl_tensor.data or 0]
`) as [number, number, number];
      jt.dispose();
      py("p9.dispose(); del p9, jt9");
      const afterJsAndPython = { released, ledger: ledgerRows(ptr) }; // C's struct is the last holder
      // C: validate the struct, then resolve its data pointer through the host (bounds checked).
      const c = py(`
info9 = Info9()
dl9 = ctypes.addressof(DLManagedTensorVersioned.from_address(mt9).dl_tensor)
[wdl9.wdl_managed_tensor_validate(mt9, 0), wdl9.wdl_webgpu_tensor_query(dl9, ctypes.byref(info9)),
 info9.nbytes, info9.allocated_nbytes, info9.device_id, info9.usage, info9.owned]
`) as number[];
      // C reads the tensor as one that reaches past its buffer: the host's size makes C refuse it.
      const bounds = py(`
tensor9 = DLManagedTensorVersioned.from_address(mt9).dl_tensor
tensor9.byte_offset = info9.allocated_nbytes - 8
[wdl9.wdl_webgpu_tensor_query(dl9, ctypes.byref(info9)), wdl9.wdl_last_error_message().decode()]
`) as [number, string];
      py("tensor9.byte_offset = 16");
      const values = Array.from(new Float32Array(await ctx.readback(ptr, { byteOffset: 16, byteLength: 16 })));
      const sameBuffer = { size: buffer.size, requested: ctx.gpuPointerInfo(ptr).requestedSize, usage: buffer.usage };
      py("wdl9.wdl_managed_tensor_release(mt9); del mt9, tensor9"); // C is done: the last holder lets go
      let stale = "";
      try {
        ctx.gpuPointerInfo(ptr);
      } catch (e) {
        stale = (e as { code: string }).code;
      }
      return {
        ptr,
        ledgerWhileJs,
        seen,
        afterJsAndPython,
        c,
        bounds,
        values,
        sameBuffer,
        released,
        stale,
        ledgerEnd: ledgerRows(ptr),
      };
    } finally {
      lib.dispose();
    }
  });
  expect(r.ledgerWhileJs).toEqual(["gpu-buffer:js-test", "tensor:js-test"]);
  expect(r.seen).toEqual([r.ptr, 16, r.ptr]); // Python and the DLPack struct carry the very pointer JS made
  // The struct JS exported for Python is still alive, now held by C: the ledger lists it under the holder that asked
  // for it ("export:python") until C's release runs its deleter (ledgerEnd below is empty).
  expect(r.afterJsAndPython).toEqual({ released: 0, ledger: ["export:python", "gpu-buffer:js-test"] });
  expect(r.c).toEqual([0, 0, 64, r.sameBuffer.size, 0, r.sameBuffer.usage, 1]);
  expect(r.sameBuffer.requested).toBe(64);
  expect(r.bounds[0]).toBe(-1);
  expect(r.bounds[1]).toContain(
    `[OUT_OF_BOUNDS] the tensor reaches outside its GPU buffer; field DLTensor.byte_offset; value bytes [${r.sameBuffer.size - 8}, ${r.sameBuffer.size + 8}) of a ${r.sameBuffer.size}-byte buffer`,
  );
  expect(r.values).toEqual([6, 7.5, 9, 10.5]);
  expect(r.released).toBe(1);
  expect(r.stale).toBe("STALE_POINTER");
  expect(r.ledgerEnd).toEqual([]);
});

test("READ_ONLY reaches C in the struct's flags (wdl_tensor_from_js); C's transfers of a registered buffer its owner destroyed fail with DISPOSED", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as {
      webdlpack: Lib & typeof CLIB;
      pyodide: CLIB.ClibPyodide & { _module: { HEAPU8: Uint8Array } };
    };
    const { testkit } = window as unknown as HarnessWindow;
    const ctx = w.webdlpack.getContext();
    await ctx.setup();
    const bridge = await w.webdlpack.loadWebDLPack(w.pyodide as never);
    const lib = await w.webdlpack.loadWebDLPackC(w.pyodide, { url: "/wasm/build/libwebdlpack.so" });
    try {
      // JS hands C a READ_ONLY GPU tensor and a writable one; C reads DLManagedTensorVersioned.flags (offset 16
      // on wasm32: version 8 bytes, manager_ctx and deleter 4 each).
      const flagsInC = [];
      for (const readOnly of [true, false]) {
        const t = await testkit.gpuTensor(ctx, [1, 2, 3, 4], [4], { readOnly });
        const handle = lib.publishTensor(t.toManaged(bridge.host));
        const struct = lib.exports.wdl_tensor_from_js(handle) >>> 0;
        const heap = new DataView(w.pyodide._module.HEAPU8.buffer);
        flagsInC.push(Number(heap.getBigUint64(struct + 16, true)));
        lib.releaseTensor(struct); // C's release: the export's deleter
        t.dispose();
      }
      // A buffer the page registered, then destroyed: C's upload and readback through the context refuse it.
      const device: GPUDevice = ctx.getWebGPUDevice(0);
      const buffer = device.createBuffer({
        size: 16,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
      const ptr = ctx.registerGPUBuffer(buffer);
      const scratch = bridge.host.malloc(16);
      lib.upload(ptr, scratch, 16);
      buffer.destroy();
      const upload = await testkit.failure(() => lib.upload(ptr, scratch, 16));
      const readback = await testkit.failure(() => lib.readback(ptr, scratch, 16));
      bridge.host.free(scratch);
      ctx.freeWebGPU(ptr);
      return { flagsInC, upload: `${upload.code} ${upload.field}`, readback: `${readback.code} ${readback.field}` };
    } finally {
      lib.dispose();
    }
  });
  expect(r.flagsInC).toEqual([1, 0]); // DLPACK_FLAG_BITMASK_READ_ONLY, then none
  expect(r.upload).toBe("DISPOSED buffer");
  expect(r.readback).toBe("DISPOSED buffer");
});
