/**
 * codec: a table of malformed structs. Each row starts from a valid
 * DLManagedTensorVersioned (float32 [2, 3] with explicit strides, in a test
 * host), corrupts one thing, and expects a WebDLPackError with a given code
 * and field — never a RangeError, never a wrong answer.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { WebDLPackError, type ErrorCodeName } from "../../js/src/errors.js";
import {
  DataTypeCode,
  DeviceType,
  LAYOUT,
  callManagedDeleter,
  readManagedTensor,
  readManagedTensorVersioned,
  writeManagedTensor,
  writeManagedTensorVersioned,
} from "../../js/src/dlpack/index.js";
import { createTestHost, type TestHost } from "../../js/src/testing/index.js";
import { expectError } from "./helpers.js";

interface Ctx {
  host: TestHost;
  dv: DataView;
  /** Address of the managed struct. */
  addr: number;
  /** Address of its DLTensor. */
  t: number;
  shapeAt: number;
  stridesAt: number;
  data: number;
  end: number;
}

const V = LAYOUT.DLManagedTensorVersioned;
const T = LAYOUT.DLTensor;
const big = (dv: DataView, at: number, v: bigint): void => dv.setBigInt64(at, v, true);

// [description, corrupt (returns the address to read, default ctx.addr), code, field]
// A mutation either returns the address to decode or returns nothing (decode the default one).
// biome-ignore lint/suspicious/noConfusingVoidType: the mutations are statements with no return value
type Row = [string, (c: Ctx) => number | void, ErrorCodeName, string];
const ROWS: Row[] = [
  ["NULL struct", () => 0, "NULL_POINTER", "DLManagedTensorVersioned"],
  ["misaligned struct", (c) => c.addr + 4, "INVALID_POINTER", "DLManagedTensorVersioned"],
  ["struct past memory end", (c) => c.end - 32, "OUT_OF_BOUNDS", "DLManagedTensorVersioned"],
  ["struct wholly outside memory", (c) => c.end + 64, "OUT_OF_BOUNDS", "DLManagedTensorVersioned"],
  [
    "major version 2",
    (c) => c.dv.setUint32(c.addr + V.version, 2, true),
    "VERSION_MISMATCH",
    "DLManagedTensorVersioned.version.major",
  ],
  [
    "major version 0",
    (c) => c.dv.setUint32(c.addr + V.version, 0, true),
    "VERSION_MISMATCH",
    "DLManagedTensorVersioned.version.major",
  ],
  [
    "unknown flag bit 3",
    (c) => c.dv.setBigUint64(c.addr + V.flags, 8n, true),
    "BAD_FLAGS",
    "DLManagedTensorVersioned.flags",
  ],
  [
    "unknown flag bit 63",
    (c) => c.dv.setBigUint64(c.addr + V.flags, 1n << 63n, true),
    "BAD_FLAGS",
    "DLManagedTensorVersioned.flags",
  ],
  ["ndim -1", (c) => c.dv.setInt32(c.t + T.ndim, -1, true), "BAD_NDIM", "DLTensor.ndim"],
  ["ndim 33", (c) => c.dv.setInt32(c.t + T.ndim, 33, true), "BAD_NDIM", "DLTensor.ndim"],
  ["ndim 2^31-1", (c) => c.dv.setInt32(c.t + T.ndim, 0x7fffffff, true), "BAD_NDIM", "DLTensor.ndim"],
  [
    "device type 5 (not in the enum)",
    (c) => c.dv.setInt32(c.t + T.device, 5, true),
    "BAD_DEVICE",
    "DLTensor.device.device_type",
  ],
  ["device type 0", (c) => c.dv.setInt32(c.t + T.device, 0, true), "BAD_DEVICE", "DLTensor.device.device_type"],
  ["device type 99", (c) => c.dv.setInt32(c.t + T.device, 99, true), "BAD_DEVICE", "DLTensor.device.device_type"],
  ["CPU device id 1", (c) => c.dv.setInt32(c.t + T.device + 4, 1, true), "BAD_DEVICE", "DLTensor.device.device_id"],
  [
    "WebGPU device id -1",
    (c) => {
      c.dv.setInt32(c.t + T.device, DeviceType.kDLWebGPU, true);
      c.dv.setInt32(c.t + T.device + 4, -1, true);
    },
    "BAD_DEVICE",
    "DLTensor.device.device_id",
  ],
  ["dtype code 18", (c) => c.dv.setUint8(c.t + T.dtype, 18), "BAD_DTYPE", "DLTensor.dtype.code"],
  ["dtype code 255", (c) => c.dv.setUint8(c.t + T.dtype, 255), "BAD_DTYPE", "DLTensor.dtype.code"],
  ["dtype bits 0", (c) => c.dv.setUint8(c.t + T.dtype + 1, 0), "BAD_DTYPE", "DLTensor.dtype.bits"],
  ["dtype lanes 0", (c) => c.dv.setUint16(c.t + T.dtype + 2, 0, true), "BAD_DTYPE", "DLTensor.dtype.lanes"],
  ["float32 with bits 24", (c) => c.dv.setUint8(c.t + T.dtype + 1, 24), "BAD_DTYPE", "DLTensor.dtype.bits"],
  [
    "fp4 code with bits 8",
    (c) => c.dv.setUint8(c.t + T.dtype, DataTypeCode.kDLFloat4_e2m1fn),
    "BAD_DTYPE",
    "DLTensor.dtype.bits",
  ],
  [
    "fp6 code with bits 4",
    (c) => {
      c.dv.setUint8(c.t + T.dtype, DataTypeCode.kDLFloat6_e2m3fn);
      c.dv.setUint8(c.t + T.dtype + 1, 4);
    },
    "BAD_DTYPE",
    "DLTensor.dtype.bits",
  ],
  ["shape NULL with ndim 2", (c) => c.dv.setUint32(c.t + T.shape, 0, true), "NULL_POINTER", "DLTensor.shape"],
  ["shape misaligned", (c) => c.dv.setUint32(c.t + T.shape, c.shapeAt + 4, true), "INVALID_POINTER", "DLTensor.shape"],
  ["shape past memory end", (c) => c.dv.setUint32(c.t + T.shape, c.end - 8, true), "OUT_OF_BOUNDS", "DLTensor.shape"],
  ["shape at 0xfffffff8", (c) => c.dv.setUint32(c.t + T.shape, 0xfffffff8, true), "OUT_OF_BOUNDS", "DLTensor.shape"],
  ["negative dim", (c) => big(c.dv, c.shapeAt + 8, -3n), "BAD_SHAPE", "DLTensor.shape[1]"],
  ["dim INT64_MIN", (c) => big(c.dv, c.shapeAt, -(1n << 63n)), "BAD_SHAPE", "DLTensor.shape[0]"],
  ["dim 2^53", (c) => big(c.dv, c.shapeAt, 1n << 53n), "SIZE_OVERFLOW", "DLTensor.shape[0]"],
  [
    "element count past 2^53",
    (c) => {
      big(c.dv, c.shapeAt, 1n << 40n);
      big(c.dv, c.shapeAt + 8, 1n << 20n);
    },
    "SIZE_OVERFLOW",
    "DLTensor.shape",
  ],
  [
    "count × itemsize past 2^53",
    (c) => {
      big(c.dv, c.shapeAt, 1n << 26n);
      big(c.dv, c.shapeAt + 8, 1n << 26n);
    },
    "SIZE_OVERFLOW",
    "DLTensor.shape",
  ],
  ["larger than memory", (c) => big(c.dv, c.shapeAt, 1n << 30n), "SIZE_OVERFLOW", "DLTensor.shape"],
  [
    "strides misaligned",
    (c) => c.dv.setUint32(c.t + T.strides, c.stridesAt + 2, true),
    "INVALID_POINTER",
    "DLTensor.strides",
  ],
  [
    "strides past memory end",
    (c) => c.dv.setUint32(c.t + T.strides, c.end - 8, true),
    "OUT_OF_BOUNDS",
    "DLTensor.strides",
  ],
  ["stride 2^60", (c) => big(c.dv, c.stridesAt, 1n << 60n), "BAD_STRIDES", "DLTensor.strides[0]"],
  ["stride -2^60", (c) => big(c.dv, c.stridesAt + 8, -(1n << 60n)), "BAD_STRIDES", "DLTensor.strides[1]"],
  ["stride × (dim−1) past 2^53", (c) => big(c.dv, c.stridesAt + 8, 1n << 52n), "SIZE_OVERFLOW", "DLTensor.strides[1]"],
  [
    "negative stride reaching below 0",
    (c) => big(c.dv, c.stridesAt, -(1n << 40n)),
    "OUT_OF_BOUNDS",
    "DLTensor.strides",
  ],
  ["positive stride reaching past memory", (c) => big(c.dv, c.stridesAt, 1n << 20n), "OUT_OF_BOUNDS", "DLTensor.data"],
  ["data NULL with 6 elements", (c) => c.dv.setUint32(c.t + T.data, 0, true), "NULL_POINTER", "DLTensor.data"],
  ["data near memory end", (c) => c.dv.setUint32(c.t + T.data, c.end - 16, true), "OUT_OF_BOUNDS", "DLTensor.data"],
  ["data at 0xfffffff0", (c) => c.dv.setUint32(c.t + T.data, 0xfffffff0, true), "OUT_OF_BOUNDS", "DLTensor.data"],
  [
    "byte_offset 2^60",
    (c) => c.dv.setBigUint64(c.t + T.byte_offset, 1n << 60n, true),
    "SIZE_OVERFLOW",
    "DLTensor.byte_offset",
  ],
  [
    "byte_offset 2^64-1",
    (c) => c.dv.setBigUint64(c.t + T.byte_offset, (1n << 64n) - 1n, true),
    "SIZE_OVERFLOW",
    "DLTensor.byte_offset",
  ],
  [
    "byte_offset past memory",
    (c) => c.dv.setBigUint64(c.t + T.byte_offset, BigInt(c.end), true),
    "OUT_OF_BOUNDS",
    "DLTensor.byte_offset",
  ],
  [
    "WebGPU data NULL",
    (c) => {
      c.dv.setInt32(c.t + T.device, DeviceType.kDLWebGPU, true);
      c.dv.setUint32(c.t + T.data, 0, true);
    },
    "NULL_POINTER",
    "DLTensor.data",
  ],
];

