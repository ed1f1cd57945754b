/**
 * AddressTable (the live exports of a host, by struct address): the same
 * answers as a Map under adds, lookups and removals that collide, wrap
 * around the end of the table and make it grow; address 0 refused.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AddressTable } from "../../js/src/tensor/address-table.js";

/** A deterministic stream of pseudo-random u32 (xorshift32). */
function randoms(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

test("AddressTable agrees with a Map under random adds and removals (collisions, wrap-around, growth)", () => {
  const next = randoms(12345);
  const table = new AddressTable<number>();
  const ref = new Map<number, number>();
  // Few distinct addresses (many collisions and re-adds), some above 2 GiB, all 8-aligned and non-zero.
  const pool = Array.from(
    { length: 300 },
    (_, i) => (i % 3 === 0 ? 0x80000000 + i * 8 : 1024 + (next() % 4096) * 8) >>> 0,
  );
  for (let step = 0; step < 20000; step++) {
    const address = pool[next() % pool.length]!;
    const op = next() % 3;
    if (op === 0) {
      table.set(address, step);
      ref.set(address, step);
    } else if (op === 1) {
      assert.equal(table.delete(address), ref.get(address), `delete ${address} at step ${step}`);
      ref.delete(address);
    } else {
      assert.equal(table.get(address), ref.get(address), `get ${address} at step ${step}`);
    }
    assert.equal(table.size, ref.size);
  }
  for (const address of pool) assert.equal(table.get(address), ref.get(address));
  for (const [address, value] of ref) assert.equal(table.delete(address), value);
  assert.equal(table.size, 0);
  assert.equal(table.delete(pool[0]!), undefined, "a second removal finds nothing");
});

test("AddressTable: one entry added and removed over and over, and address 0 refused", () => {
  const table = new AddressTable<string>();
  for (let i = 0; i < 1000; i++) {
    const address = 4096 + (i % 7) * 16;
    table.set(address, "x");
    assert.equal(table.get(address), "x");
    assert.equal(table.delete(address), "x");
    assert.equal(table.delete(address), undefined);
  }
  assert.equal(table.size, 0);
  assert.throws(() => table.set(0, "x"), RangeError);
});
