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