function setup(): Ctx {
  const host = createTestHost(1, 1);
  const data = host.malloc(24);
  const addr = writeManagedTensorVersioned(host, {
    data,
    device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
    dtype: "float32",
    shape: [2, 3],
  });
  const dv = new DataView(host.buffer);
  const t = addr + V.dl_tensor;
  return {
    host,
    dv,
    addr,
    t,
    shapeAt: dv.getUint32(t + T.shape, true),
    stridesAt: dv.getUint32(t + T.strides, true),
    data,
    end: host.buffer.byteLength,
  };
}

test("the malformed-struct table has at least 20 rows and its base struct is valid", () => {
  assert.ok(ROWS.length >= 20);
  const c = setup();
  const desc = readManagedTensorVersioned(c.host, c.addr);
  assert.deepEqual([...desc.shape], [2, 3]);
  assert.deepEqual(desc.strides && [...desc.strides], [3, 1]);
});

for (const [name, corrupt, code, field] of ROWS) {
  test(`malformed: ${name} → ${code} at ${field}`, () => {
    const c = setup();
    const at = corrupt(c);
    const err = expectError(
      () => readManagedTensorVersioned(c.host, typeof at === "number" ? at : c.addr),
      code,
      field,
    );
    assert.ok(err.message.includes(code));
    assert.ok(err.message.includes(field), "the message names the field");
    assert.ok("value" in err, "the error carries the value found");
  });
}

