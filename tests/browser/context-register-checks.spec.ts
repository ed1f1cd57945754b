/**
 * registerGPUBuffer on real WebGPU (issue 12, item 5; issue 21, item 1): a destroyed GPUBuffer, or one made by
 * another GPUDevice than the one registered under the deviceId, is refused — WebGPU says so asynchronously, after
 * which every use of the pointer throws DISPOSED (destroyed) or BAD_DEVICE (another device's) naming the
 * buffer — while a live buffer of the right device works.
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";

test("registerGPUBuffer refuses a destroyed buffer and another GPUDevice's buffer; a good one stays usable", async ({
  jsPage,
}) => {
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
    await new Promise((res) => setTimeout(res, 50)); // the error scopes' verdicts arrive
    const use = (p: number): string => {
      try {
        return ctx.gpuPointerToBuffer(p) ? "usable" : "nothing";
      } catch (err) {
        const e = err as { code?: string; field?: string; message: string };
        return `${e.code} ${e.field} ${/is destroyed|was made by another GPUDevice/.exec(e.message)?.[0]}`;
      }
    };
    const result = { destroyed: use(pDestroyed), foreign: use(pForeign), good: use(pGood) };
    for (const p of [pDestroyed, pForeign, pGood]) ctx.freeWebGPU(p); // freeing a refused pointer still works
    foreign.destroy();
    other.destroy();
    good.destroy();
    return { ...result, live: ctx.stats().livePointers };
  });
  expect(r).toEqual({
    destroyed: "DISPOSED buffer is destroyed",
    foreign: "BAD_DEVICE buffer was made by another GPUDevice",
    good: "usable",
    live: 0,
  });
});

test("the register check runs once per GPUBuffer and device: a verified buffer costs no GPU call, a refused one stays refused", async ({
  jsPage,
}) => {
  const r = await jsPage.evaluate(async () => {
    const { setup } = (window as unknown as HarnessWindow).testkit;
    const { ctx, device } = await setup({});
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const other = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const good = device.createBuffer({ size: 64, usage, label: "good" });
    const foreign = other.createBuffer({ size: 64, usage, label: "foreign" });
    let checks = 0; // zero-byte writeBuffers: the check's GPU call
    const write = GPUQueue.prototype.writeBuffer;
    GPUQueue.prototype.writeBuffer = function (this: GPUQueue, ...args: Parameters<GPUQueue["writeBuffer"]>) {
      if ((args[2] as ArrayBufferView).byteLength === 0) checks += 1;
      return write.apply(this, args);
    } as GPUQueue["writeBuffer"];
    const settle = async (): Promise<void> => {
      await device.queue.onSubmittedWorkDone();
      await new Promise((res) => setTimeout(res, 50));
    };
    const use = (p: number): string => {
      try {
        return ctx.gpuPointerToBuffer(p) ? "usable" : "nothing";
      } catch (err) {
        return (err as { code?: string }).code ?? "untyped";
      }
    };
    const seen: string[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        // the same buffers registered again and again
        const pGood = ctx.registerGPUBuffer(good);
        const pForeign = ctx.registerGPUBuffer(foreign);
        const pPending = round === 0 ? ctx.registerGPUBuffer(device.createBuffer({ size: 64, usage })) : null;
        await settle();
        seen.push(`${use(pGood)}/${use(pForeign)}`);
        ctx.freeWebGPU(pGood);
        ctx.freeWebGPU(pForeign);
        if (pPending !== null) ctx.freeWebGPU(pPending);
      }
      // Registered twice before the first verdict: the second shares the first check.
      const twice = device.createBuffer({ size: 64, usage });
      const before = checks;
      const p1 = ctx.registerGPUBuffer(twice);
      ctx.freeWebGPU(p1);
      const p2 = ctx.registerGPUBuffer(twice);
      await settle();
      seen.push(`${use(p2)} ${checks - before}`);
      ctx.freeWebGPU(p2);
      twice.destroy();
      // A buffer webdlpack destroyed itself (owned) is checked again when registered again.
      const owned = device.createBuffer({ size: 64, usage });
      const pOwned = ctx.registerGPUBuffer(owned, { owned: true });
      await settle();
      ctx.freeWebGPU(pOwned); // unpooled and owned: given back for destroy
      const afterOwned = checks;
      const again = ctx.registerGPUBuffer(owned);
      seen.push(`owned re-registered: ${checks - afterOwned} check`);
      ctx.freeWebGPU(again);
    } finally {
      GPUQueue.prototype.writeBuffer = write;
    }
    good.destroy();
    foreign.destroy();
    other.destroy();
    return { seen, checks, live: ctx.stats().livePointers };
  });
  expect(r).toEqual({
    seen: ["usable/BAD_DEVICE", "usable/BAD_DEVICE", "usable/BAD_DEVICE", "usable 1", "owned re-registered: 1 check"],
    checks: 6, // round 0: good, foreign, the pending one; then `twice` once; `owned` twice (before and after webdlpack destroyed it)
    live: 0,
  });
});
