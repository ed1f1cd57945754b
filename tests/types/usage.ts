/**
 * What users write, type-checked against the PUBLISHED declarations
 * (`webdlpack`, `webdlpack/adapters` and `webdlpack/testing` resolve through package.json
 * "exports" to js/dist/*.d.ts). Lines marked @ts-expect-error must be refused.
 * Checked by tests/js/published-types.test.ts; never run.
 */
import {
  ErrorCode,
  Tensor,
  WebDLPackError,
  getContext,
  loadWebDLPack,
  loadWebDLPackC,
  type GPUPointer,
  type WebDLPackPython,
} from "webdlpack";
import {
  bindLiteRtToContext,
  tensorFromOrt,
  tensorToTfjs,
  transformersOptions,
  type LiteRtBinding,
  type LiteRtLike,
} from "webdlpack/adapters";
import { createTestHost, type TestHost } from "webdlpack/testing";
import { formatReport, runConformance, type ConformanceReport } from "webdlpack/conformance";

export async function usage(pyodide: Parameters<typeof loadWebDLPack>[0]): Promise<void> {
  const ctx = getContext();
  await ctx.setup({ cacheMode: "bucket" });
  const device: GPUDevice = ctx.getWebGPUDevice(0, { owner: "myframework" });
  const ptr: GPUPointer = ctx.allocWebGPU(1024, { owner: "myframework" });
  const checked: GPUPointer = await ctx.allocWebGPUChecked(1024, { owner: "myframework" });
  ctx.freeWebGPU(checked);
  const buffer: GPUBuffer = ctx.gpuPointerToBuffer(ptr);
  device.queue.writeBuffer(buffer, 0, new Float32Array(4));
  const t = Tensor.webgpu({
    pointer: ptr,
    deviceId: 0,
    dtype: "float32",
    shape: [256],
    owner: "myframework",
    onRelease: () => ctx.freeWebGPU(ptr),
  });
  const py: WebDLPackPython = await loadWebDLPack(pyodide);
  const proxy: unknown = t.toPython();
  const back: Tensor = py.fromPython(proxy);
  const cpu = Tensor.fromTypedArray(new Float32Array([1, 2, 3]));
  const view = cpu.view;
  const n: number = view.length + cpu.nbytes + cpu.shape.length;
  await ctx.scope(async () => ctx.allocWebGPU(n));
  try {
    ctx.freeWebGPU(ptr);
  } catch (e) {
    if (e instanceof WebDLPackError && e.code === "DOUBLE_FREE")
      console.log(e.field, e.value, e.expected, ErrorCode.DOUBLE_FREE);
  }
  const host: TestHost = createTestHost(1, 4);
  Tensor.fromManaged(host, cpu.toManaged(host)).dispose();
  const c = await loadWebDLPackC(pyodide);
  void c;
  void tensorFromOrt;
  void tensorToTfjs;
  back.dispose();
  t[Symbol.dispose](); // the dispose method needs no esnext.disposable lib (tsconfig.es2022-dom.json)
  const report: ConformanceReport = await runConformance({ getContext, print: false, only: ["pointer."] });
  const text: string = formatReport(report);
  void text;

  // @ts-expect-error: a GPU pointer is a number, not a GPUBuffer
  ctx.freeWebGPU(buffer);
  // @ts-expect-error: unknown cache mode
  ctx.setCacheMode("lru");
  // @ts-expect-error: shape must be numbers
  Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: ["4"] });
  // @ts-expect-error: the test host is not in the main entry
  void (await import("webdlpack")).createTestHost;
  // @ts-expect-error: allocWebGPU returns the pointer itself, not a Promise (RFC API, protocol 1.2)
  void ctx.allocWebGPU(64).then;
  // @ts-expect-error: toPython's copy option is a boolean
  t.toPython({ copy: "no" });
}

/** LiteRT.js and Transformers.js through the adapters' structural types (no dependency on either package). */
export async function frameworks(litert: LiteRtLike): Promise<void> {
  const ctx = getContext();
  const lr: LiteRtBinding = await bindLiteRtToContext(litert, ctx);
  const device: GPUDevice | null = lr.environment.webGpuDevice;
  const options = transformersOptions(ctx, { dtype: "fp32" });
  void options.session_options?.executionProviders;
  void device;
  // @ts-expect-error: copy is "auto" | "never" | "always"
  void lr.tensorToLiteRt(Tensor.fromTypedArray(new Float32Array(4)), { copy: "sometimes" });
}
