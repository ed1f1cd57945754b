/**
 * WebGPU tensors between Python (Pyodide) and JS in the real browser: Python uploads, a JS compute
 * shader works on the same GPUBuffer, Python reads back synchronously through JSPI (inside
 * runPythonAsync) and asynchronously (to_cpu_async), in queue order after JS's submits; a JS-made
 * GPU tensor goes to Python and back; pointers freed exactly once.
 */
import { test, expect } from "./fixtures.js";
import { inGpuPage, type GpuWindow, type PyProxy } from "./python-page.js";

test("Python uploads array.array → JS shader doubles it in place on the same GPUBuffer → Python reads back sync (JSPI) and async", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, base } = (window as unknown as GpuWindow).gpuTest.env();
    const head = (
      py.runPython(`
import webdlpack, array
from webdlpack.api import debug as _debug
gpu0 = _debug.gpu_stats()
src1 = array.array("f", [float(i) for i in range(100)])
g1 = webdlpack.asarray(src1, device="webgpu:0")
src1[0] = -1.0   # the upload took the bytes: later host writes do not reach the GPU
jt1 = webdlpack.to_js(g1)
[tuple(int(v) for v in g1.__dlpack_device__()), g1.data_ptr, g1.byte_offset, g1.flags.is_copied, str(g1.device)]
`) as PyProxy
    ).toJs() as [number[], number, number, boolean, string];
    const jt = py.globals.get("jt1") as import("../../js/src/index.js").Tensor;
    const ptr = head[1];
    const info = ctx.gpuPointerInfo(ptr);
    const sameBuffer = jt.gpuBuffer === ctx.gpuPointerToBuffer(ptr);
    const jsSeesPointer = jt.data === ptr && jt.storage === "webgpu";
    w.gpuTest.dispatch(jt.gpuBuffer, 100, 0, "f32", "v * 2.0 + 1.0");
    // Sync: from_dlpack(device="cpu") and __dlpack__(dl_device=(1, 0)) inside runPythonAsync block through JSPI.
    const sync = (
      (await py.runPythonAsync(`
c1 = webdlpack.from_dlpack(g1, device="cpu")
cap = g1.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=True)
c2 = webdlpack.from_capsule(cap)
c3 = g1.to_device("cpu")
[c1.tolist(), c1.flags.is_copied, str(c1.device), c2.tolist() == c1.tolist(), c2.flags.is_copied, c3.tolist() == c1.tolist()]
`)) as PyProxy
    ).toJs() as [number[], boolean, string, boolean, boolean, boolean];
    // Async: await to_cpu_async.
    const asyncVals = (
      (await py.runPythonAsync(`
a1 = await webdlpack.to_cpu_async(g1)
a1.tolist()
`)) as PyProxy
    ).toJs() as number[];
    // Releases: Python drops g1 first; the JS export still holds the pointer.
    py.runPython("g1.dispose(); del g1; c1.dispose(); c2.dispose(); c3.dispose(); a1.dispose(); del cap");
    const liveWhileJsHolds = ctx.stats().livePointers - base;
    jt.dispose();
    const liveAfter = ctx.stats().livePointers - base;
    const staleCode = w.testkit.codeOf(() => ctx.gpuPointerInfo(ptr));
    const stats = (
      py.runPython(`
s = _debug.gpu_stats()
[s["allocated"] - gpu0["allocated"], s["freed"] - gpu0["freed"], s["free_errors"]]
`) as PyProxy
    ).toJs() as number[];
    py.runPython("del jt1");
    return {
      head,
      owner: info.owner,
      requested: info.requestedSize,
      sameBuffer,
      jsSeesPointer,
      sync,
      asyncVals,
      liveWhileJsHolds,
      liveAfter,
      staleCode,
      stats,
    };
  });
  const expected = Array.from({ length: 100 }, (_, i) => i * 2 + 1);
  expect(r.head[0]).toEqual([15, 0]);
  expect(r.head[1]).toBeGreaterThan(0);
  expect(r.head.slice(2)).toEqual([0, true, "webgpu:0"]);
  expect(r.owner).toBe("python");
  expect(r.requested).toBeGreaterThanOrEqual(400);
  expect(r.sameBuffer).toBe(true);
  expect(r.jsSeesPointer).toBe(true);
  expect(r.sync[0]).toEqual(expected);
  expect(r.sync.slice(1)).toEqual([true, "cpu", true, true, true]);
  expect(r.asyncVals).toEqual(expected);
  expect(r.liveWhileJsHolds).toBe(1);
  expect(r.liveAfter).toBe(0);
  expect(r.staleCode).toBe("STALE_POINTER");
  expect(r.stats).toEqual([1, 1, 0]);
});

