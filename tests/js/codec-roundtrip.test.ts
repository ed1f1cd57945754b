/** codec: what the writers write, the readers read back identically — every dtype, many shapes and strides. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DLPackFlag,
  DeviceType,
  LAYOUT,
  computeExtent,
  contiguousStrides,
  formatDType,
  isSubByte,
  parseDType,
  readDLTensor,
  readManagedTensor,
  readManagedTensorVersioned,
  writeDLTensor,
  writeManagedTensor,
  writeManagedTensorVersioned,
  type DLTensorDesc,
} from "../../js/src/dlpack/index.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { expectError } from "./helpers.js";

const DTYPES = [
  "int8",
  "int16",
  "int32",
  "int64",
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "float16",
  "float32",
  "float64",
  "bfloat16",
  "complex32",
  "complex64",
  "complex128",
  "bool",
  "float8_e3m4",
  "float8_e4m3",
  "float8_e4m3b11fnuz",
  "float8_e4m3fn",
  "float8_e4m3fnuz",
  "float8_e5m2",
  "float8_e5m2fnuz",
  "float8_e8m0fnu",
  "float6_e2m3fn",
  "float6_e3m2fn",
  "float4_e2m1fn",
  "float32x4",
  "int4",
  "handle64",
];

// shape, strides (null = contiguous), byteOffset in elements
const LAYOUTS: [number[], number[] | null, number][] = [
  [[], null, 0], // 0-d scalar
  [[0], null, 0], // zero-size
  [[2, 0, 3], null, 0], // zero-size, 3-d
  [[5], null, 0],
  [[2, 3], null, 1],
  [[2, 3, 4], null, 0],
  [[2, 3], [1, 2], 0], // Fortran order
  [[4], [-1], 3], // reversed: starts at the last element
  [[3, 2], [-2, 1], 4], // rows reversed
  [[3, 4], [0, 1], 0], // broadcast rows
  [[2, 2], [4, 2], 0], // every other element
  [[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2], null, 0], // ndim 32
];

function expected(desc: DLTensorDesc, explicitStrides: boolean) {
  return {
    data: desc.data,
    device: { ...desc.device },
    ndim: desc.ndim,
    dtype: { ...desc.dtype },
    shape: [...desc.shape],
    strides:
      desc.strides === null
        ? explicitStrides && desc.ndim > 0
          ? contiguousStrides(desc.shape)
          : null
        : [...desc.strides],
    byteOffset: desc.byteOffset,
  };
}

/** A plain copy of a descriptor, strides kept as they are (null stays null). */
function plain(desc: DLTensorDesc) {
  return expected(desc, false);
}

for (const name of DTYPES) {
  test(`round trip ${name}: versioned, legacy and bare DLTensor over every layout`, () => {
    const host = createTestHost(2, 64);
    const dtype = parseDType(name);
    const data = host.malloc(4096);
    for (const [shape, strides, offsetElems] of LAYOUTS) {
      const ext = computeExtent(shape, strides, dtype);
      const itemBytes = Math.max(1, Math.ceil((dtype.bits * dtype.lanes) / 8));
      const byteOffset = offsetElems * itemBytes;
      assert.ok(byteOffset + ext.highByte <= 4096 && byteOffset + ext.lowByte >= 0);
      const input = { data, device: { deviceType: DeviceType.kDLCPU, deviceId: 0 }, dtype, shape, strides, byteOffset };
      if (isSubByte(dtype) && ext.count > 0 && !ext.contiguous) {
        // Packed sub-byte tensors are C-contiguous (spec/validation-rules.json, packed_subbyte_strided).
        expectError(
          () => writeManagedTensorVersioned(host, { ...input, managerCtx: 0, deleter: 0 }),
          "BAD_STRIDES",
          "DLTensor.strides",
        );
        continue;
      }
      const want = {
        data,
        device: input.device,
        ndim: shape.length,
        dtype,
        shape,
        strides,
        byteOffset,
      } as DLTensorDesc;
      for (const explicitStrides of [true, false]) {
        const v = writeManagedTensorVersioned(host, {
          ...input,
          managerCtx: 0x1234,
          deleter: 7,
          flags: DLPackFlag.READ_ONLY,
          explicitStrides,
        });
        const got = readManagedTensorVersioned(host, v);
        assert.deepEqual(plain(got), expected(want, explicitStrides), `${name} ${JSON.stringify(shape)} versioned`);
        assert.deepEqual(got.version, { major: 1, minor: 1 });
        assert.equal(got.managerCtx, 0x1234);
        assert.equal(got.deleter, 7);
        assert.equal(got.flags, DLPackFlag.READ_ONLY);
        assert.equal(got.address, v);
        assert.equal(host.allocationSize(v), 64 + shape.length * 8 * (explicitStrides || strides ? 2 : 1), "one block");
        host.free(v);

        const l = writeManagedTensor(host, { ...input, managerCtx: 9, explicitStrides });
        const gotL = readManagedTensor(host, l);
        assert.deepEqual(plain(gotL), expected(want, explicitStrides), `${name} ${JSON.stringify(shape)} legacy`);
        assert.equal(gotL.version, null);
        assert.equal(gotL.flags, 0);
        assert.equal(gotL.managerCtx, 9);
        assert.equal(gotL.deleter, 0);
        host.free(l);
      }
      // Bare DLTensor with caller-placed arrays.
      const block = host.malloc(40 + 16 * 32);
      const t = writeDLTensor(host, block, input, { shape: block + 40, strides: strides ? block + 40 + 8 * 32 : 0 });
      assert.deepEqual(plain(readDLTensor(host, block)), plain(t));
      assert.deepEqual(plain(readDLTensor(host.memory, block)), plain(t), "a WebAssembly.Memory is a source too");
      assert.deepEqual(plain(readDLTensor(host.buffer, block)), plain(t), "an ArrayBuffer is a source too");
      host.free(block);
    }
    host.free(data);
    assert.equal(host.liveAllocations, 0);
    assert.equal(formatDType(dtype), name);
  });
}

