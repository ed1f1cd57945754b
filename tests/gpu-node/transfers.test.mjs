// GPU byte movement through the context on a real WebGPU implementation: Dawn in Node (npm `webgpu`), on
// whatever Vulkan driver is found — SwiftShader here (scripts/run-tests.sh gpu sets it up), the H100 on the
// device machine. Ordering, staging reuse, host targets (wasm memory that grows), uploads by both paths, copies,
// clears, typed errors, and device loss mid-transfer (every pending transfer rejects with DEVICE_LOST, nothing
// stays mapped, no staging buffer is left).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { getContext, WebDLPackError } from "../../js/dist/index.js";
import { DEFAULT_TRANSFER_PLAN, DeviceTransfers } from "../../js/dist/context/transfers/device-transfers.js";
import { ReadRing } from "../../js/dist/context/transfers/staging.js";
import { bytes, MiB, sameBytes, setUpTracked, trackedDevice } from "./transfer-helpers.mjs";

const ctx = getContext();
let device;

before(async () => {
  device = await setUpTracked(ctx);
});

after(() => device.destroy());

describe("readback", () => {
  test("sees work submitted before it and nothing submitted after it (one size per path)", async () => {
    for (const n of [4, 1000, 3 * MiB, 9 * MiB + 12]) {
      const ptr = await ctx.allocWebGPUChecked(n);
      const buffer = ctx.gpuPointerToBuffer(ptr);
      const first = bytes(n, 1);
      device.queue.writeBuffer(buffer, 0, first.buffer, 0, n - (n % 4));
      const enc = device.createCommandEncoder();
      enc.clearBuffer(buffer, 0, Math.floor(n / 8) * 4);
      device.queue.submit([enc.finish()]); // not waited for: the readback must still come after it
      const pending = ctx.readback(ptr);
      device.queue.writeBuffer(buffer, 0, bytes(n - (n % 4), 2)); // after the readback: must not be seen
      const got = new Uint8Array(await pending);
      const want = first.slice();
      want.fill(0, 0, Math.floor(n / 8) * 4);
      sameBytes(got.subarray(0, n - (n % 4)), want.subarray(0, n - (n % 4)), `${n} B`);
      ctx.freeWebGPU(ptr);
    }
  });

  test("a compute shader's output is read back without waiting for it", async () => {
    const n = 5 * MiB;
    const ptr = await ctx.allocWebGPUChecked(n);
    const module = device.createShaderModule({
      code: `@group(0) @binding(0) var<storage, read_write> b: array<u32>;
      @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        let i = g.y * 65535u * 64u + g.x; if (i < arrayLength(&b)) { b[i] = i * 3u + 1u; } }`,
    });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const bind = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: ctx.gpuPointerToBuffer(ptr) } }],
    });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(Math.ceil(n / 4 / 64));
    pass.end();
    device.queue.submit([enc.finish()]);
    const words = new Uint32Array(await ctx.readback(ptr));
    for (let i = 0; i < words.length; i += 997) assert.equal(words[i], (i * 3 + 1) >>> 0, `word ${i}`);
    assert.equal(words[words.length - 1], ((words.length - 1) * 3 + 1) >>> 0);
    ctx.freeWebGPU(ptr);
  });

  test("readbackInto wasm memory that grows while the readback waits, at an odd offset and length", async () => {
    const n = 6 * MiB + 3;
    const ptr = await ctx.allocWebGPUChecked(n + 16);
    const want = bytes(n + 13, 4);
    ctx.upload(ptr, want.subarray(0, n + 13 - ((n + 13) % 4)));
    const memory = new WebAssembly.Memory({ initial: 100, maximum: 1000 });
    const target = { memory, address: 4097, byteLength: n };
    const pending = ctx.readbackInto(ptr, target, { byteOffset: 5 });
    memory.grow(200); // detaches the old buffer: the context must re-derive its view
    await pending;
    sameBytes(new Uint8Array(memory.buffer, 4097, n), want.subarray(5, 5 + n), "wasm memory");
    ctx.freeWebGPU(ptr);
  });

  test("many concurrent readbacks of several sizes all get their own bytes; staging comes back", async () => {
    const sizes = [16, 4096, 300_000, 4 * MiB, 4 * MiB + 4, 12 * MiB];
    const ptrs = await Promise.all(sizes.map((n) => ctx.allocWebGPUChecked(n)));
    sizes.forEach((n, k) => ctx.upload(ptrs[k], bytes(n, 10 + k)));
    const rounds = await Promise.all([0, 1, 2].map(() => Promise.all(ptrs.map((p) => ctx.readback(p)))));
    for (const got of rounds) sizes.forEach((n, k) => sameBytes(new Uint8Array(got[k]), bytes(n, 10 + k), `${n} B`));
    const s = ctx.transferStats(0);
    assert.equal(s.pending, 0);
    assert.equal(s.read.inUse, 0, "every read staging buffer was given back");
    assert.ok(s.read.reused > 0, "staging buffers were reused across readbacks");
    ptrs.forEach((p) => ctx.freeWebGPU(p));
  });

  test("typed errors: range outside the buffer, a target too small, a bad target", async () => {
    const ptr = await ctx.allocWebGPUChecked(64);
    const size = ctx.gpuPointerInfo(ptr).size; // the allocation may be rounded up
    await assert.rejects(
      ctx.readback(ptr, { byteOffset: size - 4, byteLength: 8 }),
      (e) => e instanceof WebDLPackError && e.code === "OUT_OF_BOUNDS",
    );
    await assert.rejects(
      ctx.readbackInto(ptr, new Uint8Array(8), { byteLength: 16 }),
      (e) => e.code === "INVALID_ARGUMENT",
    );
    await assert.rejects(ctx.readbackInto(ptr, { address: 0, byteLength: 4 }), (e) => e.code === "INVALID_ARGUMENT");
    assert.equal(ctx.transferStats(0).read.inUse, 0);
    ctx.freeWebGPU(ptr);
  });
});

