/**
 * Device loss: destroying device 0 marks it lost, its pointers fail with
 * DEVICE_LOST, listeners hear it, and setup() again gives a working device 0.
 */
import { test, expect } from "./fixtures.js";
import type * as WDL from "../../js/src/index.js";

type Lib = typeof WDL;

test("device destroy → lost → DEVICE_LOST → setup again → working device 0 and new allocations", async ({ jsPage }) => {
  const result = await jsPage.evaluate(async () => {
    const { getContext } = (window as unknown as { webdlpack: Lib }).webdlpack;
    const ctx = getContext();
    const failure = (fn: () => unknown) => {
      try {
        fn();
        return { code: "no error", message: "" };
      } catch (e) {
        return { code: (e as { code?: string }).code ?? String(e), message: String((e as Error).message) };
      }
    };
    await ctx.setup();
    const oldDevice = ctx.getWebGPUDevice(0);
    const events: { deviceId: number; reason: string; message: string }[] = [];
    ctx.onDeviceLost((e) => events.push({ deviceId: e.deviceId, reason: e.reason, message: e.message }));
    const old = await ctx.allocWebGPU(64);

    oldDevice.destroy();
    await oldDevice.lost;
    await new Promise((r) => setTimeout(r, 0));

    const translate = failure(() => ctx.gpuPointerToBuffer(old));
    const device0 = failure(() => ctx.getWebGPUDevice(0));
    let allocCode = "no error";
    try {
      await ctx.allocWebGPU(16);
    } catch (e) {
      allocCode = (e as { code?: string }).code ?? String(e);
    }
    const infoLost = ctx.gpuPointerInfo(old).deviceLost;

    const info = await ctx.setup();
    const newDevice = ctx.getWebGPUDevice(0);
    const fresh = await ctx.allocWebGPU(16);
    const buffer = ctx.gpuPointerToBuffer(fresh);
    newDevice.queue.writeBuffer(buffer, 0, new Uint32Array([7, 8, 9, 10]));
    const staging = newDevice.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = newDevice.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, 16);
    newDevice.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const values = Array.from(new Uint32Array(staging.getMappedRange().slice(0)));
    staging.unmap();
    staging.destroy();

    const oldStill = failure(() => ctx.gpuPointerToBuffer(old)).code;
    const stats = ctx.stats().devices.map((d) => ({ id: d.deviceId, current: d.current, lost: d.lost, live: d.livePointers }));
    ctx.freeWebGPU(old); // dead pointers can still be freed
    ctx.freeWebGPU(fresh);
    return {
      events, translate, device0, allocCode, infoLost, infoId: info.id, differentDevice: newDevice !== oldDevice,
      values, oldStill, stats, liveAfter: ctx.stats().livePointers,
    };
  });
  expect(result.events).toEqual([{ deviceId: 0, reason: "destroyed", message: expect.any(String) }]);
  expect(result.translate.code).toBe("DEVICE_LOST");
  expect(result.translate.message).toContain("GPU device 0 was lost");
  expect(result.translate.message).toContain('reason "destroyed"');
  expect(result.translate.message).toContain("call setup() again");
  expect(result.device0.code).toBe("DEVICE_LOST");
  expect(result.allocCode).toBe("DEVICE_LOST");
  expect(result.infoLost).toBe(true);
  expect(result.infoId).toBe(0);
  expect(result.differentDevice).toBe(true);
  expect(result.values).toEqual([7, 8, 9, 10]);
  expect(result.oldStill).toBe("DEVICE_LOST");
  expect(result.stats).toEqual([
    { id: 0, current: true, lost: false, live: 1 },
    { id: 0, current: false, lost: true, live: 1 },
  ]);
  expect(result.liveAfter).toBe(0);
});
