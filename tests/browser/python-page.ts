/**
 * What the Python (Pyodide) browser specs share (not a spec itself): the shared page's globals as
 * types, and for the WebGPU specs (python-gpu-*.spec.ts) the page set-up with device 0, the Python
 * bridge and the `gpuTest` helpers.
 */
import type { Page } from "@playwright/test";
import type { PageTestkit } from "./fixtures.js";

type Webdlpack = typeof import("../../js/src/index.js");
type Context = ReturnType<Webdlpack["getContext"]>;

/** A Python object as JS sees it (a PyProxy). */
export type PyProxy = { toJs(opts?: object): unknown; destroy(): void };

/** The shared page's globals the Python specs use: Pyodide and webdlpack. */
export type PyWindow = {
  pyodide: {
    runPython(c: string): unknown;
    runPythonAsync(c: string): Promise<unknown>;
    globals: { get(n: string): unknown; set(n: string, v: unknown): void };
    _module: { HEAPU8: Uint8Array };
  };
  webdlpack: Webdlpack;
};

/** {@link PyWindow} with the testkit and the helpers {@link inGpuPage} installs. */
export type GpuWindow = PyWindow & {
  testkit: PageTestkit;
  gpuTest: {
    /**
     * What every test here starts from: the window, Pyodide, the context, device 0
     * and the live pointer count now (`base`, to check that a test leaks nothing).
     */
    env(): { w: GpuWindow; py: GpuWindow["pyodide"]; ctx: Context; device: GPUDevice; base: number };
    /** Run `x[i] = expr(i, x[i])` (WGSL, u32 or f32 element) over `count` elements at element offset `first`. */
    dispatch(buffer: GPUBuffer, count: number, first: number, wgslType: "f32" | "u32", expr: string): void;
    /** Bytes of a GPUBuffer, read with mapAsync (after all submitted work). */
    read(buffer: GPUBuffer, offset: number, size: number): Promise<Uint8Array>;
  };
};

/** Set up the page once: device 0, the Python bridge and the `gpuTest` helpers. */
async function ready(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const w = window as unknown as GpuWindow;
    await w.webdlpack.getContext().setup();
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    if (w.gpuTest) return;
    const device = w.webdlpack.getContext().getWebGPUDevice();
    w.gpuTest = {
      env() {
        const ctx = w.webdlpack.getContext();
        return { w, py: w.pyodide, ctx, device: ctx.getWebGPUDevice(), base: ctx.stats().livePointers };
      },
      dispatch(buffer, count, first, wgslType, expr) {
        const code = `
@group(0) @binding(0) var<storage, read_write> x: array<${wgslType}>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= ${count}u) { return; }
  let v = x[i + ${first}u];
  x[i + ${first}u] = ${expr};
}`;
        w.testkit.dispatch(device, code, { buffer }, Math.ceil(count / 64));
      },
      read: (buffer, offset, size) => w.testkit.readBuffer(device, buffer, offset, size),
    };
  });
}

/** {@link ready}, then run `body` in the page (it runs there: it can use only page globals). */
export async function inGpuPage<R>(page: Page, body: () => Promise<R>): Promise<R> {
  await ready(page);
  return page.evaluate(body);
}
