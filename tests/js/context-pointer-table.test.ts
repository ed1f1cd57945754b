/** Node tests of the GPU pointer table: bit format, stale/foreign/double-free detection, reuse, retirement. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebDLPackError, type ErrorCodeName } from "../../js/src/errors.js";
import { PointerTable } from "../../js/src/context/pointers/pointer-table.js";
import {
  describeGPUPointer,
  GPU_POINTER_SLOT_BITS,
  GPU_POINTER_GENERATION_BITS,
  GPU_POINTER_TAG_BITS,
} from "../../js/src/context/pointers/pointer-format.js";

function throwsCode(fn: () => unknown, code: ErrorCodeName, text?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof WebDLPackError, `expected WebDLPackError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (text) assert.match(err.message, text);
    return true;
  });
}

test("bit format: 4 tag bits, 10 generation bits, 18 slot bits; first pointer is slot 0 generation 1", () => {
  assert.equal(GPU_POINTER_TAG_BITS + GPU_POINTER_GENERATION_BITS + GPU_POINTER_SLOT_BITS, 32);
  assert.deepEqual([GPU_POINTER_TAG_BITS, GPU_POINTER_GENERATION_BITS, GPU_POINTER_SLOT_BITS], [4, 10, 18]);
  const table = new PointerTable<string>({ tag: 1 });
  const a = table.insert("a");
  const b = table.insert("b");
  assert.equal(a, 2 ** 28 + 2 ** 18);
  assert.equal(b, 2 ** 28 + 2 ** 18 + 1);
  assert.deepEqual(describeGPUPointer(b), { slot: 1, generation: 1, tag: 1 });
  assert.equal(table.get(a), "a");
  assert.equal(table.get(b), "b");
  assert.equal(table.size, 2);
});

test("a freed pointer is STALE_POINTER when used and DOUBLE_FREE when freed again", () => {
  const table = new PointerTable<string>();
  const p = table.insert("x");
  assert.equal(table.remove(p), "x");
  throwsCode(() => table.get(p), "STALE_POINTER", /was freed/);
  throwsCode(() => table.remove(p), "DOUBLE_FREE", /can not be freed twice/);
  assert.equal(table.size, 0);
});

test("foreign values are INVALID_POINTER: small ints, 0, negatives, fractions, too large, non-numbers", () => {
  const table = new PointerTable<string>();
  const p = table.insert("x");
  for (const bad of [12345, 0, -1, 1.5, Number.NaN, 2 ** 32, 2 ** 40, p + 5, (2 << 20) | 0]) {
    throwsCode(() => table.get(bad), "INVALID_POINTER");
    throwsCode(() => table.remove(bad), "INVALID_POINTER");
  }
  throwsCode(() => table.get("1048576" as unknown as number), "INVALID_POINTER", /not a GPU pointer/);
  throwsCode(() => table.get(12345), "INVALID_POINTER", /never issued/);
  // the error carries field and value
  try {
    table.get(12345);
  } catch (err) {
    assert.ok(err instanceof WebDLPackError);
    assert.equal(err.field, "ptr");
    assert.equal(err.value, 12345);
  }
  assert.equal(table.get(p), "x");
});

test("a reused slot gets a new generation; the old pointer never names the new buffer", () => {
  const table = new PointerTable<string>({ quarantine: 0, tag: 1 });
  const old = table.insert("old");
  table.remove(old);
  const fresh = table.insert("new");
  assert.notEqual(fresh, old);
  assert.deepEqual(describeGPUPointer(fresh), { slot: 0, generation: 2, tag: 1 });
  throwsCode(() => table.get(old), "STALE_POINTER", /slot now holds another buffer/);
  throwsCode(() => table.remove(old), "DOUBLE_FREE");
  assert.equal(table.get(fresh), "new");
});

test("the quarantine delays reuse until more slots are waiting", () => {
  const table = new PointerTable<number>({ quarantine: 3, tag: 1 });
  const ptrs = [0, 1, 2, 3, 4].map((i) => table.insert(i));
  for (const p of ptrs) table.remove(p);
  // 5 waiting > 3: the oldest freed slot (0) is reused first
  const next = table.insert(99);
  assert.deepEqual(describeGPUPointer(next), { slot: 0, generation: 2, tag: 1 });
  const q = new PointerTable<number>({ quarantine: 3, tag: 1 });
  const one = q.insert(1);
  q.remove(one);
  // only 1 waiting: a fresh slot is used
  assert.deepEqual(describeGPUPointer(q.insert(2)), { slot: 1, generation: 1, tag: 1 });
});

test("a slot whose generation is used up is retired, never reused", () => {
  const table = new PointerTable<number>({ generationBits: 2, quarantine: 0, tag: 1 });
  const seen = new Set<number>();
  for (let i = 0; i < 3; i++) {
    const p = table.insert(i);
    assert.equal(describeGPUPointer(p, 2).slot, 0);
    seen.add(p);
    table.remove(p);
  }
  assert.equal(seen.size, 3);
  assert.equal(table.retiredSlots, 1);
  const after = table.insert(7);
  assert.deepEqual(describeGPUPointer(after, 2), { slot: 1, generation: 1, tag: 1 });
  for (const p of seen) throwsCode(() => table.get(p), "STALE_POINTER");
});

test("a full table raises OUT_OF_MEMORY and recovers after a free", () => {
  const table = new PointerTable<number>({ maxSlots: 2, quarantine: 5 });
  const a = table.insert(1);
  table.insert(2);
  throwsCode(() => table.insert(3), "OUT_OF_MEMORY", /pointer table is full/);
  table.remove(a);
  const c = table.insert(3);
  assert.equal(table.get(c), 3);
  throwsCode(() => table.get(a), "STALE_POINTER");
});

test("1000 alloc/free cycles give 1000 distinct pointer values", () => {
  const table = new PointerTable<number>();
  const seen = new Set<number>();
  for (let i = 0; i < 1000; i++) {
    const p = table.insert(i);
    seen.add(p);
    assert.equal(table.get(p), i);
    table.remove(p);
  }
  assert.equal(seen.size, 1000);
  assert.equal(table.size, 0);
});

test("pointers with the top bit set (tags 8 to 15) are positive numbers and translate", () => {
  const table = new PointerTable<number>({ quarantine: 0, tag: 9 });
  let p = 0;
  for (let i = 0; i < 2100; i++) {
    p = table.insert(i);
    if (i < 2099) table.remove(p);
  }
  assert.ok(p >= 2 ** 31, `pointer ${p} should have bit 31 set`);
  assert.ok(p > 0 && Number.isInteger(p) && p < 2 ** 32);
  assert.equal(table.get(p), 2099);
  // The same bits read as a signed int32 are not a pointer: callers must use `>>> 0`.
  assert.ok((p | 0) < 0);
  throwsCode(() => table.get(p | 0), "INVALID_POINTER", /not a GPU pointer/);
  assert.equal(table.get((p | 0) >>> 0), 2099);
});

test("growth keeps every live entry; forEach visits live entries only", () => {
  const table = new PointerTable<number>();
  const ptrs: number[] = [];
  for (let i = 0; i < 1000; i++) ptrs.push(table.insert(i));
  for (let i = 0; i < 1000; i += 2) table.remove(ptrs[i]!);
  ptrs.forEach((p, i) => {
    if (i % 2) assert.equal(table.get(p), i);
    else throwsCode(() => table.get(p), "STALE_POINTER");
  });
  let count = 0;
  table.forEach((entry, ptr) => {
    assert.equal(table.get(ptr), entry);
    count += 1;
  });
  assert.equal(count, 500);
  assert.equal(table.size, 500);
});

test("bad table options are INVALID_ARGUMENT naming the option", () => {
  throwsCode(() => new PointerTable({ generationBits: 0 }), "INVALID_ARGUMENT", /generationBits/);
  throwsCode(() => new PointerTable({ generationBits: 17 }), "INVALID_ARGUMENT", /generationBits/);
  throwsCode(() => new PointerTable({ maxSlots: 0 }), "INVALID_ARGUMENT", /maxSlots/);
  throwsCode(() => new PointerTable({ quarantine: -1 }), "INVALID_ARGUMENT", /quarantine/);
});
