/** tensor.ts's webgpu storage: a GPU pointer with no CPU view, its GPUBuffer resolved lazily, exported and imported zero-copy. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DeviceType, writeManagedTensorVersioned } from "../../js/src/dlpack/index.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { Tensor, setGPUPointerResolver, trimExportBlocks } from "../../js/src/tensor/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError } from "./helpers.js";

test("webgpu tensors: lazy GPUBuffer via the resolver; no CPU view", () => {
  const host = createTestHost();
  const t = Tensor.webgpu({ pointer: 0x90000010, deviceId: 2, dtype: "float16", shape: [8, 8] });
  assert.equal(t.storage, "webgpu");
  assert.deepEqual(t.device, { deviceType: DeviceType.kDLWebGPU, deviceId: 2 });
  expectError(() => t.view, "UNSUPPORTED", "tensor.storage");
  expectError(() => t.toArray(), "UNSUPPORTED", "tensor.storage");
  // Default resolver: the page context's pointer table, which does not know this pointer.
  assert.throws(
    () => t.gpuBuffer,
    (err: unknown) => err instanceof WebDLPackError && err.code !== "UNSUPPORTED",
  );
  const fake = { label: "fake" } as unknown as GPUBuffer;
  const seen: number[][] = [];
  setGPUPointerResolver((ptr, dev) => {
    seen.push([ptr, dev]);
    return fake;
  });
  assert.equal(t.gpuBuffer, fake);
  assert.deepEqual(seen, [[0x90000010, 2]]);
  setGPUPointerResolver(null);
  expectError(() => Tensor.fromTypedArray(new Uint8Array(1)).gpuBuffer, "UNSUPPORTED", "tensor.storage");
  expectError(
    () => Tensor.webgpu({ pointer: 0, deviceId: 0, dtype: "float32", shape: [1] }),
    "NULL_POINTER",
    "pointer",
  );
  expectError(
    () => Tensor.webgpu({ pointer: 16, deviceId: -1, dtype: "float32", shape: [1] }),
    "BAD_DEVICE",
    "tensor.device.device_id",
  );
  // Export and re-import: zero-copy, same pointer.
  const a = t.toManaged(host, { copy: false });
  const back = Tensor.fromManaged(host, a);
  assert.equal(back.storage, "webgpu");
  assert.equal(back.data, 0x90000010);
  assert.deepEqual([...back.shape], [8, 8]);
  back.dispose();
  assert.equal(trimExportBlocks(host), 1);
  assert.equal(host.liveAllocations, 0);
  // A producer's WebGPU struct.
  const g = writeManagedTensorVersioned(host, {
    data: 0x20,
    device: { deviceType: DeviceType.kDLWebGPU, deviceId: 0 },
    dtype: "int8",
    shape: [4],
  });
  const gt = Tensor.fromManaged(host, g);
  assert.equal(gt.data, 0x20);
  gt.dispose(); // deleter NULL: nothing to call
  host.free(g);
});
