/**
 * setup(): one adapter and one device for concurrent and repeated calls, typed
 * errors for no WebGPU / no adapter / missing features, and custom devices.
 */
import { test, expect, type HarnessWindow, type PageTestkit } from "./fixtures.js";
import type * as WDL from "../../js/src/index.js";

type Lib = typeof WDL;

test("five concurrent setup() calls make one adapter request and one device", async ({ jsPage }) => {
  const result = await jsPage.evaluate(async () => {
    const { getContext } = (window as unknown as { webdlpack: Lib }).webdlpack;
    const gpu = navigator.gpu;
    if (!gpu) return { gpu: false } as const; // fails the test below: never skipped
    const original = gpu.requestAdapter.bind(gpu);
    let adapters = 0;
    let devices = 0;
    gpu.requestAdapter = async (options?: GPURequestAdapterOptions) => {
      adapters += 1;
      const adapter = await original(options);
      if (adapter) {
        const requestDevice = adapter.requestDevice.bind(adapter);
        adapter.requestDevice = (d?: GPUDeviceDescriptor) => {
          devices += 1;
          return requestDevice(d);
        };
      }
      return adapter;
    };
    const ctx = getContext();
    let beforeSetup = "no error";
    try {
      ctx.getWebGPUDevice(0);
    } catch (e) {
      beforeSetup = String((e as Error).message);
    }
    const infos = await Promise.all([1, 2, 3, 4, 5].map(() => ctx.setup()));
    const again = await ctx.setup();
    const device = ctx.getWebGPUDevice(0);
    return {
      gpu: true,
      beforeSetup,
      adapters,
      devices,
      sameInfo: infos.every((i) => i === infos[0]) && again === infos[0],
      sameDevice: device === ctx.getWebGPUDevice(0) && device === ctx.getWebGPUDevice(),
      info: infos[0],
    } as const;
  });
  expect(result.gpu).toBe(true);
  if (!result.gpu || !result.info) throw new Error("no WebGPU");
  expect(result.beforeSetup).toContain("UNKNOWN_DEVICE");
  expect(result.beforeSetup).toContain("call setup() first");
  expect(result.adapters).toBe(1);
  expect(result.devices).toBe(1);
  expect(result.sameInfo).toBe(true);
  expect(result.sameDevice).toBe(true);
  expect(result.info.id).toBe(0);
  expect(result.info.adapterInfo?.architecture).toBe("swiftshader");
  // device 0 gets the adapter's maxima (SwiftShader: 1 GiB), not WebGPU's 256 MiB default
  expect(result.info.limits.maxBufferSize).toBe(2 ** 30);
  expect(result.info.limits.maxStorageBufferBindingSize).toBe(2 ** 30);
  expect(result.info.limits.minStorageBufferOffsetAlignment).toBe(256);
});

test("no navigator.gpu → NO_WEBGPU, no adapter → NO_ADAPTER, missing feature → UNSUPPORTED naming it; then setup works", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { getContext } = (window as unknown as { webdlpack: Lib }).webdlpack;
    const ctx = getContext();
    const { failure } = (window as unknown as { testkit: PageTestkit }).testkit;
    const hadGpu = !!navigator.gpu;
    const descriptor = Object.getOwnPropertyDescriptor(Navigator.prototype, "gpu")!;
    Object.defineProperty(Navigator.prototype, "gpu", { configurable: true, get: () => undefined });
    const noWebGPU = await failure(() => ctx.setup());
    Object.defineProperty(Navigator.prototype, "gpu", descriptor);

    const gpu = navigator.gpu;
    const original = gpu.requestAdapter;
    gpu.requestAdapter = async () => null;
    const noAdapter = await failure(() => ctx.setup());
    gpu.requestAdapter = original;

    const f16 = await failure(() => ctx.setup({ requiredFeatures: ["shader-f16"] }));
    const tooBig = await failure(() => ctx.setup({ requiredLimits: { maxBufferSize: 2 ** 40 } }));
    const info = await ctx.setup({ requiredFeatures: ["timestamp-query"] });
    const later = await failure(() => ctx.setup({ requiredFeatures: ["shader-f16"] }));
    return {
      hadGpu,
      noWebGPU,
      noAdapter,
      f16,
      tooBig,
      features: info.features,
      later,
      stillWorks: (await ctx.setup()) === info,
    };
  });
  expect(result.hadGpu).toBe(true);
  expect(result.noWebGPU.code).toBe("NO_WEBGPU");
  expect(result.noWebGPU.message).toContain("navigator.gpu is undefined");
  expect(result.noAdapter.code).toBe("NO_ADAPTER");
  expect(result.f16.code).toBe("UNSUPPORTED");
  expect(result.f16.field).toBe("cfg.requiredFeatures");
  expect(result.f16.value).toBe("shader-f16");
  expect(result.f16.message).toContain('"shader-f16"');
  expect(result.tooBig.code).toBe("UNSUPPORTED");
  expect(result.tooBig.message).toContain("maxBufferSize");
  expect(result.features).toContain("timestamp-query");
  expect(result.later.code).toBe("UNSUPPORTED");
  expect(result.stillWorks).toBe(true);
});

test("user devices: same device → same id > 0, unknown id → UNKNOWN_DEVICE, allocation on a custom device", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const { setup, codeOf } = (window as unknown as HarnessWindow).testkit;
    const { ctx } = await setup();
    const adapter = (await navigator.gpu.requestAdapter())!;
    const mine = await adapter.requestDevice({ label: "user device" });
    const id = ctx.registerWebGPUDevice(mine);
    const again = ctx.registerWebGPUDevice(mine);
    const defaultId = ctx.registerWebGPUDevice(ctx.getWebGPUDevice(0));
    const unknown = codeOf(() => ctx.getWebGPUDevice(77));
    const ptr = await ctx.allocWebGPUChecked(40, { deviceId: id });
    const buffer = ctx.gpuPointerToBuffer(ptr);
    // The buffer is usable on the custom device.
    mine.pushErrorScope("validation");
    mine.queue.writeBuffer(buffer, 0, new Float32Array([1, 2, 3]));
    const writeError = await mine.popErrorScope();
    const info = ctx.gpuPointerInfo(ptr);
    const unregisterLive = codeOf(() => ctx.unregisterWebGPUDevice(id));
    ctx.freeWebGPU(ptr);
    ctx.unregisterWebGPUDevice(id);
    const afterUnregister = codeOf(() => ctx.getWebGPUDevice(id));
    const newId = ctx.registerWebGPUDevice(mine);
    mine.destroy();
    return {
      id,
      again,
      defaultId,
      unknown,
      sameDevice: ctx.getWebGPUDevice(0) !== mine,
      writeError: writeError?.message ?? null,
      infoDevice: info.deviceId,
      size: info.size,
      requested: info.requestedSize,
      unregisterLive,
      afterUnregister,
      newId,
    };
  });
  expect(result.id).toBeGreaterThan(0);
  expect(result.again).toBe(result.id);
  expect(result.defaultId).toBe(0);
  expect(result.unknown).toBe("UNKNOWN_DEVICE");
  expect(result.sameDevice).toBe(true);
  expect(result.writeError).toBeNull();
  expect(result.infoDevice).toBe(result.id);
  expect(result.size).toBe(256); // bucket mode (the default): the smallest class
  expect(result.requested).toBe(40);
  expect(result.unregisterLive).toBe("INVALID_ARGUMENT");
  expect(result.afterUnregister).toBe("UNKNOWN_DEVICE");
  expect(result.newId).toBeGreaterThan(result.id);
});
