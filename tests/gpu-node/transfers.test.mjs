// GPU byte movement through the context on a real WebGPU implementation: Dawn in Node (npm `webgpu`), on
// whatever Vulkan driver is found — SwiftShader here (scripts/run-tests.sh gpu sets it up), the H100 on the
// device machine. Ordering, staging reuse, host targets (wasm memory that grows), uploads by both paths, copies,
// clears, typed errors, and device loss mid-transfer (every pending transfer rejects with DEVICE_LOST, nothing
// stays mapped, no staging buffer is left).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create, globals } from "webgpu";
import { getContext, WebDLPackError } from "../../js/dist/index.js";
import { DEFAULT_TRANSFER_PLAN, DeviceTransfers } from "../../js/dist/context/transfers/device-transfers.js";
import { ReadRing } from "../../js/dist/context/transfers/staging.js";
import { classStarts, uploadClasses } from "../../js/dist/context/transfers/calibrate.js";
import { transfersFor } from "../../js/dist/context/transfers/registry.js";

Object.assign(globalThis, globals);
const gpu = create([]);
const MiB = 2 ** 20;

/** A new device with every buffer it creates recorded (to check that none stays mapped). */
async function trackedDevice() {
  const adapter = await gpu.requestAdapter();
  assert.ok(adapter, "a WebGPU adapter (is VK_DRIVER_FILES set? run through scripts/run-tests.sh gpu)");
  const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: 256 * MiB } });
  const created = [];
  const createBuffer = device.createBuffer.bind(device);
  device.createBuffer = (desc) => {
    const b = createBuffer(desc);
    created.push(b);
    return b;
  };
  return { device, created };
}

/** Bytes that differ per position and per seed. */
function bytes(n, seed) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + seed * 13 + (i >> 8)) & 0xff;
  return out;
}

function sameBytes(got, want, what) {
  assert.equal(got.byteLength, want.byteLength, `${what}: length`);
  for (let i = 0; i < want.byteLength; i++)
    if (got[i] !== want[i]) assert.fail(`${what}: byte ${i} is ${got[i]}, expected ${want[i]}`);
}

const ctx = getContext();
let device;

