/**
 * registerGPUBuffer on real WebGPU (issue 12, item 5): a destroyed GPUBuffer, or one made by another GPUDevice
 * than the one registered under the deviceId, is refused — WebGPU says so asynchronously, after which every use
 * of the pointer throws INVALID_ARGUMENT naming the buffer — while a live buffer of the right device works.
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";

test("registerGPUBuffer refuses a destroyed buffer and another GPUDevice's buffer; a good one stays usable", async ({ jsPage }) => {
  const r = await jsPage.evaluate(async () => {
    const { setup } = (window as unknown as HarnessWindow).testkit;
    const { ctx, device } = await setup({});
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const other = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const destroyed = device.createBuffer({ size: 64, usage, label: "destroyed" });
    destroyed.destroy();
    const foreign = other.createBuffer({ size: 64, usage, label: "foreign" });
    const good = device.createBuffer({ size: 64, usage, label: "good" });
    const pDestroyed = ctx.registerGPUBuffer(destroyed);
    const pForeign = ctx.registerGPUBuffer(foreign);
    const pGood = ctx.registerGPUBuffer(good);
    await device.queue.onSubmittedWorkDone();
    await new Promise((res) => setTimeout(res, 50));        // the error scopes' verdicts arrive
    const use = (p: number): string => {
      try {
        return ctx.gpuPointerToBuffer(p) ? "usable" : "nothing";
      } catch (err) {
        const e = err as { code?: string; field?: string; message: string };
        return `${e.code} ${e.field} ${/destroyed or was made by another GPUDevice/.test(e.message)}`;
      }
    };
    const result = { destroyed: use(pDestroyed), foreign: use(pForeign), good: use(pGood) };
    for (const p of [pDestroyed, pForeign, pGood]) ctx.freeWebGPU(p);  // freeing a refused pointer still works
    foreign.destroy();
    other.destroy();
    good.destroy();
    return { ...result, live: ctx.stats().livePointers };
  });
  expect(r).toEqual({
    destroyed: "INVALID_ARGUMENT buffer true",
    foreign: "INVALID_ARGUMENT buffer true",
    good: "usable",
    live: 0,
  });
});
