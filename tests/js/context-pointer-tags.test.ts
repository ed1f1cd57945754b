/**
 * GPU pointers name their context: two pointer tables (two contexts, e.g. a page and its Worker) with
 * different tags refuse each other's pointers, saying so, even where slot and generation match; tags are
 * claimed through Web Locks so live contexts of one origin never share one (a fake lock manager here; the
 * page ↔ Worker case runs in Chromium in tests/browser/worker.spec.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebDLPackError } from "../../js/src/errors.js";
import { PointerTable } from "../../js/src/context/pointers/pointer-table.js";
import {
  describeGPUPointer,
  randomPointerTag,
  GPU_POINTER_TAG_BITS,
} from "../../js/src/context/pointers/pointer-format.js";
import {
  claimPointerTag,
  POINTER_TAG_LOCK_PREFIX,
  type LockManagerLike,
} from "../../js/src/context/pointers/pointer-tags.js";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";

/** The error `fn` throws. */
function caught(fn: () => unknown): WebDLPackError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof WebDLPackError, String(err));
    return err;
  }
  assert.fail("expected a WebDLPackError");
}

test("two tables, two tags: the same slot and generation never resolve in the other table", () => {
  const page = new PointerTable<string>({ tag: 1 });
  const worker = new PointerTable<string>({ tag: 2 });
  const p = page.insert("page buffer");
  const w = worker.insert("worker buffer");
  assert.deepEqual(describeGPUPointer(p), { slot: 0, generation: 1, tag: 1 });
  assert.deepEqual(describeGPUPointer(w), { slot: 0, generation: 1, tag: 2 });
  assert.notEqual(p, w);
  for (const [table, foreign, mine, other] of [
    [worker, p, 2, 1],
    [page, w, 1, 2],
  ] as const) {
    assert.equal(table.has(foreign), false);
    for (const err of [caught(() => table.get(foreign)), caught(() => table.remove(foreign))]) {
      assert.equal(err.code, "INVALID_POINTER");
      assert.match(
        err.message,
        new RegExp(`\\(tag ${other}\\) was issued by another webdlpack context, not this one \\(tag ${mine}\\)`),
      );
      assert.equal(err.field, "ptr");
      assert.equal(err.value, foreign);
      assert.match(String(err.expected), /do not cross threads/);
    }
  }
  assert.equal(page.get(p), "page buffer");
  assert.equal(worker.get(w), "worker buffer");
  // Freed, then reused: the other table's pointer still never resolves, and stale/double-free stay exact.
  worker.remove(w);
  assert.equal(caught(() => worker.get(w)).code, "STALE_POINTER");
  assert.equal(caught(() => worker.get(p)).code, "INVALID_POINTER");
});

test("a pointer shown to a context that has issued none yet (setup() not run there): the error says call setup() first", () => {
  const setUp = new PointerTable<string>({ tag: 1 });
  const fresh = new PointerTable<string>({ tag: 2 });
  const p = setUp.insert("made elsewhere");
  const err = caught(() => fresh.get(p));
  assert.equal(err.code, "INVALID_POINTER");
  assert.match(err.message, /has issued no GPU pointer yet: call setup\(\) first/);
  assert.doesNotMatch(err.message, /threads/);
  assert.match(String(err.expected), /await getContext\(\)\.setup\(\)/);
  fresh.insert("its own");
  assert.doesNotMatch(caught(() => fresh.get(p)).message, /setup\(\)/, "once it has issued pointers, no setup hint");
});

test("layout: 4 tag, 10 generation, 18 slot bits; tag 0 is never issued; every pointer is at least 2^28", () => {
  const table = new PointerTable<number>({ tag: 15 });
  const a = table.insert(1);
  assert.equal(a, (15 * 2 ** 10 + 1) * 2 ** 18);
  assert.ok(a > 2 ** 31, "bit 31 set: unsigned in JS");
  assert.equal(table.tag, 15);
  const b = new PointerTable<number>({ tag: 1 }).insert(1);
  assert.equal(b, 2 ** 28 + 2 ** 18);
  // A tag-0 value is never issued by anyone: "never issued", not "another context".
  const err = caught(() => table.get(2 ** 18));
  assert.equal(err.code, "INVALID_POINTER");
  assert.match(err.message, /never issued/);
  assert.deepEqual(describeGPUPointer(-1), { slot: 2 ** 18 - 1, generation: 1023, tag: 15 });
  assert.deepEqual(describeGPUPointer(0x00030005, 16, 0), { slot: 5, generation: 3, tag: 0 });
});

