/**
 * Device loss: destroying device 0 marks it lost, its pointers fail with
 * DEVICE_LOST, listeners hear it, and setup() again gives a working device 0.
 */
import { test, expect, type HarnessWindow } from "./fixtures.js";

test("device destroy → lost → DEVICE_LOST → setup again → working device 0 and new allocations", async ({ jsPage }) => {
  const result = await jsPage.evaluate(async () => {
    const { setup, failure, readBuffer } = (window as unknown as HarnessWindow).testkit;
    const { ctx, device: oldDevice } = await setup();
    const events: { deviceId: number; reason: string; message: string }[] = [];
    ctx.onDeviceLost((e) => events.push({ deviceId: e.deviceId, reason: e.reason, message: e.message }));
    const old = await ctx.allocWebGPUChecked(64);

    oldDevice.destroy();
    await oldDevice.lost;
    await new Promise((r) => setTimeout(r, 0));

    const translate = await failure(() => ctx.gpuPointerToBuffer(old));
    const device0 = await failure(() => ctx.getWebGPUDevice(0));
    const allocCode = (await failure(() => ctx.allocWebGPU(16))).code;
    const infoLost = ctx.gpuPointerInfo(old).deviceLost;

    const info = await ctx.setup();
    const newDevice = ctx.getWebGPUDevice(0);
    const fresh = await ctx.allocWebGPUChecked(16);
    const buffer = ctx.gpuPointerToBuffer(fresh);
    newDevice.queue.writeBuffer(buffer, 0, new Uint32Array([7, 8, 9, 10]));
    const values = Array.from(new Uint32Array((await readBuffer(newDevice, buffer, 0, 16)).buffer));

    const oldStill = (await failure(() => ctx.gpuPointerToBuffer(old))).code;
    const stats = ctx
      .stats()
      .devices.map((d) => ({ id: d.deviceId, current: d.current, lost: d.lost, live: d.livePointers }));
    ctx.freeWebGPU(old); // dead pointers can still be freed
    ctx.freeWebGPU(fresh);
    return {
      events,
      translate,
      device0,
      allocCode,
      infoLost,
      infoId: info.id,
      differentDevice: newDevice !== oldDevice,
      values,
      oldStill,
      stats,
      liveAfter: ctx.stats().livePointers,
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