describe("staging ring", () => {
  test("a buffer given back while mapped is never handed out again", async () => {
    const destroyed = [];
    const ring = new ReadRing(
      device,
      (b) => {
        destroyed.push(b);
        b.destroy();
      },
      64 * MiB,
    );
    const a = ring.take(1000);
    await a.mapAsync(GPUMapMode.READ);
    ring.give(a); // still mapped: must be dropped, not kept
    assert.deepEqual(destroyed, [a]);
    const b = ring.take(1000);
    assert.notEqual(b, a);
    assert.equal(b.mapState, "unmapped");
    ring.give(b);
    assert.equal(ring.take(1000), b, "an unmapped buffer is reused");
    assert.equal(b.mapState, "unmapped");
    ring.lose();
  });
});

describe("upload, copy, clear", () => {
  test("uploads through writeBuffer (small) and mapped staging (large), odd lengths padded with zeros", async () => {
    // ctx.upload takes the adapter's plan (on SwiftShader: writeBuffer at every size); a DeviceTransfers with the
    // GPU plan on the same device takes mapped staging from 1 MiB. Both are checked, staging buffers reused.
    const gpuPlan = new DeviceTransfers(device, "test device", (b) => b.destroy(), DEFAULT_TRANSFER_PLAN);
    const paths = new Set();
    for (const n of [3, 1001, 2 * MiB + 1, 9 * MiB + 2]) {
      for (const via of ["ctx", "gpu plan", "gpu plan again"]) {
        const ptr = await ctx.allocWebGPU(n + 8);
        ctx.clearBuffer(ptr);
        const src = bytes(n, 20 + (n % 7));
        if (via === "ctx") ctx.upload(ptr, src, { byteOffset: 4 });
        else paths.add(gpuPlan.write(ctx.gpuPointerToBuffer(ptr), 4, src));
        const got = new Uint8Array(await ctx.readback(ptr, { byteOffset: 0, byteLength: 4 + Math.ceil(n / 4) * 4 }));
        sameBytes(got.subarray(4, 4 + n), src, `upload ${n} B via ${via}`);
        assert.deepEqual([...got.subarray(0, 4)], [0, 0, 0, 0]);
        for (let i = 4 + n; i < got.length; i++) assert.equal(got[i], 0, `padding byte ${i}`);
        ctx.freeWebGPU(ptr);
      }
    }
    assert.deepEqual([...paths].sort(), ["staging", "writeBuffer"]);
    await device.queue.onSubmittedWorkDone();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the write ring maps its buffers again in the background
    const w = gpuPlan.stats().write;
    assert.ok(w.reused > 0, `mapped staging was reused (${JSON.stringify(w)})`);
    assert.equal(w.inUse, 0);
    gpuPlan.drain();
  });

  test("upload from wasm memory and from a SharedArrayBuffer view", async () => {
    const memory = new WebAssembly.Memory({ initial: 2 });
    new Uint8Array(memory.buffer).set(bytes(5000, 30), 100);
    const ptr = await ctx.allocWebGPUChecked(5000);
    ctx.upload(ptr, { memory, address: 100, byteLength: 5000 });
    sameBytes(new Uint8Array(await ctx.readback(ptr)), bytes(5000, 30), "from wasm memory");
    const shared = new Uint8Array(new SharedArrayBuffer(4096));
    shared.set(bytes(4096, 31));
    ctx.upload(ptr, shared);
    sameBytes(
      new Uint8Array(await ctx.readback(ptr, { byteLength: 4096 })),
      bytes(4096, 31),
      "from a SharedArrayBuffer",
    );
    ctx.freeWebGPU(ptr);
  });

  test("copyBuffer and clearBuffer are ordered on the queue; bad arguments throw typed errors first", async () => {
    const n = 3 * MiB;
    const a = await ctx.allocWebGPUChecked(n);
    const b = await ctx.allocWebGPUChecked(n);
    ctx.upload(a, bytes(n, 40));
    ctx.copyBuffer(a, b, { srcOffset: 1024, dstOffset: 0, byteLength: n - 1024 });
    ctx.clearBuffer(a, { byteOffset: 0, byteLength: 1024 });
    sameBytes(new Uint8Array(await ctx.readback(b, { byteLength: n - 1024 })), bytes(n, 40).subarray(1024), "copy");
    assert.deepEqual(new Uint8Array(await ctx.readback(a, { byteLength: 1024 })), new Uint8Array(1024));
    assert.throws(
      () => ctx.copyBuffer(a, b, { srcOffset: 2, byteLength: 4 }),
      (e) => e.code === "UNSUPPORTED" && e.field === "srcOffset",
    );
    assert.throws(
      () => ctx.copyBuffer(a, b, { srcOffset: n, byteLength: 4 }),
      (e) => e.code === "OUT_OF_BOUNDS",
    );
    assert.throws(
      () => ctx.upload(a, new Uint8Array(8), { byteOffset: 2 }),
      (e) => e.code === "UNSUPPORTED",
    );
    assert.throws(
      () => ctx.upload(a, new Uint8Array(8), { byteOffset: n }),
      (e) => e.code === "OUT_OF_BOUNDS",
    );
    ctx.freeWebGPU(a);
    ctx.freeWebGPU(b);
  });
});