test("legacy DLManagedTensor: the same DLTensor checks apply", () => {
  const host = createTestHost(1, 1);
  const data = host.malloc(24);
  const addr = writeManagedTensor(host, {
    data,
    device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
    dtype: "int32",
    shape: [6],
  });
  const dv = new DataView(host.buffer);
  assert.deepEqual([...readManagedTensor(host, addr).shape], [6]);
  expectError(() => readManagedTensor(host, addr + 4), "INVALID_POINTER", "DLManagedTensor");
  expectError(() => readManagedTensor(host, 0), "NULL_POINTER", "DLManagedTensor");
  dv.setInt32(addr + T.ndim, 40, true);
  expectError(() => readManagedTensor(host, addr), "BAD_NDIM", "DLTensor.ndim");
});

test("version mismatch: callManagedDeleter reads only the deleter and calls it", () => {
  const c = setup();
  let calls = 0;
  const fn = c.host.addFunction((self) => {
    calls++;
    assert.equal(self, c.addr);
  });
  c.dv.setUint32(c.addr + V.deleter, fn, true);
  c.dv.setUint32(c.addr + V.version, 7, true);
  // Garbage everywhere past the deleter must not matter.
  for (let i = V.flags; i < V.size; i++) c.dv.setUint8(c.addr + i, 0xff);
  const err = expectError(
    () => readManagedTensorVersioned(c.host, c.addr),
    "VERSION_MISMATCH",
    "DLManagedTensorVersioned.version.major",
  );
  assert.match(err.message, /deleter must be called/);
  assert.equal(callManagedDeleter(c.host, c.addr), true);
  assert.equal(calls, 1);
  c.dv.setUint32(c.addr + V.deleter, 0, true);
  assert.equal(callManagedDeleter(c.host, c.addr), false, "NULL deleter: nothing to call");
  assert.equal(callManagedDeleter(c.host, 0), false, "NULL struct: nothing to call");
  expectError(() => callManagedDeleter(c.host, c.end - 8), "OUT_OF_BOUNDS", "DLManagedTensorVersioned");
});

test("bad address arguments are INVALID_ARGUMENT, not silently truncated", () => {
  const c = setup();
  for (const bad of [1.5, NaN, 2 ** 32, -(2 ** 31) - 1, "64" as unknown as number]) {
    expectError(() => readManagedTensorVersioned(c.host, bad), "INVALID_ARGUMENT", "address");
  }
  expectError(() => readManagedTensorVersioned({} as never, c.addr), "INVALID_ARGUMENT", "memory");
});

test("fuzz: random corruption of the struct and arrays gives a valid result or a WebDLPackError, nothing else", () => {
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  let errors = 0;
  let ok = 0;
  for (let round = 0; round < 3000; round++) {
    const c = setup();
    const span = V.size + 32; // struct + shape + strides
    for (let k = 0, n = 1 + rand(4); k < n; k++) c.dv.setUint8(c.addr + rand(span), rand(256));
    try {
      const d = readManagedTensorVersioned(c.host, c.addr);
      ok++;
      // A success must describe bytes inside memory for CPU tensors.
      assert.ok(d.ndim >= 0 && d.ndim <= 32);
      assert.ok(d.shape.every((x) => Number.isSafeInteger(x) && x >= 0));
    } catch (err) {
      if (!(err instanceof WebDLPackError)) throw err;
      errors++;
    }
  }
  assert.ok(errors > 0 && ok > 0, `both outcomes seen (ok ${ok}, errors ${errors})`);
});
