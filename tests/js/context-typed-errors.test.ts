/**
 * Typed errors where docs/errors.md promises them (issue 12, item 5): a BigInt (or any non-number) GPU pointer
 * is INVALID_POINTER, not "Cannot mix BigInt and other types"; an unknown option key of allocWebGPU /
 * allocWebGPUChecked / registerGPUBuffer is INVALID_ARGUMENT naming `options.<key>`. Fake WebGPU objects.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { asGPU, FakeBuffer, FakeGPU } from "./context-fakes.js";
import { expectError } from "./helpers.js";

async function readyContext(): Promise<PageContext> {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  await ctx.setup({ gpu: asGPU<GPU>(new FakeGPU()) });
  return ctx;
}

test("GPU pointers that are not numbers (1n, '1', null) are INVALID_POINTER in gpuPointerToBuffer, gpuPointerInfo, freeWebGPU", async () => {
  const ctx = await readyContext();
  const ptr = ctx.allocWebGPU(16);
  for (const bad of [1n, BigInt(ptr), "1", null, undefined, {}]) {
    expectError(() => ctx.gpuPointerToBuffer(bad as never), "INVALID_POINTER", "ptr");
    expectError(() => ctx.gpuPointerInfo(bad as never), "INVALID_POINTER", "ptr");
    expectError(() => ctx.freeWebGPU(bad as never), "INVALID_POINTER", "ptr");
  }
  assert.ok(ctx.gpuPointerToBuffer(ptr)); // the real pointer is untouched by the refusals
  ctx.freeWebGPU(ptr);
});

test("an unknown option key is INVALID_ARGUMENT naming it: allocWebGPU, allocWebGPUChecked, registerGPUBuffer", async () => {
  const ctx = await readyContext();
  const e = expectError(() => ctx.allocWebGPU(16, { bogus: 1 } as never), "INVALID_ARGUMENT", "options.bogus");
  assert.match(e.message, /deviceId, usage, label, owner, onAsyncError, scoped/);
  await assert.rejects(
    ctx.allocWebGPUChecked(16, { sizee: 4 } as never),
    (err: unknown) =>
      (err as { code?: string; field?: string }).code === "INVALID_ARGUMENT" &&
      (err as { field?: string }).field === "options.sizee",
  );
  const buffer = new FakeBuffer(64, 0x80, "foreign");
  expectError(
    () => ctx.registerGPUBuffer(buffer as never, { owend: true } as never),
    "INVALID_ARGUMENT",
    "options.owend",
  );
  assert.equal(ctx.stats().livePointers, 0); // nothing was allocated or registered by a refused call
  const ok = ctx.allocWebGPU(16, { deviceId: 0, usage: 0x80 | 0x8 | 0x4, label: "x", owner: "t", scoped: false });
  ctx.freeWebGPU(ok);
});
