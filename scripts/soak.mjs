#!/usr/bin/env node
/**
 * Soak (`make soak`): in headless Chromium with WebGPU, Python in Pyodide and JS exchange tensors for a long
 * run — CPU round trips (Python → JS → Python → capsule) and GPU cycles (Python and JS allocate WebGPU tensors,
 * hand them across, free them) — then prints what was alive before and after: the wasm heap, Python's
 * malloc'd bytes in use, Python and JS exports, Python imports, the context's ledger, GPU pointers.
 * With a GPU memory budget (`--budget BYTES`, SOAK_BUDGET in make, default there 64 MiB) every batch of GPU
 * cycles also allocates and frees tensors of 1 to 24 MiB (size classes the bucket cache keeps: 300 MiB if nothing
 * made room), and the device's total (`ctx.memory()`, every owner) must stay under the budget throughout.
 * Exit code 1 if anything that must come back did not, or the budget was crossed or refused an allocation.
 *   node scripts/soak.mjs [--cpu N] [--gpu N] [--budget BYTES]  (defaults 100000, 10000, none; SOAK_* in make)
 */
import { chromium } from "@playwright/test";
import { browserSettings } from "./browser-settings.mjs";
import { startServer } from "./serve.mjs";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const cpuCycles = arg("--cpu", 100_000);
const gpuCycles = arg("--gpu", 10_000);
const budget = arg("--budget", 0) || null;

