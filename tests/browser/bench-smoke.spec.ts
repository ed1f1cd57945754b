/** The browser the tests and benchmarks run in, and the benchmark page itself. */
import type { Page } from "@playwright/test";
import { test, expect } from "./fixtures.js";

/** The Python of the Pyodide the server gives pages (its lock file says it; `make test-matrix` serves each). */
async function servedPython(page: Page): Promise<string> {
  const lock = (await (await page.request.get("/node_modules/pyodide/pyodide-lock.json")).json()) as {
    info: { python: string };
  };
  return lock.info.python;
}

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
  expect(info.python).toBe(await servedPython(shared));
});

test("the benchmark page (bench/bench.html) measures every exchange direction against its copy, and the loop leaks nothing", async ({
  page,
}) => {
  await page.goto("/bench/bench.html");
  await page.waitForFunction(() => (window as unknown as { benchReady?: Promise<void> }).benchReady !== undefined);
  const r = await page.evaluate(async () => {
    type Row = { case: string; direction: string; kind: string; nbytes: number; median_us: number; min_us: number };
    type Loop = {
      direction: string;
      count: number;
      changed: string[];
      before: Record<string, number>;
      after: Record<string, number>;
    };
    const w = window as unknown as {
      benchReady: Promise<void>;
      benchInfo: { pyodide: string; python: string; adapter: string };
      benchmarks: { cpuExchange(o: object): Promise<Row[]>; exchangeLoop(o: object): Promise<Loop[]> };
    };
    await w.benchReady;
    const rows = await w.benchmarks.cpuExchange({ sizes: [1024], samples: 1, minMs: 1 });
    const loop = await w.benchmarks.exchangeLoop({ count: 50, nbytes: 1024, samples: 1, minMs: 1 });
    return { info: w.benchInfo, rows, loop };
  });
  expect(r.info.python).toBe(await servedPython(page));
  expect(r.info.adapter).toContain("swiftshader");
  const directions = ["py→js", "js→py", "py→js pull", "js→py push", "c→js", "js→c", "c→py", "py→c"];
  for (const d of directions) {
    // Each direction: exactly one webdlpack row and one copy row (its anchor), measured in the same round.
    expect(r.rows.filter((x) => x.direction === d && x.kind === "webdlpack")).toHaveLength(1);
    expect(r.rows.filter((x) => x.direction === d && x.kind === "copy")).toHaveLength(1);
  }
  expect(r.rows.filter((x) => x.direction === "ffi" && x.kind === "baseline")).toHaveLength(1);
  for (const row of r.rows) {
    expect(row.nbytes).toBe(1024);
    expect(row.median_us).toBeGreaterThan(0);
    expect(row.min_us).toBeLessThanOrEqual(row.median_us);
  }
  expect(r.loop.map((l) => l.direction).sort()).toEqual([...directions].sort());
  for (const l of r.loop) {
    expect(l.count).toBe(50);
    // Nothing the exchange made is left alive: heap size and every live count as before the loop.
    expect(l.changed).toEqual([]);
    expect(l.after.jsLiveExports).toBe(l.before.jsLiveExports);
    expect(l.after.pyUnknownDeletes).toBe(0);
  }
});
