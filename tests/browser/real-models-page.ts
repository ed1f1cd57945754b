/**
 * What the real-model specs share (not a spec itself): tests/browser/adapters.html opened and ready with
 * tfjs-converter (its import map names build/real-models' copy, loaded only here) and real-models.js, its
 * globals as types, and the page's console errors collected (every spec asserts there are none).
 */
import type { Page } from "@playwright/test";
import type { PyWindow } from "./python-page.js";

/** Any value of a framework the page loaded (the specs use their APIs structurally). */
type Any = any;

/** The page's globals: Pyodide + webdlpack (PyWindow), the frameworks, and tests/browser/real-models.js. */
export type RealModelsWindow = PyWindow & {
  tf: Any;
  tfconv: Any;
  ort: Any;
  WebGPUBackend: Any;
  adapters: Any;
  /** `model.predict(x)` (a page function, so the spec stays free of TF.js types). */
  tfjsPredict(model: Any, x: Any): Any;
  realModels: {
    picture(h: number, w: number): Int32Array;
    ocrInput(h: number, w: number): Float32Array;
    audioChunk(n: number, phase: number): Float32Array;
    bytes(path: string): Promise<Uint8Array>;
    movenetOwn(tf: Any, tfconv: Any, image: Int32Array): Promise<Float32Array>;
    ortOwnRuns(
      ort: Any,
      path: string,
      feeds: Record<string, [number[], number[]]>,
      runs: number,
      chain: Record<string, string>,
    ): Promise<Record<string, { dims: number[]; data: number[] }>[]>;
  };
};

/**
 * Open the page (with Pyodide unless `python` is false) and wait until it is ready; returns the list its
 * console errors go into.
 */
export async function openRealModelsPage(page: Page, python = true): Promise<string[]> {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`[page error] ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const text = msg.text();
    // ORT logs its own warnings (level W) through console.error; the browser's favicon request has no file.
    if (/\[W:onnxruntime:/.test(text) || msg.location().url.endsWith("/favicon.ico")) return;
    errors.push(text);
  });
  await page.goto(`/tests/browser/adapters.html?pyodide=${python ? 1 : 0}`);
  await page.waitForFunction(() => (window as unknown as { adaptersReady?: unknown }).adaptersReady !== undefined);
  await page.evaluate(async () => {
    const w = window as unknown as Record<string, unknown>;
    await w["adaptersReady"];
    w["tfconv"] = await import("@tensorflow/tfjs-converter" as string);
    w["realModels"] = ((await import("/tests/browser/real-models.js" as string)) as { realModels: unknown }).realModels;
    w["tfjsPredict"] = (model: { predict(x: unknown): unknown }, x: unknown) => model.predict(x);
  });
  return errors;
}