before(async () => {
  ({ device } = await trackedDevice());
  await ctx.setup({ device });
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

describe("measured at setup", () => {
  test("setup measures both upload ways per size, cold and warm, and the plan takes a class per size", () => {
    const stats = ctx.transferStats(0);
    const c = stats.calibration;
    // Largest first, as many sizes as the time budget allowed (a loaded machine measures fewer), at least 16 MiB.
    assert.ok(c && c.upload.length >= 1 && c.upload.at(-1).bytes === 16 * MiB, `figures (${JSON.stringify(c)})`);
    for (const u of c.upload) {
      for (const k of ["writeBufferCold", "stagingCold", "writeBuffer", "staging"])
        assert.ok(u[k] > 0 && Number.isFinite(u[k]), `${k} at ${u.bytes}`);
      // Each decision follows its own figures: warm by the faster, cold only where staging won by twice.
      assert.equal(u.warm, u.staging < u.writeBuffer ? "staging" : "writeBuffer", `warm at ${u.bytes}`);
      assert.equal(u.cold, 2 * u.stagingCold < u.writeBufferCold ? "staging" : "writeBuffer", `cold at ${u.bytes}`);
    }
    assert.deepEqual(
      c.upload.map((u) => u.fromBytes),
      classStarts(c.upload.map((u) => u.bytes)),
    );
    assert.equal(c.makeStaging, c.newStagingMs < c.upload.at(-1).writeBufferCold, "new staging: at the largest size");
    // Large first readbacks in turns through the ready read staging where new staging cost over twice a GPU copy.
    assert.equal(c.readInTurn, c.newReadMs > 2 * c.snapshotMs, `turns (${c.newReadMs} vs ${c.snapshotMs} ms)`);
    const turnBytes = transfersFor(device).plan.read.turnBytes;
    assert.ok(c.readInTurn ? turnBytes >= 4 * 2 ** 10 : turnBytes === 0, `turnBytes ${turnBytes}`);
    const plan = transfersFor(device).plan.write;
    assert.deepEqual(plan.classes, uploadClasses(c.upload));
    assert.equal(plan.makeStaging, c.makeStaging);
    assert.ok(stats.read.kept >= 1, "read staging is ready before the first readback");
    assert.equal(stats.read.inUse + stats.write.inUse, 0);
  });

  test("classes: each size from the geometric middle below it; none below the first that stages", () => {
    assert.deepEqual(classStarts([64, 256, 1024, 4096]), [64, 128, 512, 2048]);
    const f = (fromBytes, cold, warm) => ({ fromBytes, cold, warm });
    const wb = "writeBuffer";
    const st = "staging";
    assert.deepEqual(uploadClasses([f(64, wb, wb), f(128, wb, st), f(512, wb, wb), f(2048, st, st)]), [
      f(128, wb, st),
      f(512, wb, wb),
      f(2048, st, st),
    ]);
    assert.deepEqual(uploadClasses([f(64, wb, wb), f(128, wb, wb)]), []);
  });

  test("a kept buffer of a larger class (up to 64×) serves a smaller request; a much smaller one gets its own", () => {
    const ring = new ReadRing(device, (b) => b.destroy(), 64 * MiB);
    const big = ring.take(4 * MiB);
    ring.give(big);
    assert.ok(ring.hasReady(64 * 1024));
    assert.equal(ring.take(64 * 1024), big, "64 KiB takes the kept 4 MiB buffer");
    ring.give(big);
    assert.equal(ring.hasReady(1024), false);
    const small = ring.take(1024);
    assert.notEqual(small, big);
    assert.equal(small.size, 1024);
    ring.give(small);
    ring.lose();
  });

  test("a class's first upload takes its cold way, later ones its warm way; staging lacked is made meanwhile", async () => {
    // Cold writeBuffer, warm staging (SwiftShader's measured decision from 16 MiB), nothing made ready.
    const plan = {
      ...DEFAULT_TRANSFER_PLAN,
      write: {
        ...DEFAULT_TRANSFER_PLAN.write,
        classes: [{ fromBytes: MiB, cold: "writeBuffer", warm: "staging" }],
        makeStaging: false,
      },
    };
    const t = new DeviceTransfers(device, "test device", (b) => b.destroy(), plan);
    const ptr = await ctx.allocWebGPUChecked(6 * MiB);
    const paths = [];
    for (const seed of [50, 51, 52]) {
      const src = bytes(6 * MiB + 2, seed).subarray(0, 6 * MiB - 2); // odd length: the last piece is padded
      paths.push(t.write(ctx.gpuPointerToBuffer(ptr), 0, src));
      sameBytes(new Uint8Array(await ctx.readback(ptr, { byteLength: 6 * MiB - 2 })), src, `upload ${seed}`);
      await device.queue.onSubmittedWorkDone();
      await new Promise((resolve) => setTimeout(resolve, 20)); // staging is made once the upload's work is done
    }
    assert.deepEqual(paths, ["writeBuffer", "staging", "staging"]);
    // Below the first class: writeBuffer, cold or warm.
    assert.equal(t.write(ctx.gpuPointerToBuffer(ptr), 0, bytes(4096, 3)), "writeBuffer");
    // Cold staging where nothing is ready and new staging is not made: writeBuffer for the lacking pieces.
    const coldStaging = new DeviceTransfers(device, "test device", (b) => b.destroy(), {
      ...plan,
      write: { ...plan.write, classes: [{ fromBytes: MiB, cold: "staging", warm: "writeBuffer" }] },
    });
    assert.equal(coldStaging.write(ctx.gpuPointerToBuffer(ptr), 0, bytes(2 * MiB, 4)), "writeBuffer");
    assert.equal(coldStaging.write(ctx.gpuPointerToBuffer(ptr), 0, bytes(2 * MiB, 5)), "writeBuffer");
    await device.queue.onSubmittedWorkDone();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(coldStaging.stats().write.created, 0, "no staging made for a class whose warm way is writeBuffer");
    t.drain();
    coldStaging.drain();
    ctx.freeWebGPU(ptr);
  });
  test("a class staged warm in measured pieces: odd lengths and offsets land whole, the last piece padded", async () => {
    // Pieces of 256 KiB for the class from 512 KiB (Chromium on the H100 measured them faster than one buffer), first
    // upload cold through writeBuffer; later ones in pieces through kept staging, reused.
    const plan = {
      ...DEFAULT_TRANSFER_PLAN,
      write: {
        ...DEFAULT_TRANSFER_PLAN.write,
        classes: [{ fromBytes: 512 * 1024, cold: "writeBuffer", warm: "staging", pieceBytes: 256 * 1024 }],
        makeStaging: true,
      },
    };
    const t = new DeviceTransfers(device, "test device", (b) => b.destroy(), plan);
    const ptr = await ctx.allocWebGPUChecked(2 * MiB + 64);
    const paths = [];
    for (const [n, offset, seed] of [
      [MiB + 3, 4, 60],
      [MiB + 3, 4, 61],
      [600 * 1024 + 1, 1028, 62],
      [2 * MiB - 2, 36, 63],
      [512 * 1024, 0, 64],
    ]) {
      ctx.clearBuffer(ptr);
      const src = bytes(n, seed);
      paths.push(t.write(ctx.gpuPointerToBuffer(ptr), offset, src));
      const got = new Uint8Array(await ctx.readback(ptr, { byteLength: offset + Math.ceil(n / 4) * 4 + 4 }));
      sameBytes(got.subarray(offset, offset + n), src, `${n} B at ${offset}`);
      assert.ok(
        got.subarray(0, offset).every((b) => b === 0) && got.subarray(offset + n).every((b) => b === 0),
        `${n} B at ${offset}: nothing written around it`,
      );
    }
    assert.deepEqual(paths, ["writeBuffer", "staging", "staging", "staging", "staging"]);
    await device.queue.onSubmittedWorkDone();
    await new Promise((resolve) => setTimeout(resolve, 50)); // mapped again in the background
    const w = t.stats().write;
    assert.ok(w.reused > 0 && w.inUse === 0, JSON.stringify(w));
    t.drain();
    ctx.freeWebGPU(ptr);
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
