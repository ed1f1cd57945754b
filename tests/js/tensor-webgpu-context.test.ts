/** tensor.gpuBuffer through the page context's pointer table (default resolver), on fake WebGPU objects. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { getContext } from "../../js/src/context/index.js";
import { DeviceType } from "../../js/src/dlpack/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { Tensor, setGPUPointerResolver } from "../../js/src/tensor/index.js";
import { asGPU, FakeBuffer, FakeGPU } from "./context-fakes.js";
import { expectError } from "./helpers.js";

test("a webgpu Tensor resolves its pointer in the context, checks the device, and reports stale pointers", async () => {
  setGPUPointerResolver(null); // the default: the page context
  const ctx = getContext();
  await ctx.setup({ gpu: asGPU<GPU>(new FakeGPU()) });
  const buffer = asGPU<GPUBuffer>(new FakeBuffer(64, 0x80 | 0x4, "test"));
  const ptr = ctx.registerGPUBuffer(buffer);
  const t = Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4, 4] });
  assert.equal(t.gpuBuffer, buffer);
  // Through a managed struct and back: same pointer, same buffer.
  const host = createTestHost();
  const back = Tensor.fromManaged(host, t.toManaged(host));
  assert.equal(back.device.deviceType, DeviceType.kDLWebGPU);
  assert.equal(back.gpuBuffer, buffer);
  back.dispose();
  // The tensor claims another device than the pointer's.
  const wrong = Tensor.webgpu({ pointer: ptr, deviceId: 1, dtype: "float32", shape: [4, 4] });
  expectError(() => wrong.gpuBuffer, "INVALID_POINTER", "tensor.device.device_id");
  // Released pointer: the context's STALE_POINTER reaches the caller.
  ctx.freeWebGPU(ptr);
  expectError(() => t.gpuBuffer, "STALE_POINTER");
});