const server = await startServer({ quiet: true, port: Number(process.env.WEBDLPACK_PORT ?? 0) });
const browser = await chromium.launch(browserSettings.launchOptions());
let ok = false;
try {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (err) => problems.push(err.message));
  await page.goto(`${server.url}/tests/browser/harness.html`);
  await page.waitForFunction(() => window.harnessReady, null, { timeout: 120_000 });
  await page.evaluate(() => window.harnessReady);
  const t0 = performance.now();
  const r = await page.evaluate(
    async ({ cpuCycles, gpuCycles, budget }) => {
      const { webdlpack, pyodide: py } = window;
      const ctx = webdlpack.getContext();
      await ctx.setup(budget === null ? {} : { memoryBudget: budget });
      let sized = 0;
      let maxTotal = 0;
      const sizedGpu = (n) => {
        // Under a budget: tensors of 1..24 MiB in a stride, each freed into the bucket cache; the budget makes room.
        for (let i = 0; i < n; i++, sized++) ctx.freeWebGPU(ctx.allocWebGPU((((sized * 7) % 24) + 1) * 2 ** 20));
        maxTotal = Math.max(maxTotal, ctx.memory().totalBytes);
      };
      py.runPython(`
import array, ctypes, gc, sys, webdlpack
from webdlpack.api import debug as _debug

class _MallInfo(ctypes.Structure):  # emscripten's dlmalloc mallinfo(): uordblks = bytes in use
    _fields_ = [(n, ctypes.c_size_t) for n in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
soak_mallinfo = ctypes.CDLL(None).mallinfo
soak_mallinfo.restype = _MallInfo
soak_src = array.array("f", range(256))
soak_t = webdlpack.from_buffer(soak_src)

def soak_cpu(n):
    for _ in range(n):
        jt = webdlpack.to_js(soak_t)       # Python → JS (JS holds the struct)
        back = webdlpack.from_js(jt)       # JS → Python, same bytes
        back.dispose()
        jt.dispose()
        u = webdlpack.from_dlpack(soak_t)  # a capsule made and consumed
        u.dispose()

def soak_gpu(n):
    for _ in range(n):
        g = webdlpack.zeros((256,), "float32", device="webgpu:0")   # Python allocates a GPU pointer
        jg = webdlpack.to_js(g)                                    # JS gets the same GPUBuffer
        jg.dispose()
        g.dispose()
`);
      const snapshot = () => {
        const [blocks, exports, imports, unknownDeletes, pyGpuLive, made, gpuMade] = py
          .runPython(`
gc.collect()
[soak_mallinfo().uordblks, _debug.live_exports(), _debug.live_imports(), _debug.export_stats()["unknown_deletes"],
 _debug.gpu_stats()["live"], _debug.export_stats()["created"], _debug.gpu_stats()["allocated"]]`)
          .toJs();
        const stats = ctx.stats();
        return {
          heapBytes: py._module.HEAPU8.buffer.byteLength,
          mallocInUse: blocks,
          pythonExports: exports,
          pythonImports: imports,
          unknownDeletes,
          jsExports: webdlpack.liveExportCount(),
          ledgerEntries: stats.ledgerEntries,
          gpuPointers: stats.livePointers,
          gpuBytes: stats.liveBytes,
          pythonGpuPointers: pyGpuLive,
          pythonExportsMade: made,
          pythonGpuAllocations: gpuMade,
        };
      };
      const fromJs = py.globals.get("webdlpack").from_js;
      const jsGpu = async (n) => {
        for (let i = 0; i < n; i++) {
          const ptr = ctx.allocWebGPU(1024); // JS allocates a GPU pointer
          const t = webdlpack.Tensor.webgpu({
            pointer: ptr,
            deviceId: 0,
            shape: [256],
            dtype: "float32",
            onRelease: () => ctx.freeWebGPU(ptr),
          });
          const p = fromJs(t); // JS → Python, the same pointer
          p.dispose();
          p.destroy();
          t.dispose(); // the last holder: onRelease frees the pointer
        }
      };
      const soakCpu = py.globals.get("soak_cpu");
      const soakGpu = py.globals.get("soak_gpu");
      soakCpu(200);
      soakGpu(50);
      await jsGpu(50); // warm caches and pools before the baseline
      const before = snapshot();
      const t = performance.now();
      for (let done = 0; done < cpuCycles; done += 10_000) soakCpu(Math.min(10_000, cpuCycles - done));
      const cpuMs = performance.now() - t;
      const t2 = performance.now();
      for (let done = 0; done < gpuCycles; done += 1_000) {
        const n = Math.min(1_000, gpuCycles - done);
        soakGpu(n);
        await jsGpu(n);
        if (budget !== null) sizedGpu(24);
        await new Promise((res) => setTimeout(res, 0)); // let WebGPU's callbacks run
      }
      const gpuMs = performance.now() - t2;
      const after = snapshot();
      soakCpu.destroy();
      soakGpu.destroy();
      fromJs.destroy();
      const m = ctx.memory();
      const memory = {
        budget: m.budget,
        peakBytes: m.peakBytes,
        maxTotal,
        pressureEvents: m.pressureEvents,
        trimmedBytes: m.trimmedBytes,
        outOfMemoryErrors: m.outOfMemoryErrors,
        sizedTensors: sized,
        owners: m.owners.map((o) => `${o.owner} ${o.bytes}`).join(", "),
      };
      return { before, after, cpuMs, gpuMs, memory };
    },
    { cpuCycles, gpuCycles, budget },
  );
  const minutes = (performance.now() - t0) / 60000;
  console.log(
    `soak — Chromium ${browser.version()}: ${cpuCycles} CPU round trips (${(r.cpuMs / 1000).toFixed(1)} s), ` +
      `${gpuCycles} GPU cycles in Python + ${gpuCycles} in JS (${(r.gpuMs / 1000).toFixed(1)} s), ${minutes.toFixed(1)} min`,
  );
  console.log(`${"".padEnd(20)} ${"before".padStart(12)} ${"after".padStart(12)}`);
  for (const key of Object.keys(r.before)) {
    console.log(`${key.padEnd(20)} ${String(r.before[key]).padStart(12)} ${String(r.after[key]).padStart(12)}`);
  }
  const same = [
    "heapBytes",
    "pythonExports",
    "pythonImports",
    "unknownDeletes",
    "jsExports",
    "ledgerEntries",
    "gpuPointers",
    "gpuBytes",
    "pythonGpuPointers",
  ].filter((k) => r.before[k] !== r.after[k]);
  // malloc'd bytes may move by a few pages (free lists, Python's own caches); per-cycle leaks would be megabytes.
  const blocksGrew = Math.abs(r.after.mallocInUse - r.before.mallocInUse) >= 65536;
  const m = r.memory;
  console.log(
    `GPU memory (every owner on webgpu:0): budget ${m.budget ?? "none"}, peak ${m.peakBytes} B, ` +
      `largest total seen ${m.maxTotal} B; ${m.sizedTensors} tensors of 1-24 MiB; room made ${m.pressureEvents} times ` +
      `(${m.trimmedBytes} B given back), ${m.outOfMemoryErrors} OUT_OF_MEMORY; now: ${m.owners}`,
  );
  const overBudget = m.budget !== null && (m.peakBytes > m.budget || m.outOfMemoryErrors > 0);
  if (overBudget) problems.push(`the budget was crossed or refused an allocation`);
  ok = same.length === 0 && !blocksGrew && problems.length === 0;
  console.log(
    ok
      ? "OK: everything came back to where it started"
      : `FAIL: changed: ${[...same, ...(blocksGrew ? ["mallocInUse"] : [])].join(", ")} ${problems.join(" | ")}`,
  );
} finally {
  await browser.close();
  await server.close();
}
process.exit(ok ? 0 : 1);
