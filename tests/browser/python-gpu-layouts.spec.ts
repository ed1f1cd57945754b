/**
 * byte_offset and strides of WebGPU tensors from Python (Pyodide) in the real browser: honoured on
 * upload and on readback (negative strides, unaligned offsets, copy=True); a strided GPU copy is
 * refused saying what to do.
 */
import { test, expect } from "./fixtures.js";
import { inGpuPage, type GpuWindow, type PyProxy } from "./python-page.js";

test("byte_offset and strides (negative too) are honoured on upload and on readback, also with copy=True and unaligned offsets; strided GPU copies are refused saying what to do", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, device, base } = (window as unknown as GpuWindow).gpuTest.env();
    const bridge = await w.webdlpack.loadWebDLPack(py as never);
    /** Dispose the JS tensors, then free their GPU pointer and heap block. */
    const release = (tensors: { dispose(): void }[], gpuPtr: number, heapAddr: number): void => {
      for (const t of tensors) t.dispose();
      ctx.freeWebGPU(gpuPtr);
      bridge.host.free(heapAddr);
    };
    // Upload: a heap tensor with byte_offset 8, and a strided one (every other element).
    const addr = bridge.host.malloc(64); // Pyodide's malloc, whichever way it exposes it
    new Float32Array(py._module.HEAPU8.buffer, addr, 16).set(Array.from({ length: 16 }, (_, i) => 10 + i));
    const shifted = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr,
      byteOffset: 8,
      dtype: "float32",
      shape: [4],
    });
    const strided = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr,
      dtype: "float32",
      shape: [2, 2],
      strides: [8, 2],
    });
    py.globals.set("shifted6", shifted);
    py.globals.set("strided6", strided);
    const up = (
      py.runPython(`
import webdlpack
s6 = webdlpack.from_js(shifted6)
t6 = webdlpack.from_js(strided6)
gs6 = webdlpack.asarray(s6, device="webgpu:0")
gt6 = webdlpack.asarray(t6, device="webgpu:0")
[s6.byte_offset, t6.strides, gs6.data_ptr, gt6.data_ptr, gt6.strides is None]
`) as PyProxy
    ).toJs() as [number, number[], number, number, boolean];
    const readF32 = async (ptr: number, n: number) =>
      Array.from(new Float32Array((await w.gpuTest.read(ctx.gpuPointerToBuffer(ptr), 0, n * 4)).buffer));
    const uploadedShifted = await readF32(up[2], 4);
    const uploadedStrided = await readF32(up[3], 4);
    // Readback: JS GPU tensors with byte offsets (4-aligned and not) and strides.
    const ptr = await ctx.allocWebGPUChecked(64);
    device.queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr),
      0,
      new Int16Array(Array.from({ length: 32 }, (_, i) => 100 + i)),
    );
    const views = [
      w.webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "int16", shape: [3], byteOffset: 2 }),
      w.webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "int16", shape: [5], byteOffset: 6 }),
      w.webdlpack.Tensor.webgpu({
        pointer: ptr,
        deviceId: 0,
        dtype: "int16",
        shape: [2, 3],
        strides: [10, 3],
        byteOffset: 4,
      }),
      w.webdlpack.Tensor.webgpu({
        pointer: ptr,
        deviceId: 0,
        dtype: "int16",
        shape: [4],
        strides: [-2],
        byteOffset: 14,
      }),
    ];
    py.globals.set("views6", views);
    const back = (
      (await py.runPythonAsync(`
out = []
for v in views6:
    p = webdlpack.from_js(v)
    sync = webdlpack.from_dlpack(p, device="cpu")
    asy = await webdlpack.to_cpu_async(p)
    out.append([sync.tolist(), asy.tolist(), sync.strides is None])
    for x in (p, sync, asy):
        x.dispose()
del p, sync, asy, x
for x in (s6, t6, gs6, gt6):
    x.dispose()
del x, s6, t6, gs6, gt6, shifted6, strided6, views6
out
`)) as PyProxy
    ).toJs() as unknown[][];
    release([...views, shifted, strided], ptr, addr);
    // More layouts: negative-stride / offset CPU → webgpu uploads, copy=True readbacks of offset and
    // strided GPU tensors; a strided GPU copy is refused saying what to do.
    const addr2 = bridge.host.malloc(96);
    new Int32Array(py._module.HEAPU8.buffer, addr2, 24).set(Array.from({ length: 24 }, (_, i) => i));
    // CPU sources: reversed rows and columns from byte_offset 92 (the last element), and a transposed view at byte_offset 4.
    const reversed = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr2,
      byteOffset: 92,
      dtype: "int32",
      shape: [4, 6],
      strides: [-6, -1],
    });
    const transposed = w.webdlpack.Tensor.wasmView(bridge.host, {
      data: addr2,
      byteOffset: 4,
      dtype: "int32",
      shape: [3, 2],
      strides: [1, 6],
    });
    py.globals.set("rev12", reversed);
    py.globals.set("tr12", transposed);
    const ptr2 = await ctx.allocWebGPUChecked(128);
    device.queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr2),
      0,
      Int32Array.from({ length: 32 }, (_, i) => 100 + i),
    );
    const gpuViews = [
      w.webdlpack.Tensor.webgpu({ pointer: ptr2, deviceId: 0, dtype: "int32", shape: [5], byteOffset: 12 }),
      w.webdlpack.Tensor.webgpu({
        pointer: ptr2,
        deviceId: 0,
        dtype: "int32",
        shape: [2, 3],
        strides: [1, -4],
        byteOffset: 40,
      }),
    ];
    py.globals.set("gv12", gpuViews);
    const more = (
      (await py.runPythonAsync(`
res = []
for src in (rev12, tr12):
    c = webdlpack.from_js(src)
    g = webdlpack.asarray(c, device="webgpu:0")
    res.append([c.strides, c.byte_offset, g.strides is None, g.byte_offset, g.flags.is_copied, c.tolist(),
                webdlpack.from_dlpack(g, device="cpu", copy=True).tolist()])
    c.dispose(); g.dispose()
for v in gv12:
    p = webdlpack.from_js(v)
    a = webdlpack.from_dlpack(p, device="cpu", copy=True)
    b = webdlpack.from_capsule(p.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=True))
    res.append([a.tolist(), b.tolist(), a.flags.is_copied, b.flags.is_copied, a.strides is None, a.byte_offset])
    a.dispose(); b.dispose()
    try:
        cp = p.copy()
        res.append(webdlpack.from_dlpack(cp, device="cpu").tolist())
        cp.dispose()
        del cp
    except BufferError as e:
        res.append([e.code.name, e.field, e.expected, "read it back" in str(e)])
    p.dispose()
del c, g, p, a, b, src, v, rev12, tr12, gv12
res
`)) as PyProxy
    ).toJs() as unknown[][];
    release([...gpuViews, reversed, transposed], ptr2, addr2);
    return { up, uploadedShifted, uploadedStrided, back, more, live: ctx.stats().livePointers - base };
  });
  expect(r.up[0]).toBe(8);
  expect(r.up[1]).toEqual([8, 2]);
  expect(r.up[4]).toBe(true);
  expect(r.uploadedShifted).toEqual([12, 13, 14, 15]);
  expect(r.uploadedStrided).toEqual([10, 12, 18, 20]);
  expect(r.back[0]).toEqual([[101, 102, 103], [101, 102, 103], true]);
  expect(r.back[1]).toEqual([[103, 104, 105, 106, 107], [103, 104, 105, 106, 107], true]);
  expect(r.back[2]).toEqual([
    [
      [102, 105, 108],
      [112, 115, 118],
    ],
    [
      [102, 105, 108],
      [112, 115, 118],
    ],
    true,
  ]);
  expect(r.back[3]).toEqual([[107, 105, 103, 101], [107, 105, 103, 101], true]);
  const rev = [
    [23, 22, 21, 20, 19, 18],
    [17, 16, 15, 14, 13, 12],
    [11, 10, 9, 8, 7, 6],
    [5, 4, 3, 2, 1, 0],
  ];
  expect(r.more[0]).toEqual([[-6, -1], 92, true, 0, true, rev, rev]);
  const tr = [
    [1, 7],
    [2, 8],
    [3, 9],
  ];
  expect(r.more[1]).toEqual([[1, 6], 4, true, 0, true, tr, tr]);
  expect(r.more[2]).toEqual([[103, 104, 105, 106, 107], [103, 104, 105, 106, 107], true, true, true, 0]);
  expect(r.more[3]).toEqual([103, 104, 105, 106, 107]); // contiguous at an offset: copied on the GPU
  const strided = [
    [110, 106, 102],
    [111, 107, 103],
  ];
  expect(r.more[4]).toEqual([strided, strided, true, true, true, 0]);
  expect(r.more[5]).toEqual(["UNSUPPORTED", "strides", "None (C-contiguous)", true]);
  expect(r.live).toBe(0);
});
