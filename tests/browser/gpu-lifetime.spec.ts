/**
 * The lifetime ledger and the device guard on real WebGPU: scope disposal
 * (sync and async), a dropped object collected and reported as a leak, one
 * framework destroying its device guard without breaking another, and device
 * loss fanned out to two listeners.
 */
import type { Ledger } from "../../js/src/context/ledger/ledger.js";
import { test, expect, type HarnessWindow } from "./fixtures.js";

test("scope disposes what was allocated inside (sync and async), keeps kept and returned pointers", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { setup, codeOf } = (window as unknown as HarnessWindow).testkit;
    const { ctx } = await setup();
    const code = (ptr: number): string => codeOf(() => ctx.gpuPointerToBuffer(ptr), "live");
    const base = ctx.stats().livePointers;
    const made: number[] = [];
    let kept = 0;
    const returned = ctx.scope(() => {
      made.push(ctx.allocWebGPU(1024), ctx.allocWebGPU(2048));
      kept = ctx.keep(ctx.allocWebGPU(64));
      return ctx.allocWebGPU(128);
    });
    const sync = { made: made.map(code), kept: code(kept), returned: code(returned) };
    const asyncMade: number[] = [];
    const asyncReturned = await ctx.scope(async () => {
      asyncMade.push(await ctx.allocWebGPUChecked(4096));
      await new Promise((r) => setTimeout(r, 5));
      asyncMade.push(await ctx.allocWebGPUChecked(8192));
      const inside = asyncMade.map(code);
      return { ptr: await ctx.allocWebGPUChecked(16), inside };
    });
    const asyncResult = { inside: asyncReturned.inside, made: asyncMade.map(code), returned: code(asyncReturned.ptr) };
    const liveNow = ctx.stats().livePointers - base;
    ctx.dispose(kept);
    ctx.dispose(returned);
    ctx.freeWebGPU(asyncReturned.ptr);
    return {
      sync,
      asyncResult,
      liveNow,
      liveEnd: ctx.stats().livePointers - base,
      entries: ctx.ledger.entries().length,
    };
  });
  expect(result.sync).toEqual({ made: ["STALE_POINTER", "STALE_POINTER"], kept: "live", returned: "live" });
  expect(result.asyncResult).toEqual({
    inside: ["live", "live"],
    made: ["STALE_POINTER", "STALE_POINTER"],
    returned: "live",
  });
  expect(result.liveNow).toBe(3);
  expect(result.liveEnd).toBe(0);
  expect(result.entries).toBe(0);
});

test("a dropped JS object is collected, its buffer released, and reported as a leak with one warning", async ({
  jsPage,
}) => {
  const warnings: string[] = [];
  jsPage.on("console", (msg) => {
    if (msg.type() === "warning" && msg.text().includes("webdlpack: leaked")) warnings.push(msg.text());
  });
  const result = await jsPage.evaluate(async () => {
    const { setup, codeOf, collectLeaks } = (window as unknown as HarnessWindow).testkit;
    const { ctx } = await setup();
    ctx.debug.captureStacks = true;
    let ptr = 0;
    (function makeAndDrop() {
      ptr = ctx.allocWebGPU(5000, { owner: "forgetful-framework" });
      const tensorLike = { kind: "wrapper" };
      ctx.ledger.watch(tensorLike, (ctx.ledger as Ledger).entryForPointer(ptr)!);
    })();
    const kept = { kind: "kept" };
    const keptPtr = ctx.allocWebGPU(64, { owner: "careful" });
    ctx.ledger.watch(kept, (ctx.ledger as Ledger).entryForPointer(keptPtr)!);
    await collectLeaks(ctx);
    const code = codeOf(() => ctx.gpuPointerToBuffer(ptr), "live");
    const leaks = ctx.leaks();
    const keptAlive = ctx.gpuPointerToBuffer(keptPtr) !== undefined && kept.kind === "kept";
    ctx.dispose(kept);
    return { leaks, code, ptr, keptAlive };
  });
  expect(result.leaks).toHaveLength(1);
  expect(result.leaks[0]).toMatchObject({
    kind: "gpu-buffer",
    owner: "forgetful-framework",
    bytes: 8192,
    pointer: result.ptr,
  });
  expect(result.leaks[0]!.where).toContain("makeAndDrop");
  expect(result.code).toBe("STALE_POINTER");
  expect(result.keptAlive).toBe(true);
  await expect.poll(() => warnings.length).toBe(1);
  expect(warnings[0]).toContain("forgetful-framework");
});

