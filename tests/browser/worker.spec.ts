/**
 * The whole stack inside a dedicated module Worker (tests/browser/worker.html + worker-stack.worker.js), and what
 * crosses between the page and the worker: CPU tensors (transfer, copy, shared — the shared path on a page served
 * with COOP/COEP under /__isolated/), never GPU pointers (each context refuses another context's pointers).
 */
import { test, expect, type Page } from "@playwright/test";
import type * as WDL from "../../js/src/index.js";

/** The page's globals (worker.html). */
interface WorkerPage {
  webdlpack: typeof WDL;
  workerReady: Promise<boolean>;
  workerCall(op: string, args?: object, transfer?: Transferable[]): Promise<unknown>;
}

interface Loaded {
  inWorker: boolean;
  crossOriginIsolated: boolean;
  deviceInfo: WDL.DeviceInfo;
  adapterFeatures: string[];
  python: string;
  ms: Record<string, number>;
}

async function openWorkerPage(page: Page, path = "/tests/browser/worker.html"): Promise<Loaded> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  page.on("console", (msg) => { if (msg.type() === "error") console.log(`[console error] ${msg.text()}`); });
  await page.goto(path);
  await page.waitForFunction(() => (window as unknown as { workerReady?: unknown }).workerReady !== undefined);
  await page.evaluate(() => (window as unknown as WorkerPage).workerReady);
  return page.evaluate(() => (window as unknown as WorkerPage).workerCall("load")) as Promise<Loaded>;
}

test("Pyodide, webdlpack, ORT-web and TF.js in one Worker: setup, Python ⇄ JS, ORT → TF.js on the worker's device, one readback", async ({ page }) => {
  const loaded = await openWorkerPage(page);
  expect(loaded.inWorker).toBe(true);
  expect(loaded.python).toMatch(/^3\.\d+/);
  expect(loaded.deviceInfo.id).toBe(0);
  expect(loaded.deviceInfo.adapterInfo?.architecture).toBe("swiftshader");
  const r = await page.evaluate(() => (window as unknown as WorkerPage).workerCall("exchange")) as
    { steps: Record<string, number>; checks: Record<string, unknown> };
  expect(r.checks).toMatchObject({
    pythonToJsSameHeap: true, pythonToJsValues: true, jsToPythonValues: [1.5, -2, 3.25],
    ortInputSameBuffer: true, ortOutputSameBuffer: true, tfjsInputSameBuffer: true,
    gpuReadBytesBeforeReadback: 0, leftoverPointers: 0, leftoverTfjsTensors: 0, pythonLiveExports: 0,
  });
  expect(r.checks["gpuReadBytes"]).toBe(r.checks["nbytes"]); // the one readback, nothing else left the GPU
  expect(r.checks["maxError"] as number).toBeLessThan(1e-5);
  console.log(`worker load (ms): ${JSON.stringify(loaded.ms, (_, v) => (typeof v === "number" ? Math.round(v * 10) / 10 : v))}`);
  console.log(`worker steps (ms): ${JSON.stringify(r.steps, (_, v) => (typeof v === "number" ? Math.round(v * 100) / 100 : v))}`);
});