test("field bytes land at the LAYOUT offsets", () => {
  const host = createTestHost();
  const data = host.malloc(64);
  const a = writeManagedTensorVersioned(host, {
    data,
    device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
    dtype: "float32x4",
    shape: [2],
    byteOffset: 32,
    managerCtx: 0xabcdef,
    deleter: 5,
    flags: 6,
  });
  const dv = new DataView(host.buffer);
  const V = LAYOUT.DLManagedTensorVersioned;
  const T = LAYOUT.DLTensor;
  const t = a + V.dl_tensor;
  assert.equal(dv.getUint32(a + V.version, true), 1);
  assert.equal(dv.getUint32(a + V.version + 4, true), 1);
  assert.equal(dv.getUint32(a + V.manager_ctx, true), 0xabcdef);
  assert.equal(dv.getUint32(a + V.deleter, true), 5);
  assert.equal(dv.getBigUint64(a + V.flags, true), 6n);
  assert.equal(dv.getUint32(t + T.data, true), data);
  assert.equal(dv.getInt32(t + T.device, true), 1);
  assert.equal(dv.getInt32(t + T.device + 4, true), 0);
  assert.equal(dv.getInt32(t + T.ndim, true), 1);
  assert.equal(dv.getUint8(t + T.dtype), 2);
  assert.equal(dv.getUint8(t + T.dtype + 1), 32);
  assert.equal(dv.getUint16(t + T.dtype + 2, true), 4);
  assert.equal(dv.getUint32(t + T.shape, true), a + 64);
  assert.equal(dv.getBigInt64(a + 64, true), 2n);
  assert.equal(dv.getUint32(t + T.strides, true), a + 72);
  assert.equal(dv.getBigInt64(a + 72, true), 1n);
  assert.equal(dv.getBigUint64(t + T.byte_offset, true), 32n);
});

test("WebGPU tensors round trip without a memory-range check on data", () => {
  const host = createTestHost();
  const a = writeManagedTensorVersioned(host, {
    data: 0xfffff000,
    device: { deviceType: DeviceType.kDLWebGPU, deviceId: 3 },
    dtype: "float32",
    shape: [1 << 20, 4],
  });
  const got = readManagedTensorVersioned(host, a);
  assert.equal(got.data, 0xfffff000);
  assert.deepEqual(got.device, { deviceType: 15, deviceId: 3 });
});

test("sub-byte tensors: packed extent vs IS_SUBBYTE_TYPE_PADDED", () => {
  const host = createTestHost(1, 1);
  const end = host.buffer.byteLength;
  // 10 fp4 elements packed take 5 bytes; padded they take 10.
  const input = {
    data: end - 5,
    device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
    dtype: "float4_e2m1fn",
    shape: [10],
  };
  const packed = writeManagedTensorVersioned(host, input);
  assert.deepEqual(readManagedTensorVersioned(host, packed).shape, [10]);
  expectError(
    () => writeManagedTensorVersioned(host, { ...input, flags: DLPackFlag.IS_SUBBYTE_TYPE_PADDED }),
    "OUT_OF_BOUNDS",
    "DLTensor.data",
  );
  // Set the padded flag on the packed struct: now it reaches past memory.
  new DataView(host.buffer).setBigUint64(packed + LAYOUT.DLManagedTensorVersioned.flags, 4n, true);
  expectError(() => readManagedTensorVersioned(host, packed), "OUT_OF_BOUNDS", "DLTensor.data");
});

