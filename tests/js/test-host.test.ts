/** test-host.ts: the in-JS WasmHost used by the other suites must itself be right. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { WASM_PAGE_SIZE, createTestHost } from "../../js/src/testing/test-host.js";
import { expectError } from "./helpers.js";

test("malloc returns aligned, non-overlapping, non-zero blocks; free reuses them", () => {
  const host = createTestHost(1, 4);
  const a = host.malloc(10);
  const b = host.malloc(100);
  const c = host.malloc(0);
  for (const p of [a, b, c]) {
    assert.notEqual(p, 0);
    assert.equal(p % 16, 0);
  }
  assert.ok(b >= a + 10 && c >= b + 100);
  assert.equal(host.liveAllocations, 3);
  assert.equal(host.liveBytes, 110);
  host.free(b);
  const d = host.malloc(64);
  assert.equal(d, b, "first fit reuses the freed block");
  host.free(a);
  host.free(c);
  host.free(d);
  assert.equal(host.liveAllocations, 0);
  // All coalesced again: one big block fits where the three were.
  assert.equal(host.malloc(200), a);
});

test("malloc grows memory when full and returns 0 at the maximum", () => {
  const host = createTestHost(1, 3);
  const before = host.buffer;
  const p = host.malloc(WASM_PAGE_SIZE + 100);
  assert.notEqual(p, 0);
  assert.ok(host.buffer.byteLength >= p + WASM_PAGE_SIZE + 100);
  assert.equal(before.byteLength, 0, "the old buffer is detached by growth");
  assert.equal(host.malloc(4 * WASM_PAGE_SIZE), 0);
  host.failMalloc(true);
  assert.equal(host.malloc(8), 0);
  host.failMalloc(false);
  assert.notEqual(host.malloc(8), 0);
  assert.equal(host.malloc(-1), 0);
});

test("double free and unknown free throw DOUBLE_FREE; free(0) is a no-op", () => {
  const host = createTestHost();
  const p = host.malloc(8);
  host.free(p);
  expectError(() => host.free(p), "DOUBLE_FREE", "address");
  expectError(() => host.free(p + 16), "DOUBLE_FREE", "address");
  host.free(0);
});

test("function table: add, call, remove; stale indices throw", () => {
  const host = createTestHost();
  const seen: number[] = [];
  const i = host.addFunction((arg) => seen.push(arg));
  assert.ok(i > 0);
  host.callVoidPointer(i, 0x80000004);
  host.callVoidPointer(i, -4); // signed view of 0xfffffffc
  assert.deepEqual(seen, [0x80000004, 0xfffffffc]);
  assert.equal(host.liveFunctions, 1);
  host.removeFunction(i);
  assert.equal(host.liveFunctions, 0);
  expectError(() => host.callVoidPointer(i, 0), "INVALID_POINTER", "index");
  expectError(() => host.removeFunction(i), "INVALID_POINTER", "index");
  expectError(() => host.callVoidPointer(0, 0), "INVALID_POINTER", "index");
  assert.notEqual(
    host.addFunction(() => {}),
    i,
    "indices are not reused",
  );
});

test("options are validated", () => {
  expectError(() => createTestHost(1, 2, { alignment: 12 }), "INVALID_ARGUMENT", "options.alignment");
  expectError(() => createTestHost(1, 2, { heapBase: 8 }), "INVALID_ARGUMENT", "options.heapBase");
});
