/** Node tests of the context against fake WebGPU objects: setup, devices, allocation, errors, loss. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { WebDLPackError } from "../../js/src/errors.js";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { DEFAULT_GPU_USAGE, GPUUsage } from "../../js/src/context/ground/create.js";
import type { DeviceLostEvent } from "../../js/src/context/devices/registry.js";
import { asGPU, FakeAdapter, FakeBuffer, FakeDevice, FakeGPU } from "./context-fakes.js";
import { isCode } from "./helpers.js";

function newContext(): PageContext {
  return new PageContext(CONTEXT_PROTOCOL);
}

async function readyContext(): Promise<{ ctx: PageContext; gpu: FakeGPU; device: FakeDevice }> {
  const ctx = newContext();
  const gpu = new FakeGPU();
  await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  return { ctx, gpu, device: gpu.adapter!.devices[0]! };
}

test("setup without navigator.gpu is NO_WEBGPU; an absent adapter is NO_ADAPTER and can be retried", async () => {
  assert.equal((globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu, undefined);
  await assert.rejects(newContext().setup(), isCode("NO_WEBGPU", /navigator\.gpu is undefined/));
  const ctx = newContext();
  const gpu = new FakeGPU(null);
  await assert.rejects(ctx.setup({ gpu: asGPU<GPU>(gpu) }), isCode("NO_ADAPTER"));
  gpu.adapter = new FakeAdapter();
  const info = await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  assert.equal(info.id, 0);
  assert.equal(info.adapterInfo?.vendor, "fake");
  assert.equal(info.limits.maxBufferSize, 1 << 20);
});

test("concurrent and repeated setup() calls share one adapter and one device", async () => {
  const ctx = newContext();
  const gpu = new FakeGPU();
  const results = await Promise.all([1, 2, 3, 4, 5].map(() => ctx.setup({ gpu: asGPU<GPU>(gpu) })));
  for (const r of results) assert.equal(r, results[0]);
  assert.equal(gpu.requestAdapterCalls, 1);
  assert.equal(gpu.adapter!.requestDeviceCalls, 1);
  assert.equal(await ctx.setup(), results[0]);
  assert.equal(ctx.getWebGPUDevice(0), asGPU<GPUDevice>(gpu.adapter!.devices[0]));
  assert.equal(ctx.getWebGPUDevice(), ctx.getWebGPUDevice(0));
});

test("a feature or limit the adapter lacks is UNSUPPORTED naming it; bad config is INVALID_ARGUMENT", async () => {
  const ctx = newContext();
  const gpu = asGPU<GPU>(new FakeGPU());
  await assert.rejects(
    ctx.setup({ gpu, requiredFeatures: ["shader-f16"] }),
    (err: unknown) =>
      isCode("UNSUPPORTED", /"shader-f16"/)(err) && (err as WebDLPackError).field === "cfg.requiredFeatures",
  );
  await assert.rejects(
    ctx.setup({ gpu, requiredLimits: { maxBufferSize: 2 ** 40 } }),
    isCode("UNSUPPORTED", /maxBufferSize/),
  );
  await assert.rejects(
    ctx.setup({ gpu, requiredLimits: { maxBogus: 1 } }),
    isCode("INVALID_ARGUMENT", /unknown WebGPU limit "maxBogus"/),
  );
  await assert.rejects(
    ctx.setup({ gpu, powerPreference: "fast" as GPUPowerPreference }),
    isCode("INVALID_ARGUMENT", /cfg\.powerPreference/),
  );
  await assert.rejects(ctx.setup(42 as unknown as undefined), isCode("INVALID_ARGUMENT"));
  const info = await ctx.setup({ gpu, requiredFeatures: ["timestamp-query"] });
  assert.deepEqual(info.features, ["timestamp-query"]);
  // A later call asking for more than device 0 has is refused; the device stays.
  await assert.rejects(ctx.setup({ requiredFeatures: ["subgroups"] }), isCode("UNSUPPORTED", /existing device 0/));
  assert.equal(await ctx.setup(), info);
});

test("setup asks for the adapter's maxima of the ML limits unless cfg.limits is 'default'", async () => {
  const gpu = new FakeGPU();
  await newContext().setup({ gpu: asGPU<GPU>(gpu), requiredLimits: { maxComputeWorkgroupSizeX: 128 } });
  assert.deepEqual(gpu.adapter!.lastDescriptor?.requiredLimits, {
    maxBufferSize: 1 << 20,
    maxStorageBufferBindingSize: 1 << 20,
    maxStorageBuffersPerShaderStage: 8,
    maxComputeWorkgroupStorageSize: 32768,
    maxComputeInvocationsPerWorkgroup: 256,
    maxComputeWorkgroupSizeX: 128,
    maxComputeWorkgroupsPerDimension: 65535, // the fake adapter has none of the other ML limits
  });
  await newContext().setup({ gpu: asGPU<GPU>(gpu), limits: "default" });
  assert.equal(gpu.adapter!.lastDescriptor?.requiredLimits, undefined);
  await assert.rejects(
    newContext().setup({ gpu: asGPU<GPU>(gpu), limits: "max" as "default" }),
    isCode("INVALID_ARGUMENT", /cfg\.limits/),
  );
});

test("a user-supplied device becomes device 0 with its adapter info", async () => {
  const ctx = newContext();
  const device = new FakeDevice(["subgroups"]);
  const info = await ctx.setup({ device: asGPU<GPUDevice>(device), adapterInfo: { vendor: "me", architecture: "x" } });
  assert.equal(info.adapterInfo?.vendor, "me");
  assert.equal(ctx.getWebGPUDevice(0), asGPU<GPUDevice>(device));
  await assert.rejects(
    ctx.setup({ device: asGPU<GPUDevice>(new FakeDevice()) }),
    isCode("INVALID_ARGUMENT", /cfg\.device/),
  );
});

test("device ids: 0 needs setup, registered devices get stable ids > 0, unknown ids fail", async () => {
  const ctx = newContext();
  assert.throws(() => ctx.getWebGPUDevice(0), isCode("UNKNOWN_DEVICE", /call setup\(\) first/));
  const d1 = asGPU<GPUDevice>(new FakeDevice());
  const d2 = asGPU<GPUDevice>(new FakeDevice());
  const id1 = ctx.registerWebGPUDevice(d1);
  assert.ok(id1 > 0);
  assert.equal(ctx.registerWebGPUDevice(d1), id1);
  const id2 = ctx.registerWebGPUDevice(d2);
  assert.notEqual(id2, id1);
  assert.equal(ctx.getWebGPUDevice(id2), d2);
  assert.throws(() => ctx.getWebGPUDevice(99), isCode("UNKNOWN_DEVICE", /no WebGPU device has id 99/));
  assert.throws(() => ctx.registerWebGPUDevice({} as GPUDevice), isCode("INVALID_ARGUMENT", /needs a GPUDevice/));
  ctx.unregisterWebGPUDevice(id1);
  assert.throws(() => ctx.getWebGPUDevice(id1), isCode("UNKNOWN_DEVICE"));
  assert.throws(() => ctx.unregisterWebGPUDevice(id1), isCode("UNKNOWN_DEVICE"));
  // ids are not reused
  assert.ok(ctx.registerWebGPUDevice(d1) > id2);
  const device0 = new FakeDevice();
  await ctx.setup({ device: asGPU<GPUDevice>(device0) });
  assert.equal(ctx.registerWebGPUDevice(asGPU<GPUDevice>(device0)), 0);
  assert.throws(() => ctx.unregisterWebGPUDevice(0), isCode("INVALID_ARGUMENT", /can not be unregistered/));
});

test("allocWebGPUChecked (cache mode disabled) rounds to 16 bytes, reports both sizes and uses the default usage", async () => {
  const { ctx, device } = await readyContext();
  ctx.setCacheMode("disabled");
  const cases: [number, number][] = [
    [10, 16],
    [0, 16],
    [16, 16],
    [33, 48],
    [1 << 20, 1 << 20],
  ];
  for (const [nbytes, allocated] of cases) {
    const ptr = await ctx.allocWebGPUChecked(nbytes, { label: "t", owner: "me" });
    const info = ctx.gpuPointerInfo(ptr);
    assert.equal(info.requestedSize, nbytes);
    assert.equal(info.size, allocated);
    assert.equal(info.usage, DEFAULT_GPU_USAGE);
    assert.equal(info.usage, GPUUsage.STORAGE | GPUUsage.COPY_SRC | GPUUsage.COPY_DST);
    assert.equal(info.owner, "me");
    assert.equal(info.owned, true);
    assert.equal(info.deviceId, 0);
    assert.equal(info.label, "t");
    assert.equal(ctx.gpuPointerToBuffer(ptr), asGPU<GPUBuffer>(device.created.at(-1)));
    ctx.freeWebGPU(ptr);
    assert.equal(device.created.at(-1)!.destroyed, 1);
  }
  assert.equal(device.scopes.length, 0);
});

test("bad sizes and usages are INVALID_ARGUMENT naming the value and the limit", async () => {
  const { ctx, device } = await readyContext();
  const made = device.created.length; // setup's own (transfers measured at setup)
  for (const bad of [-1, 1.5, Number.NaN, 2 ** 53, (1 << 20) + 1, "10"]) {
    await assert.rejects(
      ctx.allocWebGPUChecked(bad as number),
      (err: unknown) => isCode("INVALID_ARGUMENT", /maxBufferSize/)(err) && (err as WebDLPackError).field === "nbytes",
    );
  }
  await assert.rejects(ctx.allocWebGPUChecked(8, { usage: 0 }), isCode("INVALID_ARGUMENT", /usage/));
  await assert.rejects(ctx.allocWebGPUChecked(8, { usage: 0x800 }), isCode("INVALID_ARGUMENT", /usage/));
  await assert.rejects(ctx.allocWebGPUChecked(8, { deviceId: 5 }), isCode("UNKNOWN_DEVICE"));
  await assert.rejects(ctx.allocWebGPUChecked(8, null as unknown as undefined), isCode("INVALID_ARGUMENT", /options/));
  assert.equal(device.created.length, made, "no buffer made for a refused allocation");
  await assert.rejects(newContext().allocWebGPUChecked(8), isCode("UNKNOWN_DEVICE", /call setup\(\) first/));
});

test("allocation errors in error scopes become OUT_OF_MEMORY / GPU_ERROR; the buffer is destroyed, the device kept", async () => {
  const { ctx, device } = await readyContext();
  // One out-of-memory error: room is made and the allocation retried once (docs/memory.md).
  device.failNext = { filter: "out-of-memory", message: "Out of memory" };
  ctx.freeWebGPU(await ctx.allocWebGPUChecked(64));
  assert.equal(device.created.at(-2)!.destroyed, 1);
  // The retry refused too: OUT_OF_MEMORY (the memory room re-arms the failure while making room).
  const rearm = ctx.onMemoryPressure(() => {
    device.failNext = { filter: "out-of-memory", message: "Out of memory" };
  });
  device.failNext = { filter: "out-of-memory", message: "Out of memory" };
  await assert.rejects(ctx.allocWebGPUChecked(4096), isCode("OUT_OF_MEMORY", /out of memory/i));
  rearm();
  assert.equal(device.created.at(-1)!.destroyed, 1);
  device.failNext = { filter: "validation", message: "Invalid usage" };
  await assert.rejects(
    ctx.allocWebGPUChecked(64, { usage: GPUUsage.INDEX | GPUUsage.STORAGE }),
    isCode("GPU_ERROR", /Invalid usage/),
  );
  // Usage WebGPU always refuses is caught before any GPU call.
  const created = device.created.length;
  await assert.rejects(
    ctx.allocWebGPUChecked(64, { usage: GPUUsage.MAP_READ | GPUUsage.STORAGE }),
    isCode("INVALID_ARGUMENT", /MAP_READ/),
  );
  assert.throws(
    () => ctx.allocWebGPU(64, { usage: GPUUsage.MAP_WRITE | GPUUsage.STORAGE }),
    isCode("INVALID_ARGUMENT", /MAP_WRITE/),
  );
  assert.equal(device.created.length, created);
  assert.equal(device.created.at(-1)!.destroyed, 1);
  assert.equal(device.scopes.length, 0);
  assert.equal(ctx.stats().livePointers, 0);
  const ok = await ctx.allocWebGPUChecked(64);
  assert.ok(ctx.gpuPointerToBuffer(ok));
});

test("stale, foreign and double-freed pointers are typed errors", async () => {
  const { ctx } = await readyContext();
  const ptr = await ctx.allocWebGPUChecked(32);
  ctx.freeWebGPU(ptr);
  assert.throws(() => ctx.gpuPointerToBuffer(ptr), isCode("STALE_POINTER"));
  assert.throws(() => ctx.freeWebGPU(ptr), isCode("DOUBLE_FREE"));
  assert.throws(() => ctx.gpuPointerToBuffer(12345), isCode("INVALID_POINTER"));
  assert.throws(() => ctx.gpuPointerInfo(12345), isCode("INVALID_POINTER"));
  assert.throws(() => ctx.freeWebGPU(12345), isCode("INVALID_POINTER"));
});

test("registerGPUBuffer adopts a foreign buffer: not owned → onRelease, owned → destroy; no double registration", async () => {
  const { ctx } = await readyContext();
  const foreign = new FakeBuffer(64, GPUUsage.STORAGE | GPUUsage.COPY_SRC, "ort-out");
  const released: number[] = [];
  const ptr = ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign), {
    owner: "onnxruntime",
    onRelease: (_b, p) => released.push(p),
  });
  assert.equal(ctx.gpuPointerToBuffer(ptr), asGPU<GPUBuffer>(foreign));
  const info = ctx.gpuPointerInfo(ptr);
  assert.deepEqual([info.size, info.requestedSize, info.owned, info.owner], [64, 64, false, "onnxruntime"]);
  assert.throws(
    () => ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign)),
    isCode("INVALID_ARGUMENT", /already in the pointer table/),
  );
  ctx.freeWebGPU(ptr);
  assert.deepEqual(released, [ptr]);
  assert.equal(foreign.destroyed, 0);
  const owned = ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign), { owned: true });
  assert.notEqual(owned, ptr);
  ctx.freeWebGPU(owned);
  assert.equal(foreign.destroyed, 1);
  assert.throws(() => ctx.registerGPUBuffer({} as GPUBuffer), isCode("INVALID_ARGUMENT", /needs a GPUBuffer/));
  assert.throws(
    () => ctx.registerGPUBuffer(asGPU<GPUBuffer>(new FakeBuffer(4, 0x80, "")), { owned: "yes" as unknown as boolean }),
    isCode("INVALID_ARGUMENT", /options\.owned/),
  );
  assert.throws(
    () => ctx.registerGPUBuffer(asGPU<GPUBuffer>(new FakeBuffer(4, 0x80, "")), { deviceId: 3 }),
    isCode("UNKNOWN_DEVICE"),
  );
  // A throwing onRelease still frees the slot.
  const p2 = ctx.registerGPUBuffer(asGPU<GPUBuffer>(new FakeBuffer(4, 0x80, "")), {
    onRelease: () => {
      throw new Error("boom");
    },
  });
  assert.throws(() => ctx.freeWebGPU(p2), /boom/);
  assert.throws(() => ctx.freeWebGPU(p2), isCode("DOUBLE_FREE"));
  assert.equal(ctx.stats().livePointers, 0);
});

test("unregistering a device with live pointers is refused until they are freed", async () => {
  const { ctx } = await readyContext();
  const id = ctx.registerWebGPUDevice(asGPU<GPUDevice>(new FakeDevice()));
  const ptr = await ctx.allocWebGPUChecked(8, { deviceId: id });
  assert.equal(ctx.gpuPointerInfo(ptr).deviceId, id);
  assert.throws(() => ctx.unregisterWebGPUDevice(id), isCode("INVALID_ARGUMENT", /1 live GPU pointer/));
  ctx.freeWebGPU(ptr);
  ctx.unregisterWebGPUDevice(id);
});

test("device loss: pointers fail DEVICE_LOST with the reason, listeners hear it, a new setup gives a working device 0", async () => {
  const { ctx, gpu, device } = await readyContext();
  const events: DeviceLostEvent[] = [];
  const off = ctx.onDeviceLost((e) => events.push(e));
  const offOther = ctx.onDeviceLost(() => {
    throw new Error("listener bug");
  });
  const ptr = await ctx.allocWebGPUChecked(32);
  const originalError = console.error;
  console.error = () => {};
  try {
    device.destroy();
    await new Promise((r) => setTimeout(r, 0));
  } finally {
    console.error = originalError;
  }
  offOther();
  assert.equal(events.length, 1);
  assert.deepEqual(
    [events[0]!.deviceId, events[0]!.reason, events[0]!.message],
    [0, "destroyed", "Device was destroyed."],
  );
  assert.throws(
    () => ctx.gpuPointerToBuffer(ptr),
    isCode("DEVICE_LOST", /device 0 was lost \(reason "destroyed": Device was destroyed\.\)/),
  );
  assert.throws(() => ctx.getWebGPUDevice(0), isCode("DEVICE_LOST", /call setup\(\) again/));
  await assert.rejects(ctx.allocWebGPUChecked(8), isCode("DEVICE_LOST"));
  assert.equal(ctx.gpuPointerInfo(ptr).deviceLost, true);

  // A failed re-setup (adapter gone for a moment) can be retried with the same config.
  const adapter = gpu.adapter;
  gpu.adapter = null;
  await assert.rejects(ctx.setup(), isCode("NO_ADAPTER"));
  gpu.adapter = adapter;
  const info = await ctx.setup();
  assert.equal(info.id, 0);
  assert.equal(gpu.adapter!.requestDeviceCalls, 2);
  const fresh = await ctx.allocWebGPUChecked(32);
  assert.notEqual(fresh, ptr);
  assert.ok(ctx.gpuPointerToBuffer(fresh));
  assert.throws(() => ctx.gpuPointerToBuffer(ptr), isCode("DEVICE_LOST"));
  const stats = ctx.stats();
  assert.deepEqual(
    stats.devices.map((d) => [d.deviceId, d.current, d.lost, d.livePointers]),
    [
      [0, true, false, 1],
      [0, false, true, 1],
    ],
  );
  ctx.freeWebGPU(ptr); // a dead pointer can still be freed
  assert.throws(() => ctx.freeWebGPU(ptr), isCode("DOUBLE_FREE"));
  off();
  gpu.adapter!.devices[1]!.destroy();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(events.length, 1);
});

test("stats() counts live pointers, allocated (bucket class) and requested bytes per device", async () => {
  const { ctx } = await readyContext();
  const id = ctx.registerWebGPUDevice(asGPU<GPUDevice>(new FakeDevice()));
  const a = await ctx.allocWebGPUChecked(10);
  await ctx.allocWebGPUChecked(100);
  await ctx.allocWebGPUChecked(1, { deviceId: id });
  const s = ctx.stats();
  assert.equal(s.livePointers, 3);
  assert.equal(s.liveBytes, 256 * 3, "bucket mode: the smallest class is 256 bytes");
  assert.deepEqual(
    s.devices.map((d) => [d.deviceId, d.livePointers, d.liveBytes, d.requestedBytes]),
    [
      [0, 2, 512, 110],
      [id, 1, 256, 1],
    ],
  );
  ctx.freeWebGPU(a);
  assert.equal(ctx.stats().devices[0]!.livePointers, 1);
});

test("allocWebGPUChecked racing unregisterWebGPUDevice: the new buffer is destroyed and the call fails UNKNOWN_DEVICE (no pointer into a gone device)", async () => {
  const ctx = newContext();
  const device = new FakeDevice();
  const id = ctx.registerWebGPUDevice(asGPU<GPUDevice>(device));
  ctx.setCacheMode("disabled", { deviceId: id }); // a cache miss: allocWebGPUChecked awaits WebGPU's error scopes
  const pending = ctx.allocWebGPUChecked(64, { deviceId: id });
  ctx.unregisterWebGPUDevice(id); // no live pointer yet, so this is allowed
  await assert.rejects(pending, isCode("UNKNOWN_DEVICE", /unregistered while allocWebGPUChecked waited/));
  const made = device.created.at(-1)!;
  assert.equal(made.destroyed, 1, "the buffer made for it was destroyed once");
  assert.equal(ctx.stats().livePointers, 0);
});

test("allocations with {scoped: false} (memory C or Python frees) never join an open ctx.scope(); others are released by it", async () => {
  const ctx = newContext();
  await ctx.setup({ device: asGPU<GPUDevice>(new FakeDevice()) });
  let foreign = 0;
  let inScope = 0;
  await ctx.scope(async () => {
    foreign = ctx.allocWebGPU(64, { owner: "c", scoped: false });
    inScope = await ctx.allocWebGPUChecked(64, { owner: "js" });
  });
  assert.equal(ctx.gpuPointerInfo(foreign).owner, "c", "still live after the scope");
  assert.throws(() => ctx.gpuPointerInfo(inScope), isCode("STALE_POINTER"));
  ctx.freeWebGPU(foreign);
  assert.throws(
    () => ctx.allocWebGPU(64, { scoped: "no" as unknown as boolean }),
    isCode("INVALID_ARGUMENT", /options\.scoped/),
  );
  assert.throws(
    () => ctx.ledger.track({ kind: "tensor", release: () => undefined, scoped: 1 as unknown as boolean }),
    isCode("INVALID_ARGUMENT", /options\.scoped/),
  );
  assert.equal(ctx.stats().livePointers, 0);
});
