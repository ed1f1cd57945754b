/**
 * Libraries that record GPU work and submit it later (context/transfers/queue-users.ts), against fake WebGPU: every
 * transfer first submits what they recorded, never while the library is inside its own guarded createBuffer; TF.js
 * registered that way (adapters/tfjs-backend.ts flushTfjsFirst) with a fake backend that records like
 * tfjs-backend-webgpu 4.x (an open compute pass, an encoder submitted by submitQueue).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { GPUUsage } from "../../js/src/context/ground/create.js";
import { addQueueUser, flushQueueUsers, queueUsers } from "../../js/src/context/transfers/queue-users.js";
import { flushTfjsFirst } from "../../js/src/adapters/tfjs-backend.js";
import type { TfjsWebGPUBackendInternals } from "../../js/src/adapters/framework-types.js";
import { asGPU, type FakeBuffer, type FakeEncoder, FakeGPU } from "./context-fakes.js";

const usage = GPUUsage.STORAGE | GPUUsage.COPY_SRC | GPUUsage.COPY_DST;

/** A context on a fake device whose createBuffer first runs `hooks` (as a memory pressure handler would run). */
async function ready() {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU();
  const hooks: (() => void)[] = [];
  // Patched before setup, which binds the device's createBuffer for its meter.
  const adapter = gpu.adapter!;
  const requestDevice = adapter.requestDevice.bind(adapter);
  adapter.requestDevice = async (desc) => {
    const device = await requestDevice(desc);
    const create = device.createBuffer.bind(device);
    device.createBuffer = (d) => {
      for (const hook of hooks) hook();
      return create(d);
    };
    return device;
  };
  await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  return { ctx, hooks };
}

/**
 * tfjs-backend-webgpu's recording, in small: an op allocates its output through the device (its guard) with its
 * compute pass open, then records into the pass; submitQueue submits the encoder (its pass must be ended first).
 */
class FakeTfjsBackend {
  commandEncoder: FakeEncoder | null = null;
  computePassEncoder: object | null = null;
  disposed = false;
  /** What happened, in order: "end", "submit", "submit with the pass open", "submit mid-op". */
  readonly log: string[] = [];
  #inOp = false;
  constructor(readonly device: GPUDevice) {}

  /** An op that copies `src` (a fake buffer) into a new output buffer: recorded, not submitted. */
  copyOp(src: FakeBuffer): FakeBuffer {
    this.#inOp = true;
    try {
      this.commandEncoder ??= this.device.createCommandEncoder() as unknown as FakeEncoder;
      this.computePassEncoder ??= {};
      const out = this.device.createBuffer({ size: src.size, usage }) as unknown as FakeBuffer;
      this.commandEncoder.copyBufferToBuffer(src, 0, out, 0, src.size);
      return out;
    } finally {
      this.#inOp = false;
    }
  }

  endComputePassEncoder(): void {
    if (this.computePassEncoder === null) return;
    this.computePassEncoder = null;
    this.log.push("end");
  }