test("tag options and retag are checked; retag only before the first pointer", () => {
  for (const tag of [0, 16, 1.5, -1]) {
    const err = caught(() => new PointerTable({ tag }));
    assert.equal(err.code, "INVALID_ARGUMENT");
    assert.equal(err.field, "tag");
  }
  assert.equal(caught(() => new PointerTable({ tagBits: 9 })).field, "tagBits");
  assert.equal(caught(() => new PointerTable({ tagBits: 8, generationBits: 17 })).field, "generationBits");
  assert.equal(
    new PointerTable({ tagBits: 8, generationBits: 16, tag: 255 }).insert(0) >>> 24,
    255,
    "8 tag bits on top, 8 slot bits left",
  );
  assert.equal(new PointerTable({ tagBits: 0 }).tag, 0);
  const table = new PointerTable<number>({ tag: 3 });
  table.retag(4);
  assert.equal(table.tag, 4);
  const p = table.insert(1);
  assert.equal(describeGPUPointer(p).tag, 4);
  const err = caught(() => table.retag(5));
  assert.equal(err.code, "INVALID_ARGUMENT");
  assert.match(err.message, /after issuing pointers/);
  assert.equal(table.get(p), 1);
});

test("a random tag is in 1 .. 15", () => {
  const seen = new Set<number>();
  for (let i = 0; i < 500; i++) seen.add(randomPointerTag());
  for (const tag of seen) assert.ok(tag >= 1 && tag <= 2 ** GPU_POINTER_TAG_BITS - 1, String(tag));
  assert.ok(seen.size > 10, `${seen.size} different tags in 500 draws`);
  assert.ok(new PointerTable().tag >= 1);
});

/** An in-memory Web Locks manager shared by "contexts" of one origin. */
function fakeLocks(): LockManagerLike & { held: Set<string> } {
  const held = new Set<string>();
  return {
    held,
    query: async () => ({ held: [...held].map((name) => ({ name })) }),
    request: async (name, options, callback) => {
      if (held.has(name)) {
        assert.equal(options.ifAvailable, true);
        return callback(null);
      }
      held.add(name);
      try {
        return await callback({ name });
      } finally {
        held.delete(name);
      }
    },
  };
}

test("claimPointerTag: live contexts of one origin get different tags; a released tag is taken again", async () => {
  const locks = fakeLocks();
  const first = await claimPointerTag(4, locks);
  const second = await claimPointerTag(4, locks);
  assert.equal(first?.tag, 1);
  assert.equal(second?.tag, 2);
  assert.deepEqual([...locks.held].sort(), [`${POINTER_TAG_LOCK_PREFIX}1`, `${POINTER_TAG_LOCK_PREFIX}2`]);
  first!.unlock();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal((await claimPointerTag(4, locks))?.tag, 1);
  // Every tag held: null (the table keeps its random tag); no Web Locks: null.
  const few = fakeLocks();
  const claims = [await claimPointerTag(2, few), await claimPointerTag(2, few), await claimPointerTag(2, few)];
  assert.deepEqual(
    claims.map((c) => c?.tag),
    [1, 2, 3],
  );
  assert.equal(await claimPointerTag(2, few), null);
  assert.equal(await claimPointerTag(4, undefined), null);
  const refusing: LockManagerLike = {
    query: async () => {
      throw new Error("SecurityError");
    },
    request: async () => undefined,
  };
  assert.equal(await claimPointerTag(4, refusing), null);
});

test("setup() claims a tag through Web Locks, but never replaces a tag given in the table options", async () => {
  const had = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: { locks: fakeLocks() }, configurable: true, writable: true });
  try {
    const given = new PageContext(CONTEXT_PROTOCOL, { table: { tag: 9 } });
    const claimed = new PageContext(CONTEXT_PROTOCOL);
    for (const ctx of [given, claimed]) {
      await assert.rejects(ctx.setup(), (err: unknown) => err instanceof WebDLPackError && err.code === "NO_WEBGPU");
    }
    assert.equal(given.stats().pointerTag, 9);
    assert.equal(claimed.stats().pointerTag, 1); // the first tag the fake lock manager had free
  } finally {
    if (had === undefined) delete (globalThis as { navigator?: unknown }).navigator;
    else Object.defineProperty(globalThis, "navigator", had);
  }
});
