/** The browser the tests and benchmarks run in, and the benchmark page itself. */
import { test, expect } from "./fixtures.js";

test("the bench gives real WebGPU (SwiftShader) and Pyodide from local files", async ({ shared }) => {
  const info = await shared.evaluate(async () => {
    const gpu = navigator.gpu;
    if (!gpu) return { gpu: false };
    const adapter = await gpu.requestAdapter();
    const w = window as unknown as { pyodide: { runPython(code: string): unknown } };
    return {
      gpu: true,
      architecture: adapter?.info.architecture,
      python: String(w.pyodide.runPython("import sys; sys.version.split()[0]")),
    };
  });
  // A missing navigator.gpu fails the suite; it is never skipped.
  expect(info.gpu).toBe(true);
  expect(info.architecture).toBe("swiftshader");
  expect(info.python).toMatch(/^3\.14\./);
});

test("the benchmark page (bench/bench.html) loads and measures every CPU exchange case", async ({ page }) => {
  await page.goto("/bench/bench.html");
  await page.waitForFunction(() => (window as unknown as { benchReady?: Promise<void> }).benchReady !== undefined);
  const r = await page.evaluate(async () => {
    const w = window as unknown as {
      benchReady: Promise<void>;
      benchInfo: { pyodide: string; python: string; adapter: string };
      benchmarks: {
        cpuExchange(o: object): Promise<{ case: string; nbytes: number; median_us: number; min_us: number }[]>;
        exchangeLoop(o: object): Promise<{ count: number; live_exports_left: number }>;
      };
    };
    await w.benchReady;
    const rows = await w.benchmarks.cpuExchange({ sizes: [1024], samples: 1, minMs: 1 });
    const loop = await w.benchmarks.exchangeLoop({ count: 50, nbytes: 1024 });
    return { info: w.benchInfo, rows, loop };
  });
  expect(r.info.python).toMatch(/^3\.14\./);
  expect(r.info.adapter).toContain("swiftshader");
  expect(r.rows.map((x) => x.case).sort()).toEqual([
    "js→py pyodide to_py (copy)", "js→py webdlpack.from_js", "py→js pyodide getBuffer", "py→js pyodide toJs (copy)", "py→js webdlpack.to_js",
  ]);
  for (const row of r.rows) {
    expect(row.nbytes).toBe(1024);
    expect(row.median_us).toBeGreaterThan(0);
    expect(row.min_us).toBeLessThanOrEqual(row.median_us);
  }
  expect(r.loop).toMatchObject({ count: 50, live_exports_left: 0 });
});
