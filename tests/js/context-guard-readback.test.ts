/** Node tests of device guards (per-owner destroy) and ordered readback, against fake WebGPU. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { GPUUsage } from "../../js/src/context/ground/create.js";
import { unwrapDevice } from "../../js/src/context/devices/guard.js";
import { asGPU, type FakeBuffer, type FakeDevice, FakeGPU } from "./context-fakes.js";
import { isCode } from "./helpers.js";

async function ready(): Promise<{ ctx: PageContext; device: FakeDevice }> {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU();
  await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  return { ctx, device: gpu.adapter!.devices[0]! };
}

test("guards: one per owner, methods bound to the real device; destroy() drops only that owner's hold, never the device, and says so", async () => {
  const { ctx, device } = await ready();
  const raw = ctx.getWebGPUDevice(0);
  const ort = ctx.getWebGPUDevice(0, { owner: "onnxruntime" });
  const tf = ctx.getWebGPUDevice(0, { owner: "tfjs" });
  assert.notEqual(ort, raw);
  assert.equal(ctx.getWebGPUDevice(0, { owner: "onnxruntime" }), ort, "same owner, same guard");
  assert.equal(unwrapDevice(ort), raw);
  assert.equal(ort.createBuffer, ort.createBuffer, "stable method identity");
  const made = ort.createBuffer({ size: 16, usage: GPUUsage.STORAGE });
  assert.equal(device.created.at(-1), made as unknown as FakeBuffer, "forwarded to the real device");
  assert.equal(ort.queue, raw.queue);
  assert.equal(ort.limits, raw.limits);
  assert.equal(ctx.registerWebGPUDevice(tf), 0, "a guard registers as its real device");
  assert.deepEqual(ctx.stats().devices[0]!.guardOwners, ["onnxruntime", "tfjs"]);

  let lost = false;
  void raw.lost.then(() => {
    lost = true;
  });
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (msg: unknown) => {
    warnings.push(String(msg));
  };
  try {
    ort.destroy();
    ort.destroy(); // a second destroy by the same owner is a no-op
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /"onnxruntime" called destroy\(\) on its guard.*other frameworks: tfjs.*ctx\.getWebGPUDevice\(id\)\.destroy\(\)/,
    );
    assert.deepEqual(ctx.stats().devices[0]!.guardOwners, ["tfjs"]);
    const again = ctx.getWebGPUDevice(0, { owner: "onnxruntime" });
    assert.notEqual(again, ort, "a new guard after releasing");
    ort.destroy(); // the old guard no longer holds anything
    assert.deepEqual(ctx.stats().devices[0]!.guardOwners, ["tfjs", "onnxruntime"]);
    // Every framework leaves: the device stays, webdlpack keeps allocating on it.
    tf.destroy();
    again.destroy();
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(lost, false, "guards never destroy the context's device");
    assert.deepEqual(ctx.stats().devices[0]!.guardOwners, []);
    assert.match(warnings.at(-1)!, /other frameworks: none/);
    const p = await ctx.allocWebGPUChecked(16, { owner: "python" });
    assert.ok(ctx.gpuPointerToBuffer(p));
    ctx.freeWebGPU(p);
  } finally {
    console.warn = warn;
  }
  // Destroying the raw device is how a page really ends it.
  raw.destroy();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(lost, true);
  assert.throws(() => ctx.getWebGPUDevice(0, { owner: "tfjs" }), isCode("DEVICE_LOST"));
  assert.throws(() => ctx.getWebGPUDevice(0, { owner: "" }), isCode("DEVICE_LOST"));
});

test("guard owner must be a non-empty string", async () => {
  const { ctx } = await ready();
  assert.throws(() => ctx.getWebGPUDevice(0, { owner: "" }), isCode("INVALID_ARGUMENT", /options\.owner/));
  assert.throws(
    () => ctx.getWebGPUDevice(0, { owner: 3 as unknown as string }),
    isCode("INVALID_ARGUMENT", /options\.owner/),
  );
  assert.equal(ctx.getWebGPUDevice(0, {}), ctx.getWebGPUDevice(0));
});

test("readback copies after submitted work, handles unaligned ranges, pools staging buffers", async () => {
  const { ctx, device } = await ready();
  const made = device.created.length; // setup keeps read staging ready (1 MiB buffers: too large for 10 bytes)
  const kept = ctx.stats().devices[0]!.stagingBuffers;
  const p = await ctx.allocWebGPUChecked(10);
  const buffer = ctx.gpuPointerToBuffer(p);
  device.queue.writeBuffer(buffer as unknown as FakeBuffer, 0, new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
  const all = new Uint8Array(await ctx.readback(p));
  assert.deepEqual([...all], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "default length: the requested 10 bytes");
  const middle = new Uint8Array(await ctx.readback(p, { byteOffset: 3, byteLength: 5 }));
  assert.deepEqual([...middle], [3, 4, 5, 6, 7]);
  const stagingMade = device.created
    .slice(made)
    .filter((b) => b.usage === (GPUUsage.MAP_READ | GPUUsage.COPY_DST)).length;
  assert.equal(stagingMade, 1, "one staging buffer, reused");
  assert.equal(ctx.stats().devices[0]!.stagingBuffers, kept + 1);
  assert.equal(new Uint8Array(await ctx.readback(p, { byteOffset: 4, byteLength: 0 })).length, 0);

  const view = new Float32Array(2);
  const src = new Float32Array([1.5, -2.25]);
  device.queue.writeBuffer(buffer as unknown as FakeBuffer, 0, src);
  await ctx.readbackInto(p, view);
  assert.deepEqual([...view], [1.5, -2.25]);
  // Into wasm memory by address: the view is made after the await, so growth in between is fine.
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 4 });
  const pending = ctx.readbackInto(p, { memory, address: 8, byteLength: 8 });
  const before = memory.buffer;
  memory.grow(1); // detaches `before`
  await pending;
  assert.equal(before.byteLength, 0);
  assert.deepEqual([...new Float32Array(memory.buffer, 8, 2)], [1.5, -2.25]);
  // A plain view on memory that grows during the await is detached: a typed error says what to do.
  const stale = new Uint8Array(memory.buffer, 0, 8);
  const late = ctx.readbackInto(p, stale);
  memory.grow(1);
  await assert.rejects(late, isCode("INVALID_ARGUMENT", /detached.*\{memory, address, byteLength\}/));
});

test("readback errors: bounds, usage, target, stale pointer, lost device", async () => {
  const { ctx, device } = await ready();
  const p = await ctx.allocWebGPUChecked(16);
  await assert.rejects(
    ctx.readback(p, { byteOffset: 250, byteLength: 16 }),
    isCode("OUT_OF_BOUNDS", /outside the 256-byte buffer/),
  );
  await assert.rejects(ctx.readback(p, { byteOffset: -1 }), isCode("INVALID_ARGUMENT", /byteOffset/));
  await assert.rejects(ctx.readback(p, { byteLength: 1.5 }), isCode("INVALID_ARGUMENT", /byteLength/));
  const noCopy = await ctx.allocWebGPUChecked(16, { usage: GPUUsage.STORAGE });
  await assert.rejects(ctx.readback(noCopy), isCode("INVALID_ARGUMENT", /COPY_SRC/));
  await assert.rejects(
    ctx.readbackInto(p, { memory: new WebAssembly.Memory({ initial: 1 }), address: 65530, byteLength: 16 }),
    isCode("OUT_OF_BOUNDS", /outside wasm memory/),
  );
  await assert.rejects(ctx.readbackInto(p, {} as never), isCode("INVALID_ARGUMENT", /target/));
  // Wasm targets the whole-target shortcut does not take get the general path's typed errors.
  const memory = new WebAssembly.Memory({ initial: 1 });
  await assert.rejects(
    ctx.readbackInto(p, { memory, address: 8.5, byteLength: 16 }),
    isCode("INVALID_ARGUMENT", /address/),
  );
  await assert.rejects(
    ctx.readbackInto(p, { memory, address: -16, byteLength: 16 }),
    isCode("OUT_OF_BOUNDS", /outside wasm memory/),
  );
  await assert.rejects(
    ctx.readbackInto(p, { memory, address: 0, byteLength: 1.5 }),
    isCode("INVALID_ARGUMENT", /byteLength/),
  );
  await assert.rejects(
    ctx.readbackInto(p, { memory, address: 0, byteLength: 4096 }),
    isCode("OUT_OF_BOUNDS", /outside the 256-byte buffer/),
  );
  // A {buffer}-holder that is not a WebAssembly.Memory still works, through the general path.
  ctx.upload(p, new Uint8Array(16).fill(9));
  const holder = { buffer: new ArrayBuffer(64) };
  await ctx.readbackInto(p, { memory: holder, address: 16, byteLength: 16 });
  assert.deepEqual([...new Uint8Array(holder.buffer, 12, 24)], [0, 0, 0, 0, ...Array(16).fill(9), 0, 0, 0, 0]);
  await ctx.readbackInto(p, { memory, address: 32, byteLength: 16 });
  assert.deepEqual([...new Uint8Array(memory.buffer, 28, 24)], [0, 0, 0, 0, ...Array(16).fill(9), 0, 0, 0, 0]);
  ctx.freeWebGPU(noCopy);
  await assert.rejects(ctx.readback(noCopy), isCode("STALE_POINTER"));
  device.destroy();
  await new Promise((r) => setTimeout(r, 0));
  await assert.rejects(ctx.readback(p), isCode("DEVICE_LOST"));
});
