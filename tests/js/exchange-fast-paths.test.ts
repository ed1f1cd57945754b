/**
 * The exchange fast paths hide nothing: a remembered decode is reused only while every byte it was made
 * from is the same (a changed byte is decoded again, a now-invalid one is refused with its typed error),
 * and the trusted writer writes exactly the bytes the validating writer writes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  LAYOUT,
  decodeManaged,
  parseDType,
  writeManagedTensor,
  writeManagedTensorVersioned,
  writeManagedTrusted,
  type DLTensorDesc,
} from "../../js/src/dlpack/index.js";
import { Tensor } from "../../js/src/tensor/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError } from "./helpers.js";

const CPU = { deviceType: 1, deviceId: 0 };
const T = LAYOUT.DLManagedTensorVersioned.dl_tensor;

test("a remembered decode is reused for the same bytes and redone for changed ones", () => {
  const host = createTestHost();
  const data = host.malloc(64);
  const addr = writeManagedTensorVersioned(host, { data, device: CPU, dtype: "float32", shape: [2, 4] });
  const first = decodeManaged(host, addr, true);
  assert.equal(decodeManaged(host, addr, true), first, "same bytes: the same decode object");
  assert.deepEqual(first.desc.shape, [2, 4]);
  const view = new DataView(host.buffer);
  const shapeAt = view.getUint32(addr + T + LAYOUT.DLTensor.shape, true);
  view.setUint32(shapeAt + 8, 3, true); // shape[1] = 3, in the shape array (not the struct)
  const changed = decodeManaged(host, addr, true);
  assert.notEqual(changed, first);
  assert.deepEqual(changed.desc.shape, [2, 3]);
  view.setUint32(addr + T + LAYOUT.DLTensor.ndim, 99, true); // invalid now: the full check's error
  expectError(() => decodeManaged(host, addr, true), "BAD_NDIM", "DLTensor.ndim");
  view.setUint32(addr + T + LAYOUT.DLTensor.ndim, 2, true);
  view.setUint32(addr + LAYOUT.DLManagedTensorVersioned.flags, 1 << 30, true); // unknown flag bit
  expectError(() => decodeManaged(host, addr, true), "BAD_FLAGS", "DLManagedTensorVersioned.flags");
  view.setUint32(addr + LAYOUT.DLManagedTensorVersioned.flags, 0, true);
  const fresh = host.buffer.slice(0); // another memory source: nothing remembered, every check runs
  assert.deepEqual(decodeManaged(host, addr, true), decodeManaged(fresh, addr, true));
});

test("fromManaged in a loop at one address: each tensor sees its own struct, the deleter runs once each", () => {
  const host = createTestHost();
  const data = host.malloc(64);
  let deleted = 0;
  const fn = host.addFunction((self) => {
    deleted++;
    host.free(self);
  });
  for (let i = 1; i <= 20; i++) {
    const addr = writeManagedTensorVersioned(host, {
      data,
      device: CPU,
      dtype: "int32",
      shape: [1 + (i % 3)],
      deleter: fn,
    });
    const t = Tensor.fromManaged(host, addr);
    assert.deepEqual(t.shape, [1 + (i % 3)]);
    t.dispose();
    assert.equal(deleted, i);
  }
});

test("writeManagedTrusted writes the bytes writeManagedTensorVersioned / writeManagedTensor write", () => {
  const host = createTestHost();
  const data = host.malloc(4096);
  const cases: { shape: number[]; strides: number[] | null; byteOffset: number; dtype: string; flags: number }[] = [
    { shape: [], strides: null, byteOffset: 0, dtype: "float32", flags: 0 },
    { shape: [5], strides: null, byteOffset: 8, dtype: "int16", flags: 1 },
    { shape: [2, 3, 4], strides: null, byteOffset: 0, dtype: "float64", flags: 2 },
    { shape: [2, 3], strides: [1, 2], byteOffset: 0, dtype: "uint8", flags: 0 },
    { shape: [3, 2], strides: [-2, 1], byteOffset: 16, dtype: "int32", flags: 0 },
    { shape: [0, 7], strides: null, byteOffset: 0, dtype: "bfloat16", flags: 0 },
  ];
  for (const versioned of [true, false]) {
    for (const c of cases) {
      const input = {
        data,
        device: CPU,
        dtype: c.dtype,
        shape: c.shape,
        strides: c.strides,
        byteOffset: c.byteOffset,
        deleter: 7,
        flags: versioned ? c.flags : 0,
      };
      const a = versioned ? writeManagedTensorVersioned(host, input) : writeManagedTensor(host, input);
      const desc = decodeManaged(host, a, versioned).desc as DLTensorDesc;
      const b = writeManagedTrusted(
        host,
        { ...desc, dtype: parseDType(c.dtype) },
        { data, byteOffset: c.byteOffset, strides: c.strides, deleter: 7, flags: versioned ? c.flags : 0, versioned },
      );
      const size = (versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor).size + 16 * c.shape.length;
      const bytesA = new Uint8Array(host.buffer, a, size).slice();
      const bytesB = new Uint8Array(host.buffer, b, size).slice();
      // The shape and strides pointers point into each block: compare them relative to the block.
      const L = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
      const view = new DataView(host.buffer);
      for (const field of [LAYOUT.DLTensor.shape, LAYOUT.DLTensor.strides]) {
        const at = L.dl_tensor + field;
        assert.equal(
          view.getUint32(a + at, true) - a,
          view.getUint32(b + at, true) - b,
          `${JSON.stringify(c)} pointer at ${at}`,
        );
        bytesA.fill(0, at, at + 4);
        bytesB.fill(0, at, at + 4);
      }
      assert.deepEqual(bytesB, bytesA, `${versioned ? "versioned" : "legacy"} ${JSON.stringify(c)}`);
    }
  }
});
