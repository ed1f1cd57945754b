/**
 * constants.ts and layout.ts against the header they mirror: the enum
 * values, flag bits, version and the sizes/offsets its static_asserts pin are
 * parsed from wasm/include/webdlpack/dlpack.h, so there is one source of truth.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  DLPACK_VERSION,
  DLPackFlag,
  DataTypeCode,
  DeviceType,
  KNOWN_FLAGS_MASK,
  LAYOUT,
  dataTypeCodeName,
  deviceTypeName,
  isDataTypeCode,
  isDeviceType,
} from "../../js/src/dlpack/index.js";
import { repoRoot } from "./helpers.js";

const header = readFileSync(join(repoRoot(), "wasm", "include", "webdlpack", "dlpack.h"), "utf8");

/** The `name = value` members of `typedef enum { … } Name;`. */
function parseEnum(name: string): Record<string, number> {
  const m = new RegExp(`typedef enum \\{([^}]*)\\}\\s*${name};`).exec(header);
  assert.ok(m, `enum ${name} not found in dlpack.h`);
  const out: Record<string, number> = {};
  for (const line of m[1]!.split("\n")) {
    const e = /^\s*(k\w+)\s*=\s*(\d+)\s*,/.exec(line);
    if (e) out[e[1]!] = Number(e[2]);
  }
  return out;
}

test("DeviceType equals DLDeviceType in dlpack.h", () => {
  const parsed = parseEnum("DLDeviceType");
  assert.ok(Object.keys(parsed).length >= 16);
  assert.deepEqual({ ...DeviceType }, parsed);
  assert.equal(DeviceType.kDLCPU, 1);
  assert.equal(DeviceType.kDLWebGPU, 15);
  assert.equal(DeviceType.kDLTrn, 18);
});

test("DataTypeCode equals DLDataTypeCode in dlpack.h", () => {
  const parsed = parseEnum("DLDataTypeCode");
  assert.equal(Object.keys(parsed).length, 18);
  assert.deepEqual({ ...DataTypeCode }, parsed);
});

test("flag bits and version equal the #defines", () => {
  const flag = (name: string): number => {
    const m = new RegExp(`#define DLPACK_FLAG_BITMASK_${name} \\(1ULL << (\\d+)\\)`).exec(header);
    assert.ok(m, `flag ${name} not found`);
    return 2 ** Number(m[1]);
  };
  assert.equal(DLPackFlag.READ_ONLY, flag("READ_ONLY"));
  assert.equal(DLPackFlag.IS_COPIED, flag("IS_COPIED"));
  assert.equal(DLPackFlag.IS_SUBBYTE_TYPE_PADDED, flag("IS_SUBBYTE_TYPE_PADDED"));
  assert.equal(KNOWN_FLAGS_MASK, 7);
  const major = /#define DLPACK_MAJOR_VERSION (\d+)/.exec(header);
  const minor = /#define DLPACK_MINOR_VERSION (\d+)/.exec(header);
  assert.deepEqual({ ...DLPACK_VERSION }, { major: Number(major![1]), minor: Number(minor![1]) });
});

test("LAYOUT matches every WDL_WASM32_LAYOUT assert in dlpack.h", () => {
  const asserts = [...header.matchAll(/WDL_WASM32_LAYOUT\((sizeof|offsetof)\((\w+)(?:, (\w+))?\) == (\d+)/g)];
  assert.equal(asserts.length, 5);
  const layout = LAYOUT as unknown as Record<string, Record<string, number>>;
  for (const [, kind, struct, field, value] of asserts) {
    const got = kind === "sizeof" ? layout[struct!]!.size : layout[struct!]![field!];
    assert.equal(got, Number(value), `${kind}(${struct}${field ? `, ${field}` : ""})`);
  }
});

test("LAYOUT is self-consistent: fields in header order, inside the struct, aligned", () => {
  const fieldSizes: Record<string, Record<string, number>> = {
    DLPackVersion: { major: 4, minor: 4 },
    DLDevice: { device_type: 4, device_id: 4 },
    DLDataType: { code: 1, bits: 1, lanes: 2 },
    DLTensor: { data: 4, device: 8, ndim: 4, dtype: 4, shape: 4, strides: 4, byte_offset: 8 },
    DLManagedTensor: { dl_tensor: 40, manager_ctx: 4, deleter: 4 },
    DLManagedTensorVersioned: { version: 8, manager_ctx: 4, deleter: 4, flags: 8, dl_tensor: 40 },
  };
  const aligns: Record<string, number> = { device: 4, dtype: 2, dl_tensor: 8, version: 4, flags: 8, byte_offset: 8 };
  for (const [struct, fields] of Object.entries(fieldSizes)) {
    const l = (LAYOUT as unknown as Record<string, Record<string, number>>)[struct]!;
    assert.deepEqual(
      Object.keys(l).filter((k) => k !== "size" && k !== "align"),
      Object.keys(fields),
      struct,
    );
    let end = 0;
    for (const [field, size] of Object.entries(fields)) {
      const off = l[field]!;
      assert.ok(off >= end, `${struct}.${field} overlaps the previous field`);
      assert.equal(off % (aligns[field] ?? Math.min(size, 4)), 0, `${struct}.${field} misaligned`);
      end = off + size;
    }
    assert.equal(l.size, Math.ceil(end / l.align!) * l.align!, `${struct} size`);
  }
});

test("name lookups", () => {
  assert.equal(deviceTypeName(15), "kDLWebGPU");
  assert.equal(deviceTypeName(5), "unknown(5)");
  assert.equal(dataTypeCodeName(17), "kDLFloat4_e2m1fn");
  assert.equal(dataTypeCodeName(18), "unknown(18)");
  assert.equal(isDeviceType(6), false);
  assert.equal(isDeviceType(18), true);
  assert.equal(isDataTypeCode(0), true);
  assert.equal(isDataTypeCode(-1), false);
});
