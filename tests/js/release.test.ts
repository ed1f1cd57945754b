/**
 * The one release mechanism (js/src/release.ts, docs/ownership.md): a
 * release acts once whichever path calls it first, later calls return false;
 * a Holders count runs its producer's release once, after its last holder.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { once, Once } from "../../js/src/release.js";
import { Holders } from "../../js/src/tensor/ownership.js";

test("Once runs its function on the first release only, and remembers the path", () => {
  let runs = 0;
  const r = new Once<"dispose" | "scope">(() => runs++);
  assert.equal(r.released, false);
  assert.equal(r.releasedBy, null);
  assert.equal(r.release("scope"), true);
  assert.equal(r.release(), false);
  assert.equal(runs, 1);
  assert.equal(r.releasedBy, "scope");
  assert.equal(r.cancel("dispose"), false);
});

test("Once.cancel counts as released without running; a throwing release still counts as released", () => {
  let runs = 0;
  const cancelled = new Once(() => runs++);
  assert.equal(cancelled.cancel("device-lost"), true);
  assert.equal(cancelled.release(), false);
  assert.equal(runs, 0);
  const throwing = new Once(() => {
    throw new Error("deleter failed");
  });
  assert.throws(() => throwing.release(), /deleter failed/);
  assert.equal(throwing.released, true);
  assert.equal(throwing.release(), false);
});

test("once(fn) is a Once as a plain function", () => {
  let runs = 0;
  const release = once(() => runs++);
  release();
  release();
  assert.equal(runs, 1);
});

test("Holders: each holder's release counts once; the producer's release runs after the last", () => {
  let finalized = 0;
  const h = new Holders(() => finalized++, 0);
  const a = h.hold();
  const b = h.hold();
  assert.equal(h.count, 2);
  a();
  a(); // a second call of one holder's release does not release another holder
  assert.equal(h.count, 1);
  assert.equal(finalized, 0);
  b();
  assert.equal(finalized, 1);
  assert.equal(h.released, true);
  assert.equal(h.release(), false);
  assert.equal(finalized, 1);
});