describe("device loss", () => {
  test("loss mid-transfer rejects every pending transfer with DEVICE_LOST and leaves nothing mapped or kept", async () => {
    const { device: doomed, created } = await trackedDevice();
    const id = ctx.registerWebGPUDevice(doomed);
    const sizes = [1024, 5 * MiB, 20 * MiB];
    const ptrs = [];
    for (const n of sizes) {
      const p = await ctx.allocWebGPUChecked(n, { deviceId: id });
      ctx.upload(p, bytes(n, 50));
      ptrs.push(p);
    }
    await ctx.readback(ptrs[0]); // warm the ring: a kept buffer must be destroyed too
    const pending = [];
    for (let k = 0; k < 3; k++) for (const p of ptrs) pending.push(ctx.readback(p));
    pending.push(ctx.readbackInto(ptrs[1], new Uint8Array(5 * MiB)));
    assert.ok(ctx.transferStats(id).pending > 0, "transfers are in flight");
    doomed.destroy();
    const results = await Promise.allSettled(pending);
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.ok(r.reason instanceof WebDLPackError, String(r.reason));
      assert.equal(r.reason.code, "DEVICE_LOST");
    }
    const s = ctx.transferStats(id);
    assert.equal(s.pending, 0);
    assert.equal(s.read.inUse + s.write.inUse, 0, "no staging buffer is out");
    assert.equal(s.read.kept + s.write.kept, 0, "no staging buffer is kept");
    for (const b of created) assert.equal(b.mapState, "unmapped", `${b.label} stays mapped`);
    assert.throws(
      () => ctx.upload(ptrs[0], new Uint8Array(4)),
      (e) => e.code === "DEVICE_LOST",
    );
    await assert.rejects(ctx.readback(ptrs[0]), (e) => e.code === "DEVICE_LOST");
    for (const p of ptrs) ctx.freeWebGPU(p);
    ctx.unregisterWebGPUDevice(id);
  });
});