  submitQueue(): void {
    if (this.#inOp) this.log.push("submit mid-op");
    if (this.computePassEncoder !== null) this.log.push("submit with the pass open");
    this.device.queue.submit([this.commandEncoder!.finish() as unknown as GPUCommandBuffer]);
    this.commandEncoder = null;
    this.log.push("submit");
  }
}

/** A webdlpack buffer holding `values` (float32), and its pointer. */
async function filled(ctx: PageContext, values: number[]): Promise<{ ptr: number; buffer: FakeBuffer }> {
  const ptr = await ctx.allocWebGPUChecked(values.length * 4);
  ctx.upload(ptr, new Float32Array(values));
  return { ptr, buffer: ctx.gpuPointerToBuffer(ptr) as unknown as FakeBuffer };
}

const floats = (bytes: ArrayBuffer) => [...new Float32Array(bytes)];
/** The first four floats of a fake buffer (allocations are rounded up to a size class). */
const first4 = (b: FakeBuffer) => [...new Float32Array(b.data.buffer, 0, 4)];
const FOUR = { byteLength: 16 };

test("TF.js's recorded op reaches a readback right after it; a write after a recorded read comes after that read", async () => {
  const { ctx } = await ready();
  const tfjs = new FakeTfjsBackend(ctx.getWebGPUDevice(0, { owner: "tfjs" }));
  flushTfjsFirst(tfjs as unknown as TfjsWebGPUBackendInternals);
  flushTfjsFirst(tfjs as unknown as TfjsWebGPUBackendInternals); // once per backend
  const x = await filled(ctx, [1, 2, 3, 4]);
  // The op's output, registered as it is: the readback submits what TF.js recorded first.
  const out = tfjs.copyOp(x.buffer);
  const outPtr = ctx.registerGPUBuffer(asGPU<GPUBuffer>(out), { owned: false });
  assert.equal(tfjs.commandEncoder !== null, true, "recorded, not submitted");
  assert.deepEqual(floats(await ctx.readback(outPtr, FOUR)), [1, 2, 3, 4]);
  assert.deepEqual(tfjs.log, ["end", "submit"], "its pass ended, then submitted");
  // A recorded op reads x; an upload into x right after: the op sees x as it was.
  const out2 = tfjs.copyOp(x.buffer);
  ctx.upload(x.ptr, new Float32Array([5, 6, 7, 8]));
  assert.deepEqual(first4(out2), [1, 2, 3, 4]);
  // The same for a GPU copy and a clear into x.
  const y = await filled(ctx, [9, 9, 9, 9]);
  const out3 = tfjs.copyOp(x.buffer);
  ctx.copyBuffer(y.ptr, x.ptr);
  const out4 = tfjs.copyOp(x.buffer);
  ctx.clearBuffer(x.ptr);
  assert.deepEqual(first4(out3), [5, 6, 7, 8]);
  assert.deepEqual(first4(out4), [9, 9, 9, 9]);
  assert.equal(tfjs.log.filter((e) => e === "submit").length, 4);
  assert.equal(tfjs.log.includes("submit with the pass open"), false);
  for (const p of [outPtr, x.ptr, y.ptr]) ctx.freeWebGPU(p);
});

test("never mid-op: a transfer from inside TF.js's own createBuffer leaves its work recorded; the next one submits it", async () => {
  const { ctx, hooks } = await ready();
  const tfjs = new FakeTfjsBackend(ctx.getWebGPUDevice(0, { owner: "tfjs" }));
  flushTfjsFirst(tfjs as unknown as TfjsWebGPUBackendInternals);
  const x = await filled(ctx, [1, 2, 3, 4]);
  tfjs.copyOp(x.buffer); // recorded: something to submit
  // A pressure handler, say, that reads back whenever a buffer is made.
  const reads: Promise<ArrayBuffer>[] = [];
  let reading = false; // (the readback's own staging is made through the same createBuffer)
  hooks.push(() => {
    if (reading) return;
    reading = true;
    try {
      reads.push(ctx.readback(x.ptr, FOUR));
    } finally {
      reading = false;
    }
  });
  const out = tfjs.copyOp(x.buffer);
  assert.equal(reads.length, 1, "a readback ran inside TF.js's createBuffer");
  assert.deepEqual(tfjs.log, [], "and did not make TF.js submit");
  hooks.length = 0;
  assert.deepEqual(floats(await reads[0]!), [1, 2, 3, 4]);
  // After the op, the next transfer submits both recorded ops.
  await ctx.readback(x.ptr);
  assert.deepEqual(tfjs.log, ["end", "submit"]);
  assert.deepEqual(first4(out), [1, 2, 3, 4]);
  // webdlpack's own createBuffer (another owner) is not TF.js's: a transfer from inside it does submit.
  tfjs.copyOp(x.buffer);
  hooks.push(() => flushQueueUsers(ctx.getWebGPUDevice(0)));
  const p = await ctx.allocWebGPUChecked(16);
  hooks.length = 0;
  assert.deepEqual(tfjs.log, ["end", "submit", "end", "submit"]);
  ctx.freeWebGPU(p);
  ctx.freeWebGPU(x.ptr);
});

test("owners apart: a user is skipped only inside its own owner's call; one without an owner always runs; removal", async () => {
  const { ctx, hooks } = await ready();
  const raw = ctx.getWebGPUDevice(0);
  const calls: string[] = [];
  const before = queueUsers;
  const offA = addQueueUser(raw, () => calls.push("a"), "fw-a");
  const offB = addQueueUser(raw, () => calls.push("b"), "fw-b");
  const offAny = addQueueUser(raw, () => calls.push("any"));
  assert.equal(queueUsers, before + 3);
  hooks.push(() => flushQueueUsers(raw));
  ctx.getWebGPUDevice(0, { owner: "fw-a" }).createBuffer({ size: 16, usage });
  assert.deepEqual(calls.splice(0), ["b", "any"]);
  ctx.getWebGPUDevice(0, { owner: "fw-b" }).createBuffer({ size: 16, usage });
  assert.deepEqual(calls.splice(0), ["a", "any"]);
  hooks.length = 0;
  // A guard's createBuffer that throws still leaves its owner's call (the next flush runs it).
  const guard = ctx.getWebGPUDevice(0, { owner: "fw-a" });
  hooks.push(() => {
    throw new Error("refused");
  });
  assert.throws(() => guard.createBuffer({ size: 16, usage }), /refused/);
  hooks.length = 0;
  flushQueueUsers(raw);
  assert.deepEqual(calls.splice(0), ["a", "b", "any"]);
  offA();
  offA(); // idempotent
  offB();
  offAny();
  assert.equal(queueUsers, before);
  flushQueueUsers(raw);
  assert.deepEqual(calls, []);
});

test("a disposed TF.js backend is never submitted again and its queue user goes", async () => {
  const { ctx } = await ready();
  const tfjs = new FakeTfjsBackend(ctx.getWebGPUDevice(0, { owner: "tfjs" }));
  const before = queueUsers;
  flushTfjsFirst(tfjs as unknown as TfjsWebGPUBackendInternals);
  assert.equal(queueUsers, before + 1);
  const x = await filled(ctx, [1, 2, 3, 4]);
  tfjs.copyOp(x.buffer);
  tfjs.disposed = true; // tfjs-backend-webgpu's dispose() sets it; its buffers are gone
  await ctx.readback(x.ptr);
  assert.deepEqual(tfjs.log, []);
  assert.equal(queueUsers, before);
  // A backend without submitQueue (another TF.js) is not registered.
  flushTfjsFirst({ device: ctx.getWebGPUDevice(0) } as TfjsWebGPUBackendInternals);
  assert.equal(queueUsers, before);
  ctx.freeWebGPU(x.ptr);
});
