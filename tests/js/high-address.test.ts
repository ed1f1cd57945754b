/**
 * Addresses at and above 2 GiB: every address is unsigned (`>>> 0`), so a
 * struct, its arrays and its data at 0x80000000+ decode, view and export
 * like low ones. Uses a real WebAssembly.Memory of 2 GiB + 64 KiB (checked
 * to work on this machine: pages are reserved, not touched).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DeviceType, readDLTensor, readManagedTensorVersioned, toAddress } from "../../js/src/dlpack/index.js";
import { Tensor, trimExportBlocks } from "../../js/src/tensor/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError, produce } from "./helpers.js";

test("codec, Tensor view and export with every address >= 0x80000000", () => {
  const host = createTestHost(32769, 32800, { heapBase: 0x80000000 });
  assert.ok(host.buffer.byteLength > 2 ** 31);
  const prod = produce(
    host,
    { device: { deviceType: DeviceType.kDLCPU, deviceId: 0 }, dtype: "float64", shape: [2, 3], strides: [1, 2] },
    48,
    {
      fill: (i) => (i % 8 === 7 ? 0x40 : 0), // float64 2.0 in every element
    },
  );
  assert.ok(prod.address >= 0x80000000 && prod.data >= 0x80000000);
  const d = readManagedTensorVersioned(host, prod.address);
  assert.equal(d.data, prod.data);
  assert.ok(d.data > 0, "unsigned, never negative");
  assert.equal(d.address, prod.address);
  // The same struct named by its signed int32 view (what a wasm i32 gives JS) is the same address.
  assert.equal(readManagedTensorVersioned(host, prod.address | 0).address, prod.address);
  assert.equal(readDLTensor(host, (prod.address + 24) | 0).data, prod.data);

  const t = Tensor.fromManaged(host, prod.address);
  assert.equal(t.data, prod.data);
  assert.deepEqual([...(t.toArray() as Float64Array)], [2, 2, 2, 2, 2, 2]);
  const exported = t.toManaged(host);
  assert.ok(exported >= 0x80000000);
  const e = readManagedTensorVersioned(host, exported);
  assert.equal(e.data, prod.data);
  host.callVoidPointer(e.deleter, exported);
  t.dispose();
  assert.equal(prod.calls(), 1);
  assert.equal(host.liveAllocations, 1, "the export's block, kept for a later export");
  const again = Tensor.wasmView(host, { data: prod.data, dtype: "float64", shape: [2, 3], strides: [1, 2] });
  const reused = again.toManaged(host);
  assert.equal(reused, exported, "the kept block, at a high address");
  const r = readManagedTensorVersioned(host, reused);
  const words = new DataView(host.buffer, reused + 24 + 20, 8); // dl_tensor.shape, dl_tensor.strides
  const arrays = [words.getUint32(0, true), words.getUint32(4, true)];
  assert.deepEqual(arrays, [reused + 64, reused + 80], "its own arrays, above 2 GiB");
  assert.deepEqual([...r.shape, ...r.strides!], [2, 3, 1, 2]);
  host.callVoidPointer(r.deleter, reused);
  assert.equal(trimExportBlocks(host), 1);
  assert.equal(host.liveAllocations, 0);

  // Contiguous view at a high address, and growth past it.
  const p = host.malloc(16);
  const v = Tensor.wasmView(host, { data: p, dtype: "int32", shape: [4] });
  (v.view as Int32Array).set([1, 2, 3, -4]);
  assert.equal(v.view.byteOffset, p);
  host.memory.grow(1);
  assert.deepEqual([...(v.view as Int32Array)], [1, 2, 3, -4]);
  // Data near the very top of memory: in bounds, then one byte too far.
  const top = host.buffer.byteLength;
  const ok = Tensor.wasmView(host, { data: top - 8, dtype: "int32", shape: [2] });
  assert.equal(ok.view.length, 2);
  expectError(
    () => Tensor.wasmView(host, { data: top - 7, dtype: "int32", shape: [2] }),
    "OUT_OF_BOUNDS",
    "tensor.data",
  );
});

test("toAddress reinterprets signed 32-bit values and rejects the rest", () => {
  assert.equal(toAddress(-2147483648), 0x80000000);
  assert.equal(toAddress(-1), 0xffffffff);
  assert.equal(toAddress(0xffffffff), 0xffffffff);
  expectError(() => toAddress(2 ** 32), "INVALID_ARGUMENT", "address");
  expectError(() => toAddress(-(2 ** 31) - 1), "INVALID_ARGUMENT", "address");
});