test("ordering: JS submits a shader that writes a tensor, Python reads it at once and sees the new values", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py } = (window as unknown as GpuWindow).gpuTest.env();
    py.runPython(`
import webdlpack
z3 = webdlpack.zeros((256,), "uint32", device="webgpu:0")
jz3 = webdlpack.to_js(z3)
`);
    const zeros = (
      (await py.runPythonAsync("webdlpack.from_dlpack(z3, device='cpu').tolist()")) as PyProxy
    ).toJs() as number[];
    const jz = py.globals.get("jz3") as import("../../js/src/index.js").Tensor;
    const rounds: boolean[] = [];
    for (let k = 1; k <= 3; k++) {
      // No await between the submit and Python's read: only queue order makes this right.
      w.gpuTest.dispatch(jz.gpuBuffer, 256, 0, "u32", `i * ${k}u + 7u`);
      const sync = (
        (await py.runPythonAsync("webdlpack.from_dlpack(z3, device='cpu').tolist()")) as PyProxy
      ).toJs() as number[];
      w.gpuTest.dispatch(jz.gpuBuffer, 256, 0, "u32", "v + 1u");
      const asyncVals = (
        (await py.runPythonAsync("(await webdlpack.to_cpu_async(z3)).tolist()")) as PyProxy
      ).toJs() as number[];
      rounds.push(sync.every((v, i) => v === i * k + 7) && asyncVals.every((v, i) => v === i * k + 8));
    }
    jz.dispose();
    py.runPython("z3.dispose(); del z3, jz3");
    return { zeros: zeros.every((v) => v === 0) && zeros.length === 256, rounds };
  });
  expect(r.zeros).toBe(true);
  expect(r.rounds).toEqual([true, true, true]);
});

test("a JS-made GPU tensor → Python (same pointer as data_ptr, byte_offset kept) → freed exactly once when the last owner lets go", async ({
  shared,
}) => {
  const r = await inGpuPage(shared, async () => {
    const { w, py, ctx, device, base } = (window as unknown as GpuWindow).gpuTest.env();
    const ptr = await ctx.allocWebGPUChecked(64);
    device.queue.writeBuffer(
      ctx.gpuPointerToBuffer(ptr),
      0,
      new Float32Array(Array.from({ length: 16 }, (_, i) => i + 0.5)),
    );
    let released = 0;
    const t = w.webdlpack.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [2, 3],
      byteOffset: 16,
      onRelease: () => {
        released++;
        ctx.freeWebGPU(ptr);
      },
    });
    py.globals.set("jt4", t);
    const seen = (
      py.runPython(`
import webdlpack
p4 = webdlpack.from_js(jt4)
[p4.data_ptr, p4.byte_offset, tuple(int(v) for v in p4.__dlpack_device__()), p4.shape, p4.flags.is_copied]
`) as PyProxy
    ).toJs() as [number, number, number[], number[], boolean];
    t.dispose(); // Python's import alone holds the pointer now
    const afterJsDispose = { released, live: ctx.stats().livePointers - base };
    const values = (
      (await py.runPythonAsync("webdlpack.from_dlpack(p4, device='cpu').tolist()")) as PyProxy
    ).toJs() as number[][];
    // Python → JS again: the same GPUBuffer object.
    py.runPython("jp4 = webdlpack.to_js(p4)");
    const jp = py.globals.get("jp4") as import("../../js/src/index.js").Tensor;
    const sameBuffer = jp.gpuBuffer === ctx.gpuPointerToBuffer(ptr) && jp.byteOffset === 16;
    py.runPython("p4.dispose(); del p4");
    const afterPython = released;
    jp.dispose();
    py.runPython("del jp4, jt4");
    const staleCode = w.testkit.codeOf(() => ctx.gpuPointerInfo(ptr));
    return {
      ptr,
      seen,
      afterJsDispose,
      values,
      sameBuffer,
      afterPython,
      released,
      live: ctx.stats().livePointers - base,
      staleCode,
    };
  });
  expect(r.seen[0]).toBe(r.ptr);
  expect(r.seen.slice(1)).toEqual([16, [15, 0], [2, 3], false]);
  expect(r.afterJsDispose).toEqual({ released: 0, live: 1 });
  expect(r.values).toEqual([
    [4.5, 5.5, 6.5],
    [7.5, 8.5, 9.5],
  ]);
  expect(r.sameBuffer).toBe(true);
  expect(r.afterPython).toBe(0); // the JS export of Python's tensor still holds it
  expect(r.released).toBe(1);
  expect(r.live).toBe(0);
  expect(r.staleCode).toBe("STALE_POINTER");
});
