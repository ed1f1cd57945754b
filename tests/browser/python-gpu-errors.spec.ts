/**
 * What Python (Pyodide) may not ask of a WebGPU tensor in the real browser, and the typed errors it
 * gets: a sync readback outside runPythonAsync, copy=False across devices (copy=None copies), an
 * unknown device, a stale pointer, a stream other than None and -1.
 */
import { test, expect } from "./fixtures.js";
import { inGpuPage, type GpuWindow, type PyProxy } from "./python-page.js";

test("sync readback outside runPythonAsync is a clear typed error naming the fix, and starts no GPU work", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { py } = (window as unknown as GpuWindow).gpuTest.env();
    let maps = 0;
    const mapAsync = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
      maps++;
      return mapAsync.apply(this, args);
    };
    try {
      const out = (
        py.runPython(`
import webdlpack
g2 = webdlpack.zeros((3,), "int32", device="webgpu:0")
msgs = []
for attempt in (lambda: webdlpack.from_dlpack(g2, device="cpu"),
                lambda: g2.__dlpack__(max_version=(1, 1), dl_device=(1, 0)),
                lambda: g2.to_device("cpu")):
    try:
        attempt()
        msgs.append("no error")
    except BufferError as e:
        msgs.append([type(e).__name__, e.code.name, e.field, e.expected, isinstance(e, ValueError)])
g2.dispose()
msgs
`) as PyProxy
      ).toJs() as unknown[][];
      return { out, maps };
    } finally {
      GPUBuffer.prototype.mapAsync = mapAsync;
    }
  });
  expect(r.out).toHaveLength(3);
  for (const m of r.out) {
    expect(m[0]).toBe("WebDLPackDeviceError");
    expect(m[1]).toBe("UNSUPPORTED");
    expect(m[2]).toBe("device");
    expect(String(m[3])).toContain("runPythonAsync");
    expect(String(m[3])).toContain("await webdlpack.to_cpu_async(x)");
    expect(m[4]).toBe(true);
  }
  expect(r.maps).toBe(0);
});

test("copy=False across devices is a BufferError both ways; copy=None copies (array API); nothing leaks", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { py, ctx, base } = (window as unknown as GpuWindow).gpuTest.env();
    const out = (
      (await py.runPythonAsync(`
import webdlpack, array
cpu5 = webdlpack.from_buffer(array.array("h", [1, -2, 3]))
g5 = webdlpack.from_dlpack(cpu5, device="webgpu:0")          # copy=None: allowed to copy
res = []
for attempt in (lambda: webdlpack.from_dlpack(cpu5, device="webgpu:0", copy=False),
                lambda: cpu5.__dlpack__(max_version=(1, 1), dl_device=(15, 0), copy=False),
                lambda: webdlpack.asarray(array.array("h", [1]), device="webgpu:0", copy=False),
                lambda: webdlpack.from_dlpack(g5, device="cpu", copy=False),
                lambda: g5.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=False)):
    try:
        attempt()
        res.append("no error")
    except BufferError as e:
        res.append(e.code.name)
back = webdlpack.from_dlpack(g5, device="cpu")                # copy=None: allowed to copy
gcopy = g5.copy()                                             # same device: a GPU copy
gcopy_back = webdlpack.from_dlpack(gcopy, device="cpu", copy=True)
res += [g5.flags.is_copied, back.tolist(), back.flags.is_copied, gcopy.data_ptr != g5.data_ptr, gcopy_back.tolist()]
for x in (cpu5, g5, back, gcopy, gcopy_back):
    x.dispose()
del x, g5, gcopy
res
`)) as PyProxy
    ).toJs() as unknown[];
    return { out, live: ctx.stats().livePointers - base };
  });
  expect(r.out.slice(0, 5)).toEqual([
    "COPY_REQUIRED",
    "COPY_REQUIRED",
    "COPY_REQUIRED",
    "COPY_REQUIRED",
    "COPY_REQUIRED",
  ]);
  expect(r.out.slice(5)).toEqual([true, [1, -2, 3], true, true, [1, -2, 3]]);
  expect(r.live).toBe(0);
});

