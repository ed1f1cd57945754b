/**
 * How the Python (Pyodide) bridge gets onto a page and which Tensors it takes, in the real browser:
 * micropip installs the wheel from a local URL; a second copy of webdlpack's Tensors go to Python
 * through this copy's bridge, look-alikes and plain objects are refused saying why.
 */
import { test, expect } from "./fixtures.js";
import type { PyWindow } from "./python-page.js";

test("micropip installs the same wheel from a local URL", async ({ browser }) => {
  const page = await browser.newPage();
  await page.goto("/tests/browser/harness.html?webdlpack=0");
  await page.evaluate(() => (window as unknown as { harnessReady: Promise<boolean> }).harnessReady);
  const version = await page.evaluate(async () => {
    const w = window as unknown as PyWindow;
    // The micropip this Pyodide's lock names (the Makefile vendors each pinned Pyodide's).
    const lock = await (await fetch("/node_modules/pyodide/pyodide-lock.json")).json();
    await w.webdlpack.loadWebDLPack(w.pyodide as never, {
      installer: "micropip",
      micropipURL: `/build/vendor/${lock.packages.micropip.file_name}`,
    });
    return String(
      w.pyodide.runPython(
        "import webdlpack, micropip; webdlpack.__version__ + ' ' + str('webdlpack' in micropip.list())",
      ),
    );
  });
  await page.close();
  expect(version).toBe("0.1.0 True");
});

test("a Tensor of a second copy of webdlpack on the page (CPU and WebGPU) goes to Python through this copy's bridge; an unbranded look-alike and a plain object are refused, saying why", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as PyWindow & {
      testkit: { failure(fn: () => unknown): Promise<Record<string, unknown>> };
    };
    const py = w.pyodide;
    const bridge = await w.webdlpack.loadWebDLPack(py as never); // the harness's copy: the bundle
    // A second copy: the ES module tree is another module instance, with its own Tensor class.
    const other = (await import("/js/dist/index.js" as string)) as typeof import("../../js/src/index.js");
    const ctx = other.getContext(); // the one shared context
    await ctx.setup();
    const cpu = other.Tensor.fromTypedArray(new Float32Array([1, 2, 3, 4]));
    const ptr = await ctx.allocWebGPUChecked(16);
    ctx.upload(ptr, new Float32Array([5, 6, 7, 8]));
    const gpu = other.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [4],
      onRelease: () => ctx.freeWebGPU(ptr),
    });
    const distinctClasses = other.Tensor !== w.webdlpack.Tensor && !(cpu instanceof w.webdlpack.Tensor);
    py.globals.set("other_cpu", cpu); // the JS object itself, for is_js_tensor
    const isJsTensor = (
      (await py.runPythonAsync(
        "import webdlpack\nout = [webdlpack.is_js_tensor(other_cpu), webdlpack.is_js_tensor({})]\ndel other_cpu\nout",
      )) as { toJs(): unknown }
    ).toJs();
    py.globals.set("a", bridge.toPython(cpu));
    py.globals.set("g", bridge.toPython(gpu));
    const values = (
      (await py.runPythonAsync(
        "import webdlpack\nc = await webdlpack.to_cpu_async(g)\nout = (a.tolist(), c.tolist())\nfor x in (c, g, a): x.dispose()\ndel a, g, c\nout",
      )) as { toJs(): unknown }
    ).toJs();
    cpu.dispose();
    gpu.dispose();
    const oldCopy = { dtype: {}, device: {}, shape: [4], toManaged: () => 0, dispose: () => undefined };
    return {
      distinctClasses,
      isJsTensor,
      values,
      oldCopy: await w.testkit.failure(() => bridge.toPython(oldCopy as never)),
      plain: await w.testkit.failure(() => bridge.toPython({ x: 1 } as never)),
      live: ctx.stats().livePointers,
    };
  });
  expect(r.distinctClasses).toBe(true);
  expect(r.isJsTensor).toEqual([true, false]);
  expect(r.values).toEqual([
    [1, 2, 3, 4],
    [5, 6, 7, 8],
  ]);
  expect(r.oldCopy.code).toBe("INVALID_ARGUMENT");
  expect(r.oldCopy.message).toContain("another copy of webdlpack, too old");
  expect(r.oldCopy.message).toContain("load one copy of webdlpack");
  expect(r.plain.code).toBe("INVALID_ARGUMENT");
  expect(r.plain.message).toContain("take a webdlpack Tensor or a TypedArray");
  expect(r.plain.value).not.toBe("[object Object]");
  expect(r.live).toBe(0);
});
