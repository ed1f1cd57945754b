/**
 * A context's tag is the top 4 bits of its GPU pointers (docs/gpu-pointers.md). setup() claims the first tag
 * no live context of the origin holds, through Web Locks; with tags 1..8 held by someone else the page gets
 * tag 9, so every pointer has bit 31 set — and JS, Python (Pyodide) and C (ctypes) all carry it unsigned.
 * A same-origin iframe is another realm, so another context, on the same thread: its pointers are refused
 * by the page's context and the reverse (the page ↔ Worker case: worker.spec.ts).
 */
import { test, expect, type Page } from "@playwright/test";
import type * as WDL from "../../js/src/index.js";
import type * as CLIB from "../../js/src/bridge/clib/index.js";

interface HarnessPage {
  webdlpack: typeof WDL & typeof CLIB;
  pyodide: CLIB.ClibPyodide & { runPython(code: string): unknown; runPythonAsync(code: string): Promise<unknown> };
  harnessReady: Promise<boolean>;
}

async function openHarness(page: Page): Promise<void> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  await page.goto("/tests/browser/harness.html");
  await page.waitForFunction(() => (window as unknown as { harnessReady?: unknown }).harnessReady !== undefined);
  await page.evaluate(() => (window as unknown as HarnessPage).harnessReady);
}

test("with tags 1..8 held elsewhere setup() takes tag 9: pointers with bit 31 set work through JS, Python and C", async ({
  page,
}) => {
  await openHarness(page);
  const r = await page.evaluate(async () => {
    const { webdlpack, pyodide } = window as unknown as HarnessPage;
    // The lock names are internal (not in the package's entries): read them from their module.
    const tags = (await import(
      "/js/dist/context/pointers/pointer-tags.js" as string
    )) as typeof import("../../js/src/context/pointers/pointer-tags.js");
    // Another context of this origin holds tags 1..8 (here: this page itself, for as long as it lives).
    for (let tag = 1; tag <= 8; tag++) {
      void navigator.locks.request(`${tags.POINTER_TAG_LOCK_PREFIX}${tag}`, () => new Promise(() => {}));
    }
    for (let i = 0; i < 100 && ((await navigator.locks.query()).held ?? []).length < 8; i++)
      await new Promise((ok) => setTimeout(ok, 5));
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const tag = ctx.stats().pointerTag;

    // JS
    const p = await ctx.allocWebGPU(64, { owner: "tag-test" });
    const js = { p, parts: webdlpack.describeGPUPointer(p), size: ctx.gpuPointerToBuffer(p).size, signedRefused: "" };
    try {
      ctx.gpuPointerToBuffer(p | 0);
    } catch (err) {
      js.signedRefused = (err as WDL.WebDLPackError).code;
    }
    ctx.freeWebGPU(p);

    // Python: upload, the same GPUBuffer in JS, readback, dispose → stale.
    const py = (await pyodide.runPythonAsync(`
import array, webdlpack
g = webdlpack.asarray(array.array("f", [1.0, 2.0, 3.0, 4.0]), device="webgpu:0")
back = (await webdlpack.to_cpu_async(g)).tolist()
[g.data_ptr, back]
`)) as { toJs(): [number, number[]] };
    const [pyPtr, pyBack] = py.toJs();
    const jg = pyodide.runPython("webdlpack.to_js(g)") as WDL.Tensor;
    const sameBuffer = jg.gpuBuffer === ctx.gpuPointerToBuffer(pyPtr);
    jg.dispose(); // JS lets go of its export, then Python of its tensor: the pointer is freed
    pyodide.runPython("g.dispose(); del g, back");
    let pyAfter = "no error";
    try {
      ctx.gpuPointerToBuffer(pyPtr);
    } catch (err) {
      pyAfter = (err as WDL.WebDLPackError).code;
    }

    // C through ctypes: alloc, JS sees it, free.
    const lib = await webdlpack.loadWebDLPackC(pyodide, { url: "/wasm/build/libwebdlpack.so" });
    let c: { ptr: number; info: number; freed: string };
    try {
      const cptr = pyodide.runPython(`
import ctypes
wdl = ctypes.CDLL("${lib.path}")
wdl.wdl_webgpu_alloc.restype = ctypes.c_uint32
wdl.wdl_webgpu_alloc.argtypes = [ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint32]
wdl.wdl_webgpu_free.argtypes = [ctypes.c_uint32]
cp = wdl.wdl_webgpu_alloc(0, 256, 0)
cp`) as number;
      const info = ctx.gpuPointerInfo(cptr).requestedSize;
      const rc = pyodide.runPython("wdl.wdl_webgpu_free(cp)") as number;
      let freed = "no error";
      try {
        ctx.gpuPointerToBuffer(cptr);
      } catch (err) {
        freed = (err as WDL.WebDLPackError).code;
      }
      c = { ptr: cptr, info, freed: `${rc} ${freed}` };
    } finally {
      lib.dispose();
    }
    return { tag, js, pyPtr, pyBack, sameBuffer, pyAfter, c, live: ctx.stats().livePointers };
  });
  expect(r.tag).toBe(9);
  expect(r.js.p).toBeGreaterThanOrEqual(2 ** 31);
  expect(r.js.parts.tag).toBe(9);
  expect(r.js.size).toBeGreaterThanOrEqual(64);
  expect(r.js.signedRefused).toBe("INVALID_POINTER"); // the same bits as a negative int32 are not a pointer
  expect(r.pyPtr).toBeGreaterThanOrEqual(2 ** 31);
  expect(r.pyBack).toEqual([1, 2, 3, 4]);
  expect(r.sameBuffer).toBe(true);
  expect(r.pyAfter).toBe("STALE_POINTER");
  expect(r.c.ptr).toBeGreaterThanOrEqual(2 ** 31);
  expect(r.c.info).toBe(256);
  expect(r.c.freed).toBe("0 STALE_POINTER");
  expect(r.live).toBe(0);

  // The kit's P3 check on this context, whose pointers all have bit 31 set: the check is not vacuous here.
  const u32 = await page.evaluate(async () => {
    const { runConformance } = await import("/js/dist/conformance/index.js" as string);
    const report = await runConformance({
      context: (window as unknown as HarnessPage).webdlpack.getContext(),
      only: ["pointer.u32"],
      print: false,
    });
    return report.results.map(
      (x: { check: string; status: string; detail: string }) => `${x.check} ${x.status} ${x.detail}`,
    );
  });
  expect(u32).toEqual(["pointer.u32 pass "]);
});