test("GPU errors from Python are typed: unknown device, stale pointer", async ({ shared }) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx } = (window as unknown as GpuWindow).gpuTest.env();
    const ptr = await ctx.allocWebGPUChecked(16);
    const t = w.webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4] });
    py.globals.set("jt7", t);
    py.runPython("import webdlpack; p7 = webdlpack.from_js(jt7)");
    ctx.freeWebGPU(ptr); // freed behind Python's back
    const out = (
      (await py.runPythonAsync(`
res = []
for attempt in (lambda: webdlpack.empty((2,), device="webgpu:7"),
                lambda: webdlpack.from_dlpack(p7, device="cpu")):
    try:
        attempt()
        res.append("no error")
    except ValueError as e:
        res.append([type(e).__name__, e.code.name, e.field])
try:
    await webdlpack.to_cpu_async(p7)
    res.append("no error")
except BufferError as e:
    res.append([type(e).__name__, e.code.name, e.field])
p7.dispose()
del p7, jt7
res
`)) as PyProxy
    ).toJs() as unknown[][];
    t.dispose();
    return out;
  });
  expect(r[0]).toEqual(["WebDLPackDeviceError", "UNKNOWN_DEVICE", expect.any(String)]);
  expect(r[1]?.[1]).toBe("STALE_POINTER");
  expect(r[2]?.[1]).toBe("STALE_POINTER");
});

test("stream: None and -1 are accepted for WebGPU tensors (one queue, nothing waits), other values are typed errors", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, base } = (window as unknown as GpuWindow).gpuTest.env();
    py.runPython(`
import webdlpack
g11 = webdlpack.zeros((64,), "uint32", device="webgpu:0")
jg11 = webdlpack.to_js(g11)
`);
    const jg = py.globals.get("jg11") as import("../../js/src/index.js").Tensor;
    // JS writes through a shader; the consumer asks with stream=-1 / None and still sees the writes (queue order).
    w.gpuTest.dispatch(jg.gpuBuffer, 64, 0, "u32", "i * 3u + 1u");
    const out = (
      (await py.runPythonAsync(`
res = []
for stream in (None, -1):
    p = webdlpack.from_capsule(g11.__dlpack__(stream=stream, max_version=(1, 1)))
    res.append([p.data_ptr == g11.data_ptr, tuple(int(v) for v in p.__dlpack_device__())])
    p.dispose()
back = webdlpack.from_capsule(g11.__dlpack__(stream=-1, max_version=(1, 1), dl_device=(1, 0), copy=True))
res.append(back.tolist()[:4])
res.append(g11.to_device("cpu", stream=-1).tolist()[:4])
for attempt in (lambda: g11.__dlpack__(stream=0, max_version=(1, 1)),
                lambda: g11.__dlpack__(stream=1, max_version=(1, 1)),
                lambda: g11.__dlpack__(stream=True, max_version=(1, 1)),
                lambda: g11.to_device("webgpu:0", stream=2),
                lambda: g11.__dlpack__(stream=5, max_version=(1, 1), dl_device=(1, 0), copy=True)):
    try:
        attempt()
        res.append("no error")
    except ValueError as e:
        res.append([type(e).__name__, e.code.name, e.field, e.expected])
back.dispose(); g11.dispose()
del g11, back, p
res
`)) as PyProxy
    ).toJs() as unknown[];
    jg.dispose();
    py.runPython("del jg11");
    return { out, live: ctx.stats().livePointers - base };
  });
  expect(r.out.slice(0, 2)).toEqual([
    [true, [15, 0]],
    [true, [15, 0]],
  ]);
  expect(r.out[2]).toEqual([1, 4, 7, 10]);
  expect(r.out[3]).toEqual([1, 4, 7, 10]);
  const gpuErr = [
    "WebDLPackValueError",
    "INVALID_ARGUMENT",
    "stream",
    "None (the device queue) or -1 (no synchronization)",
  ];
  expect(r.out.slice(4, 8)).toEqual([gpuErr, gpuErr, gpuErr, gpuErr]);
  expect(r.out[8]).toEqual(["WebDLPackValueError", "INVALID_ARGUMENT", "stream", "None or -1 (no synchronization)"]); // the consumer's device: cpu
  expect(r.live).toBe(0);
});
