/**
 * webdlpack.empty(device="webgpu:0") from Python (Pyodide) in the real browser: a live pointer of
 * the right size (a packed sub-byte dtype at its packed size), owner python, freed on dispose.
 */
import { test, expect } from "./fixtures.js";
import { inGpuPage, type GpuWindow } from "./python-page.js";

test("webdlpack.empty(device='webgpu:0') allocates a GPU tensor: (15, 0), a live pointer of the right size, owner python; freed on dispose", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, ctx } = (window as unknown as GpuWindow).gpuTest.env();
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
    const { w, ctx } = (window as unknown as GpuWindow).gpuTest.env();
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