test("a same-origin iframe is another context on the same thread: page and iframe refuse each other's pointers, saying so", async ({
  page,
}) => {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  await page.goto("/tests/browser/harness.html?pyodide=0");
  await page.waitForFunction(() => (window as unknown as { harnessReady?: unknown }).harnessReady !== undefined);
  const r = await page.evaluate(async () => {
    const frame = document.createElement("iframe");
    frame.src = "/tests/browser/harness.html?pyodide=0";
    const loaded = new Promise((ok) => frame.addEventListener("load", ok, { once: true }));
    document.body.append(frame);
    await loaded;
    const inner = frame.contentWindow as unknown as HarnessPage;
    for (let i = 0; i < 200 && inner.harnessReady === undefined; i++) await new Promise((ok) => setTimeout(ok, 10));
    await inner.harnessReady;
    const pageCtx = (window as unknown as HarnessPage).webdlpack.getContext();
    const frameCtx = inner.webdlpack.getContext();
    await pageCtx.setup();
    await frameCtx.setup();
    const a = await pageCtx.allocWebGPU(64, { owner: "page" });
    const b = await frameCtx.allocWebGPU(64, { owner: "iframe" });
    const refusal = (ctx: WDL.WebDLPackContext, ptr: number): { code: string; message: string } => {
      try {
        ctx.gpuPointerToBuffer(ptr);
        return { code: "resolved", message: "" };
      } catch (err) {
        return { code: (err as WDL.WebDLPackError).code, message: (err as Error).message };
      }
    };
    const { describeGPUPointer } = (window as unknown as HarnessPage).webdlpack;
    const result = {
      distinct: pageCtx !== frameCtx,
      tags: [pageCtx.stats().pointerTag, frameCtx.stats().pointerTag],
      a: describeGPUPointer(a),
      b: describeGPUPointer(b),
      pageSeesFrame: refusal(pageCtx, b),
      frameSeesPage: refusal(frameCtx, a),
    };
    pageCtx.freeWebGPU(a);
    frameCtx.freeWebGPU(b);
    return result;
  });
  expect(r.distinct).toBe(true);
  expect(r.tags[0]).not.toBe(r.tags[1]);
  expect([r.a.slot, r.a.generation]).toEqual([r.b.slot, r.b.generation]); // only the tag tells them apart
  for (const seen of [r.pageSeesFrame, r.frameSeesPage]) {
    expect(seen.code).toBe("INVALID_POINTER");
    expect(seen.message).toMatch(/was issued by another webdlpack context/);
  }
});
