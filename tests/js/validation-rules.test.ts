/**
 * The JS codec against every case of spec/validation-rules.json — the one
 * rule set the C validator (tests/c/test_validation_rules.c) and Python
 * (tests/py/test_validation_rules.py) are tested against too. Each case is
 * laid out byte by byte in a memory of the table's size and decoded with
 * readManagedTensorVersioned / readManagedTensor.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { WebDLPackError } from "../../js/src/errors.js";
import { LAYOUT, readManagedTensor, readManagedTensorVersioned } from "../../js/src/dlpack/index.js";
import { storageBytes } from "../../js/src/dlpack/dtype.js";
import { repoRoot } from "./helpers.js";

type Int = number | string;
interface RuleCase {
  name: string;
  only?: string[];
  managed?: { version?: [number, number]; flags?: Int; legacy?: boolean };
  at?: { managed?: Int; shape?: Int; strides?: Int };
  tensor: {
    data: Int;
    device: [number, number];
    dtype: [number, number, number];
    shape: Int[] | null;
    ndim?: number;
    strides?: Int[] | null;
    byte_offset?: Int;
  };
  expect: "ok" | { code: string; field: string };
  nbytes?: number;
}
interface RuleTable {
  memory_size: number;
  placement: { managed: number; shape: number; strides: number };
  cases: RuleCase[];
}

const table = JSON.parse(readFileSync(join(repoRoot(), "spec", "validation-rules.json"), "utf8")) as RuleTable;

/** An address of the table (`0x..`, decimal, `END-n`, `END+n`) as a BigInt. */
function resolve(value: Int, end: number): bigint {
  if (typeof value === "number") return BigInt(value);
  const text = value.replace(/\s/g, "");
  if (text.startsWith("END")) return BigInt(end) + (text.length > 3 ? BigInt(text.slice(3).replace(/^\+/, "")) : 0n);
  return BigInt(text);
}

/** Write the case's struct into a fresh memory; returns the memory and the struct's address. */
function layOut(c: RuleCase): { memory: ArrayBuffer; address: number; versioned: boolean } {
  const end = table.memory_size;
  const memory = new ArrayBuffer(end);
  const dv = new DataView(memory);
  const place = (key: "managed" | "shape" | "strides"): number =>
    Number(resolve(c.at?.[key] ?? table.placement[key], end));
  const fits = (at: number, size: number): boolean => at >= 0 && at + size <= end;
  const versioned = c.managed?.legacy !== true;
  const address = place("managed");
  const t = c.tensor;
  const ndim = t.ndim ?? (t.shape === null ? 0 : t.shape.length);
  const shapeAt = t.shape === null ? 0 : place("shape");
  const stridesAt = t.strides === undefined || t.strides === null ? 0 : place("strides");
  const writeArray = (at: number, values: Int[] | null | undefined): void => {
    if (values === null || values === undefined) return;
    const padded = [...values, ...new Array<Int>(Math.max(0, ndim - values.length)).fill(1)];
    padded.forEach((v, i) => {
      if (fits(at + 8 * i, 8)) dv.setBigInt64(at + 8 * i, resolve(v, end), true);
    });
  };
  writeArray(shapeAt, t.shape);
  writeArray(stridesAt, t.strides);
  const M = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
  if (!fits(address, M.size)) return { memory, address, versioned }; // the struct itself lies outside memory
  const T = address + M.dl_tensor;
  if (versioned) {
    const [major, minor] = c.managed?.version ?? [1, 1];
    dv.setUint32(address + LAYOUT.DLManagedTensorVersioned.version, major, true);
    dv.setUint32(address + LAYOUT.DLManagedTensorVersioned.version + 4, minor, true);
    dv.setBigUint64(address + LAYOUT.DLManagedTensorVersioned.flags, resolve(c.managed?.flags ?? 0, end), true);
  }
  const L = LAYOUT.DLTensor;
  dv.setUint32(T + L.data, Number(resolve(t.data, end)), true);
  dv.setInt32(T + L.device, t.device[0], true);
  dv.setInt32(T + L.device + 4, t.device[1], true);
  dv.setInt32(T + L.ndim, ndim, true);
  dv.setUint8(T + L.dtype, t.dtype[0]);
  dv.setUint8(T + L.dtype + 1, t.dtype[1]);
  dv.setUint16(T + L.dtype + 2, t.dtype[2], true);
  dv.setUint32(T + L.shape, shapeAt, true);
  dv.setUint32(T + L.strides, stridesAt, true);
  dv.setBigUint64(T + L.byte_offset, resolve(t.byte_offset ?? 0, end) & 0xffffffffffffffffn, true);
  return { memory, address, versioned };
}

for (const c of table.cases) {
  if (c.only !== undefined && !c.only.includes("js")) continue;
  test(`spec/validation-rules.json: ${c.name}`, () => {
    const { memory, address, versioned } = layOut(c);
    const read = (): ReturnType<typeof readManagedTensor> =>
      versioned ? readManagedTensorVersioned(memory, address) : readManagedTensor(memory, address);
    if (c.expect === "ok") {
      const desc = read();
      if (c.nbytes !== undefined) {
        const count = desc.shape.reduce((a, b) => a * b, 1);
        assert.equal(storageBytes(desc.dtype, count, (desc.flags & 4) !== 0), c.nbytes);
      }
      return;
    }
    const expected = c.expect;
    assert.throws(read, (err: unknown) => {
      assert.ok(err instanceof WebDLPackError, `not a WebDLPackError: ${String(err)}`);
      assert.equal(err.code, expected.code, err.message);
      assert.equal(err.field, expected.field, err.message);
      return true;
    });
  });
}

test("spec/validation-rules.json: the table has cases for JS", () => {
  assert.ok(table.cases.filter((c) => c.only === undefined || c.only.includes("js")).length >= 80);
});