test("writers validate before allocating and report OUT_OF_MEMORY", () => {
  const host = createTestHost();
  const cpu = { deviceType: DeviceType.kDLCPU, deviceId: 0 };
  expectError(
    () => writeManagedTensorVersioned(host, { data: 0, device: cpu, dtype: "float32", shape: [2] }),
    "NULL_POINTER",
    "DLTensor.data",
  );
  expectError(
    () => writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: [-1] }),
    "BAD_SHAPE",
    "DLTensor.shape[0]",
  );
  expectError(
    () => writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: [2], strides: [1, 1] }),
    "BAD_STRIDES",
    "DLTensor.strides",
  );
  expectError(
    () => writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: [2], flags: 16 }),
    "BAD_FLAGS",
    "DLManagedTensorVersioned.flags",
  );
  expectError(
    () => writeManagedTensor(host, { data: 1024, device: cpu, dtype: "float32", shape: [2], flags: 1 }),
    "BAD_FLAGS",
    "flags",
  );
  expectError(
    () =>
      writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: new Array(33).fill(1) }),
    "BAD_NDIM",
    "DLTensor.ndim",
  );
  expectError(
    () => writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: [1.5] }),
    "BAD_SHAPE",
    "DLTensor.shape[0]",
  );
  expectError(
    () => writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: [1], byteOffset: -4 }),
    "INVALID_ARGUMENT",
    "DLTensor.byte_offset",
  );
  expectError(
    () => writeManagedTensorVersioned(host, { data: 2 ** 32, device: cpu, dtype: "float32", shape: [1] }),
    "INVALID_ARGUMENT",
    "DLTensor.data",
  );
  expectError(
    () => writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: [1], deleter: 1.5 }),
    "INVALID_ARGUMENT",
    "DLManagedTensorVersioned.deleter",
  );
  assert.equal(host.liveAllocations, 0, "nothing allocated by failed writes");
  host.failMalloc(true);
  expectError(
    () => writeManagedTensorVersioned(host, { data: 1024, device: cpu, dtype: "float32", shape: [1] }),
    "OUT_OF_MEMORY",
    "malloc",
  );
  host.failMalloc(false);
  const block = host.malloc(48);
  expectError(
    () =>
      writeDLTensor(
        host,
        block + 4,
        { data: 1024, device: cpu, dtype: "int8", shape: [1] },
        { shape: block + 40, strides: 0 },
      ),
    "INVALID_POINTER",
    "DLTensor",
  );
  expectError(
    () => writeDLTensor(host, block, { data: 1024, device: cpu, dtype: "int8", shape: [1] }, { shape: 0, strides: 0 }),
    "NULL_POINTER",
    "DLTensor.shape",
  );
});

test("int64 fields decode exactly across the 32-bit boundary and up to 2^53 - 1", () => {
  const host = createTestHost();
  const cases: [number[], number[], number][] = [
    [[2, 3], [-(2 ** 40), 1], 2 ** 45], // negative stride with a high word of -256
    [[1], [2 ** 53 - 1], 2 ** 53 - 1], // the largest safe values
    [[2 ** 32 + 5], [-1], 2 ** 32], // a dimension just past 32 bits
    [[3], [-(2 ** 32)], 0x7fffffff * 4],
  ];
  for (const [shape, strides, byteOffset] of cases) {
    const address = writeManagedTensorVersioned(host, {
      data: 0x1000,
      device: { deviceType: DeviceType.kDLWebGPU, deviceId: 0 },
      dtype: "uint8",
      shape,
      strides,
      byteOffset,
    });
    const d = readManagedTensorVersioned(host, address);
    assert.deepEqual([...d.shape], shape);
    assert.deepEqual(d.strides && [...d.strides], strides);
    assert.equal(d.byteOffset, byteOffset);
    host.free(address);
  }
});

test("the reader follows a new memory buffer after growth (no stale cached view)", () => {
  const host = createTestHost();
  const p = host.malloc(16);
  const a = writeManagedTensorVersioned(host, {
    data: p,
    device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
    dtype: "int32",
    shape: [4],
  });
  assert.deepEqual([...readManagedTensorVersioned(host, a).shape], [4]);
  const before = host.buffer;
  const big = host.malloc(before.byteLength); // forces growth: a new buffer
  assert.notEqual(host.buffer, before);
  const b = writeManagedTensorVersioned(host, {
    data: p,
    device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
    dtype: "int32",
    shape: [2, 2],
  });
  assert.deepEqual([...readManagedTensorVersioned(host, b).shape], [2, 2]);
  assert.deepEqual([...readManagedTensorVersioned(host, a).shape], [4]);
  host.free(big);
});
