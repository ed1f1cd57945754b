/**
 * produceCopiedGPUTensor, the one home of "a new context buffer, filled, as an owning IS_COPIED tensor" (TF.js
 * uploads and bool conversions, copyGPUTensor): it frees the buffer when filling fails, and the tensor frees it
 * on release. Fake WebGPU objects (context-fakes.ts).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { liveProducedTensors, produceCopiedGPUTensor, TFJS_OWNER } from "../../js/src/adapters/producer.js";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { asGPU, FakeGPU } from "./context-fakes.js";

async function readyContext(): Promise<PageContext> {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  await ctx.setup({ gpu: asGPU<GPU>(new FakeGPU()) });
  return ctx;
}

const made = { nbytes: 6, alloc: { deviceId: 0, label: "test" }, dtype: "uint8", shape: [6], owner: TFJS_OWNER };

test("a filled buffer becomes an owning IS_COPIED tensor that frees it on release", async () => {
  const ctx = await readyContext();
  const before = ctx.stats().livePointers;
  let filled = 0;
  const t = await produceCopiedGPUTensor(ctx, made, (pointer) => {
    filled = pointer;
    assert.ok(ctx.gpuPointerToBuffer(pointer).size >= 6);
  });
  assert.equal(t.data, filled);
  assert.equal(t.flags.isCopied, true);
  assert.equal(ctx.stats().livePointers, before + 1);
  t.dispose();
  assert.equal(ctx.stats().livePointers, before);
});

test("a fill that throws (synchronously or not) frees the buffer and rethrows; no tensor is left", async () => {
  const ctx = await readyContext();
  const before = ctx.stats().livePointers;
  const produced = liveProducedTensors();
  const boom = new Error("fill failed");
  await assert.rejects(
    produceCopiedGPUTensor(ctx, made, () => {
      throw boom;
    }),
    (err) => err === boom,
  );
  await assert.rejects(
    produceCopiedGPUTensor(ctx, made, async () => Promise.reject(boom)),
    (err) => err === boom,
  );
  assert.equal(ctx.stats().livePointers, before);
  assert.equal(liveProducedTensors(), produced);
});
