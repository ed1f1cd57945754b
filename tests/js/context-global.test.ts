/** Node tests of the page-wide singleton record and protocol negotiation. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebDLPackError } from "../../js/src/errors.js";
import { claimSharedContext, CONTEXT_GLOBAL_KEY } from "../../js/src/context/global.js";
import { getContext, CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";

const slot = globalThis as unknown as Record<symbol, unknown>;

test("the first claim creates and stores the context; later claims of the same major reuse it", () => {
  const key = Symbol.for("webdlpack.test.same-major");
  let created = 0;
  const first = claimSharedContext({ major: 3, minor: 1 }, () => ({ n: ++created }), key);
  // A "second copy": its own create function and a newer minor.
  const second = claimSharedContext({ major: 3, minor: 7 }, () => ({ n: ++created }), key);
  assert.equal(second, first);
  assert.equal(created, 1);
  const record = slot[key] as { protocol: { major: number; minor: number }; context: unknown };
  assert.deepEqual(record.protocol, { major: 3, minor: 1 });
  assert.equal(record.context, first);
  assert.ok(!Object.keys(globalThis).includes(String(key)));
  assert.equal(Object.getOwnPropertyDescriptor(globalThis, key)?.enumerable, false);
  delete slot[key];
});

test("another major refuses with INCOMPATIBLE_CONTEXT naming both versions", () => {
  const key = Symbol.for("webdlpack.test.other-major");
  claimSharedContext({ major: 1, minor: 0 }, () => ({}), key);
  assert.throws(
    () => claimSharedContext({ major: 2, minor: 3 }, () => ({}), key),
    (err: unknown) => {
      assert.ok(err instanceof WebDLPackError);
      assert.equal(err.code, "INCOMPATIBLE_CONTEXT");
      assert.match(err.message, /protocol 2\.3/);
      assert.match(err.message, /protocol 1\.0/);
      assert.equal(err.value, 1);
      assert.equal(err.expected, "2");
      return true;
    },
  );
  delete slot[key];
});

test("a malformed record at the key refuses with INCOMPATIBLE_CONTEXT", () => {
  const key = Symbol.for("webdlpack.test.malformed");
  for (const junk of [42, "ctx", { protocol: "1.0", context: {} }, { protocol: { major: 1, minor: 0 } }, null]) {
    slot[key] = junk;
    assert.throws(
      () => claimSharedContext({ major: 1, minor: 0 }, () => ({}), key),
      (err: unknown) =>
        err instanceof WebDLPackError &&
        err.code === "INCOMPATIBLE_CONTEXT" &&
        /not a webdlpack context record/.test(err.message),
    );
  }
  delete slot[key];
});

test("getContext() returns one context at Symbol.for('webdlpack.context') with this copy's protocol", () => {
  assert.equal(CONTEXT_GLOBAL_KEY, Symbol.for("webdlpack.context"));
  const a = getContext();
  const b = getContext();
  assert.equal(a, b);
  assert.deepEqual(a.protocol, CONTEXT_PROTOCOL);
  assert.equal((slot[CONTEXT_GLOBAL_KEY] as { context: unknown }).context, a);
  // A faked incompatible page context is refused.
  const saved = slot[CONTEXT_GLOBAL_KEY];
  slot[CONTEXT_GLOBAL_KEY] = { protocol: { major: CONTEXT_PROTOCOL.major + 1, minor: 0 }, context: {} };
  assert.throws(
    () => getContext(),
    (err: unknown) => err instanceof WebDLPackError && err.code === "INCOMPATIBLE_CONTEXT",
  );
  slot[CONTEXT_GLOBAL_KEY] = saved;
  assert.equal(getContext(), a);
});

test("getContext() answers from the record it claimed only while the global still holds that record", () => {
  const a = getContext();
  const saved = slot[CONTEXT_GLOBAL_KEY];
  // Another compatible copy's record put in its place: its context, not the remembered one.
  const other = { name: "other copy's context" };
  slot[CONTEXT_GLOBAL_KEY] = Object.freeze({ protocol: { ...CONTEXT_PROTOCOL }, context: other });
  assert.equal(getContext() as unknown, other);
  // The record removed: a new context is made and stored, never the remembered one.
  delete slot[CONTEXT_GLOBAL_KEY];
  const fresh = getContext();
  assert.notEqual(fresh, a);
  assert.equal((slot[CONTEXT_GLOBAL_KEY] as { context: unknown }).context, fresh);
  Object.defineProperty(globalThis, CONTEXT_GLOBAL_KEY, {
    value: saved,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  assert.equal(getContext(), a);
});