test("a framework destroying its device guard breaks no one: every framework can leave and webdlpack keeps the device; destroying the raw device loses it and two listeners hear it", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { ctx } = await (window as unknown as HarnessWindow).testkit.setup();
    const heard: string[] = [];
    ctx.onDeviceLost((e) => heard.push(`first:${e.deviceId}:${e.reason}`));
    ctx.onDeviceLost((e) => heard.push(`second:${e.deviceId}:${e.reason}`));
    const ort = ctx.getWebGPUDevice(0, { owner: "onnxruntime" });
    const tf = ctx.getWebGPUDevice(0, { owner: "tfjs" });
    // "ORT" makes a buffer through its guard, then tears down and destroys "its" device.
    const ortBuffer = ort.createBuffer({
      size: 16,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    ort.destroy();
    await new Promise((r) => setTimeout(r, 20));
    // "TF.js" keeps computing on the same device through its guard.
    const ptr = await ctx.allocWebGPUChecked(16);
    tf.queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, new Float32Array([1, 2, 3, 4]));
    const enc = tf.createCommandEncoder();
    enc.copyBufferToBuffer(ctx.gpuPointerToBuffer(ptr), 0, ortBuffer, 0, 16);
    tf.queue.submit([enc.finish()]);
    const ptr2 = ctx.registerGPUBuffer(ortBuffer, { owned: true });
    const values = Array.from(new Float32Array(await ctx.readback(ptr2)));
    const ownersBefore = ctx.stats().devices[0]!.guardOwners;
    // The last framework leaves too: webdlpack's context keeps the device.
    tf.destroy();
    ctx.freeWebGPU(ptr);
    ctx.freeWebGPU(ptr2);
    await new Promise((r) => setTimeout(r, 50));
    const heardAfterFrameworks = heard.length;
    const ownersAfter = ctx.stats().devices[0]!.guardOwners;
    const ptr3 = await ctx.allocWebGPUChecked(16, { owner: "python" });
    ctx.getWebGPUDevice(0).queue.writeBuffer(ctx.gpuPointerToBuffer(ptr3), 0, new Float32Array([5, 6, 7, 8]));
    const stillWorks = Array.from(new Float32Array(await ctx.readback(ptr3)));
    ctx.freeWebGPU(ptr3);
    // The page really ends the device by destroying the raw one.
    ctx.getWebGPUDevice(0).destroy();
    await new Promise((r) => setTimeout(r, 50));
    let after = "";
    try {
      ctx.getWebGPUDevice(0);
    } catch (e) {
      after = (e as { code: string }).code;
    }
    return {
      values,
      ownersBefore,
      heardAfterFrameworks,
      ownersAfter,
      stillWorks,
      heard,
      after,
      isGPUDevice: tf instanceof GPUDevice,
    };
  });
  expect(result.values).toEqual([1, 2, 3, 4]);
  expect(result.ownersBefore).toEqual(["tfjs"]);
  expect(result.heardAfterFrameworks).toBe(0);
  expect(result.ownersAfter).toEqual([]);
  expect(result.stillWorks).toEqual([5, 6, 7, 8]);
  expect(result.heard).toEqual(["first:0:destroyed", "second:0:destroyed"]);
  expect(result.after).toBe("DEVICE_LOST");
  expect(result.isGPUDevice).toBe(true);
});
