/**
 * Browser test fixtures.
 *
 * `shared`: one page per worker with webdlpack and Pyodide loaded from local
 * files; tests reuse it so Pyodide starts once (about 2 s), not per test.
 * `jsPage`: a fresh page with webdlpack only, for tests that must not disturb
 * the shared page (device destroy, two library copies).
 * `frameworksTest`: `test` whose `page` is frameworks.html, ready (ORT-web, TF.js,
 * Transformers.js, LiteRT.js, tvmjs).
 */
import { test as base, expect, type BrowserContext, type Page } from "@playwright/test";
import type * as WDL from "../../js/src/index.js";

async function openHarness(page: Page, query: string): Promise<Page> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  await page.goto(`/tests/browser/harness.html${query}`);
  await page.waitForFunction(
    () => (window as unknown as { harnessReady?: Promise<boolean> }).harnessReady !== undefined,
  );
  await page.evaluate(() => (window as unknown as { harnessReady: Promise<boolean> }).harnessReady);
  return page;
}

/**
 * Open `path` in `page` and wait for the page's global promise `readyName`; page
 * errors and console errors are logged (except lines matching `quiet`).
 */
async function openReadyPage(page: Page, path: string, readyName: string, quiet?: RegExp): Promise<void> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !(quiet?.test(msg.text()) ?? false)) console.log(`[console error] ${msg.text()}`);
  });
  await page.goto(path);
  await page.waitForFunction((name) => (window as unknown as Record<string, unknown>)[name] !== undefined, readyName);
  await page.evaluate((name) => (window as unknown as Record<string, Promise<boolean>>)[name], readyName);
}

/**
 * Open tests/browser/adapters.html (webdlpack, ONNX Runtime Web, TF.js; `?pyodide=1`
 * adds Pyodide) in `page` and wait until it is ready; page errors and console
 * errors are logged.
 */
export async function openAdaptersPage(page: Page, query = ""): Promise<void> {
  await openReadyPage(page, `/tests/browser/adapters.html${query}`, "adaptersReady");
}

/**
 * Console errors that are third-party warnings, known by what they are (never by the machine they appear on):
 * LiteRT.js's INFO/WARNING lines, and ONNX Runtime's warning-severity log lines ("[W:onnxruntime:…"), e.g.
 * 1.23's "Unknown CPU vendor" on a CPU its cpuinfo does not know; both print them through console.error.
 */
export const THIRD_PARTY_WARNINGS = /^(INFO|WARNING): |\[W:onnxruntime:/;

/**
 * Open tests/browser/frameworks.html (webdlpack, ORT-web 1.30, TF.js, Transformers.js with its own
 * ORT 1.31-dev, LiteRT.js; `?pyodide=1` adds Pyodide) and wait until it is ready. Third-party warnings
 * logged as console errors ({@link THIRD_PARTY_WARNINGS}) are not repeated.
 */
export async function openFrameworksPage(page: Page, query = ""): Promise<void> {
  await openReadyPage(page, `/tests/browser/frameworks.html${query}`, "frameworksReady", THIRD_PARTY_WARNINGS);
}

/**
 * From now on count the bytes `page` maps for reading (GPU → CPU) in
 * `window.gpuReadBytes` and the calls in `window.gpuReadCalls`, by wrapping
 * GPUBuffer.prototype.mapAsync. Hand-offs must add nothing; only read backs do.
 */
export async function countGpuReads(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { gpuReadBytes: number; gpuReadCalls: number };
    w.gpuReadBytes = 0;
    w.gpuReadCalls = 0;
    const original = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (this: GPUBuffer, mode: number, offset?: number, size?: number) {
      if ((mode & GPUMapMode.READ) !== 0) {
        w.gpuReadCalls += 1;
        w.gpuReadBytes += size ?? this.size - (offset ?? 0);
      }
      return original.call(this, mode, offset, size);
    };
  });
}

