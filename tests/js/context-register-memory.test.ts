/** Node tests against fake WebGPU: the buffer registerGPUBuffer's check makes is webdlpack's in ctx.memory(). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { asGPU, FakeGPU } from "./context-fakes.js";

const usage = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

test("registerGPUBuffer's check buffer counts under webdlpack, the page's registered buffer under page", async () => {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const gpu = new FakeGPU();
  await ctx.setup({ gpu: asGPU<GPU>(gpu) });
  await ctx.trimMemory(); // setup's staging given back: only what follows is counted
  const bytes = (): Record<string, number> => Object.fromEntries(ctx.memory().owners.map((o) => [o.owner, o.bytes]));
  assert.equal(ctx.memory().totalBytes, 0);
  const pageBuffer = ctx.getWebGPUDevice(0).createBuffer({ size: 2048, usage });
  const ptr = ctx.registerGPUBuffer(pageBuffer, { owned: false });
  const device = gpu.adapter!.devices[0]!;
  const scratch = device.created.find((b) => b.label === "webdlpack register check");
  assert.ok(scratch !== undefined, "the check made its scratch buffer");
  assert.deepEqual(bytes(), { webdlpack: scratch.size, page: 2048 });
  ctx.freeWebGPU(ptr);
  pageBuffer.destroy();
  assert.deepEqual(bytes(), { webdlpack: scratch.size, page: 0 });
});