/**
 * `test` whose `page` is a new page in one browser context per worker (closed after the test), so the pages of a
 * worker share the HTTP cache and V8's code cache: Pyodide, ORT's and LiteRT's wasm and the frameworks' modules
 * are compiled once per worker, not per test (scripts/serve.mjs answers `no-cache` with an ETag: every load still
 * asks the server whether the file changed). For specs whose tests leave nothing in the context that another test
 * could see (no service worker, no storage, no context-wide listeners or routes); every other spec keeps
 * Playwright's fresh context per test.
 */
export const cachedTest = base.extend<object, { workerContext: BrowserContext }>({
  workerContext: [
    async ({ browser }, use, workerInfo) => {
      const context = await browser.newContext({ baseURL: workerInfo.project.use.baseURL });
      await use(context);
      await context.close();
    },
    { scope: "worker" },
  ],
  page: async ({ workerContext }, use) => {
    const page = await workerContext.newPage();
    await use(page);
    await page.close();
  },
});

export const test = cachedTest.extend<{ jsPage: Page }, { shared: Page }>({
  shared: [
    async ({ browser }, use) => {
      const page = await browser.newPage();
      await use(await openHarness(page, ""));
      await page.close();
    },
    { scope: "worker", timeout: 120_000 },
  ],
  jsPage: async ({ page }, use) => {
    await use(await openHarness(page, "?pyodide=0"));
  },
});

/** `test` whose `page` is tests/browser/frameworks.html, opened and ready ({@link openFrameworksPage}). */
export const frameworksTest = cachedTest.extend({
  page: async ({ page }, use) => {
    await openFrameworksPage(page);
    await use(page);
  },
});

export { expect };

/** The globals of harness.html that page-side test code uses. */
export interface HarnessWindow {
  /** The webdlpack bundle. */
  webdlpack: typeof WDL;
  /** Shared in-page helpers. */
  testkit: PageTestkit;
}

/**
 * `window.testkit` (tests/browser/testkit.js, loaded by harness.html): helpers
 * for code inside `page.evaluate`, which can not call Node-side functions.
 */
export interface PageTestkit {
  /** `setup(cfg)` on the page's context; returns it and its device 0. */
  setup(cfg?: WDL.SetupConfig): Promise<{ ctx: WDL.WebDLPackContext; device: GPUDevice }>;
  /** The `code` of the error `fn` throws: `ok` ("no error") if it returns, `String(err)` for an untyped error. */
  codeOf(fn: () => unknown, ok?: string): string;
  /** Run `window.gc()` every 10 ms, at most 30 times, until `ctx.leaks()` reports a leak. */
  collectLeaks(ctx: WDL.WebDLPackContext): Promise<void>;
  /** `{code, message, field, value}` of what `fn` throws or rejects with; code "no error" on success. */
  failure(fn: () => unknown): Promise<{ code: string; message: string; field: string; value: unknown }>;
  /** Bytes `[offset, offset + size)` of `buffer` after all submitted work (staging copy + mapAsync). */
  readBuffer(device: GPUDevice, buffer: GPUBuffer, offset: number, size: number): Promise<Uint8Array>;
  /** A float32 WebGPU tensor on `ctx`'s device 0 holding `values` (its pointer freed when released); READ_ONLY on request. */
  gpuTensor(
    ctx: WDL.WebDLPackContext,
    values: ArrayLike<number>,
    shape: number[],
    options?: { readOnly?: boolean },
  ): Promise<WDL.Tensor>;
  /**
   * Submit one compute pass of `pipeline` (or of WGSL source with entry point `main`) with `resource`
   * at group 0, binding 0, over `workgroups` workgroups; returns the pipeline.
   */
  dispatch(
    device: GPUDevice,
    pipeline: GPUComputePipeline | string,
    resource: GPUBufferBinding,
    workgroups: number,
  ): GPUComputePipeline;
}
