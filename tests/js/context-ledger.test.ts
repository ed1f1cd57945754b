/** Node tests of the lifetime ledger: exactly-once release, entries, scopes (sync/async), keep, leaks, device loss. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { WebDLPackError } from "../../js/src/errors.js";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { Ledger } from "../../js/src/context/ledger/ledger.js";
import { asGPU, FakeBuffer, FakeGPU } from "./context-fakes.js";
import { isCode } from "./helpers.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The context's Ledger itself: `ctx.ledger` is typed as its public view (entries, leaks, track, watch). */
const ledgerOf = (ctx: PageContext): Ledger => ctx.ledger as Ledger;

async function ready(): Promise<PageContext> {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  await ctx.setup({ gpu: asGPU<GPU>(new FakeGPU()) });
  return ctx;
}

test("track → entry; release runs exactly once whichever path runs first; entries() reports it", () => {
  const ledger = new Ledger();
  let calls = 0;
  const entry = ledger.track({
    kind: "tensor",
    owner: "tfjs",
    deviceId: 0,
    bytes: 64,
    release: () => {
      calls += 1;
    },
  });
  const [row] = ledger.entries();
  assert.deepEqual(
    { ...row, ageMs: 0 },
    {
      id: entry.id,
      kind: "tensor",
      owner: "tfjs",
      deviceId: 0,
      bytes: 64,
      pointer: null,
      ageMs: 0,
      stack: null,
      scoped: false,
    },
  );
  assert.ok(row!.ageMs >= 0);
  assert.equal(entry.release(), true);
  assert.equal(entry.release(), false);
  entry[Symbol.dispose]();
  assert.equal(ledger.dispose(entry), false);
  assert.equal(calls, 1);
  assert.equal(entry.releasedBy, "dispose");
  assert.equal(ledger.entries().length, 0);
  // A throwing release still counts as released.
  const bad = ledger.track({
    kind: "tensor",
    release: () => {
      throw new Error("boom");
    },
  });
  assert.throws(() => bad.release(), /boom/);
  assert.equal(bad.released, true);
  assert.equal(bad.release(), false);
});

test("bad track options are INVALID_ARGUMENT naming the field", () => {
  const ledger = new Ledger();
  const cases: [unknown, string][] = [
    [null, "options."],
    [{ kind: "array", release: () => {} }, "options.kind"],
    [{ kind: "tensor" }, "options.release"],
    [{ kind: "tensor", release: () => {}, bytes: -1 }, "options.bytes"],
    [{ kind: "tensor", release: () => {}, pointer: 0 }, "options.pointer"],
    [{ kind: "tensor", release: () => {}, deviceId: 1.5 }, "options.deviceId"],
  ];
  for (const [options, field] of cases) {
    assert.throws(
      () => ledger.track(options as never),
      (e: unknown) => isCode("INVALID_ARGUMENT")(e) && (e as WebDLPackError).field === field,
    );
  }
  assert.throws(
    () => ledger.watch(42 as never, ledger.track({ kind: "tensor", release: () => {} })),
    isCode("INVALID_ARGUMENT", /watch needs an object/),
  );
  assert.throws(() => ledger.keep(999), isCode("INVALID_ARGUMENT", /names nothing live/));
});

test("stacks are captured only when debug.captureStacks is on", () => {
  const ledger = new Ledger();
  assert.equal(ledger.track({ kind: "tensor", release: () => {} }).stack, null);
  ledger.debug.captureStacks = true;
  const e = ledger.track({ kind: "tensor", release: () => {} });
  assert.match(e.stack ?? "", /context-ledger\.test/);
  assert.equal(ledger.track({ kind: "tensor", release: () => {}, stack: "here" }).stack, "here");
});

test("registerGPUBuffer with tracked: false makes no ledger entry; the holders' tensor entries stand in: scopes, dispose, device loss", async () => {
  const ctx = await ready();
  const released: number[] = [];
  const foreign = new FakeBuffer(64, 0x84, "ort");
  const p = ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign), {
    owner: "ort",
    onRelease: (_b, ptr) => released.push(ptr),
    tracked: false,
  });
  assert.equal(ledgerOf(ctx).size, 0);
  assert.equal(ledgerOf(ctx).entryForPointer(p), undefined);
  assert.equal(ctx.gpuPointerToBuffer(p), foreign as unknown as GPUBuffer);
  // A holder tracked as a "tensor" entry naming the pointer: ctx.dispose(pointer) reaches it, and its release frees the pointer.
  const holder = ctx.ledger.track({
    kind: "tensor",
    owner: "ort",
    deviceId: 0,
    bytes: 64,
    pointer: p,
    release: () => ctx.freeWebGPU(p),
  });
  assert.equal(ledgerOf(ctx).entryForPointer(p), holder);
  assert.equal(ctx.dispose(p), true);
  assert.deepEqual(released, [p]);
  assert.equal(ledgerOf(ctx).size, 0);
  assert.throws(() => ctx.gpuPointerToBuffer(p), isCode("STALE_POINTER"));
  // Device loss still gives an untracked buffer back, once.
  const q = ctx.registerGPUBuffer(asGPU<GPUBuffer>(new FakeBuffer(64, 0x84, "ort")), {
    onRelease: (_b, ptr) => released.push(ptr),
    tracked: false,
  });
  (ctx.getWebGPUDevice(0) as unknown as { destroy(): void }).destroy();
  await new Promise((res) => setTimeout(res, 0));
  assert.deepEqual(released, [p, q]);
  assert.throws(() => ctx.gpuPointerToBuffer(q), isCode("DEVICE_LOST"));
  ctx.freeWebGPU(q);
  assert.deepEqual(released, [p, q], "not again at free");
});

test("registerGPUBuffer refuses a tracked option that is not a boolean", async () => {
  const ctx = await ready();
  const buffer = asGPU<GPUBuffer>(new FakeBuffer(64, 0x84, "x"));
  assert.throws(
    () => ctx.registerGPUBuffer(buffer, { tracked: "no" as unknown as boolean }),
    (e: unknown) => e instanceof WebDLPackError && e.code === "INVALID_ARGUMENT" && e.field === "options.tracked",
  );
  assert.equal(ctx.stats().livePointers, 0);
});

test("every allocation is in the ledger; freeing either way releases once", async () => {
  const ctx = await ready();
  const p = await ctx.allocWebGPUChecked(100, { owner: "ort" });
  const entry = ledgerOf(ctx).entryForPointer(p)!;
  assert.deepEqual(
    [entry.kind, entry.owner, entry.deviceId, entry.bytes, entry.pointer],
    ["gpu-buffer", "ort", 0, 256, p],
  );
  ctx.freeWebGPU(p);
  assert.equal(entry.released, true);
  assert.equal(entry.release(), false, "already released by freeWebGPU");
  const q = ctx.allocWebGPU(100);
  ledgerOf(ctx).entryForPointer(q)!.release();
  assert.throws(() => ctx.gpuPointerToBuffer(q), isCode("STALE_POINTER"));
  assert.throws(() => ctx.freeWebGPU(q), isCode("DOUBLE_FREE"));
  assert.equal(ctx.stats().ledgerEntries, 0);
});

test("scope (sync): releases what was made inside, newest first, except kept and returned values", async () => {
  const ctx = await ready();
  const order: string[] = [];
  const outer = ctx.ledger.track({ kind: "tensor", owner: "x", release: () => order.push("outer") });
  let kept = 0;
  let inner: { a: number; b: number } | undefined;
  const returned = ctx.scope(() => {
    const a = ctx.allocWebGPU(16);
    const b = ctx.allocWebGPU(16);
    kept = ctx.keep(ctx.allocWebGPU(16));
    ctx.ledger.track({ kind: "tensor", release: () => order.push("t1") });
    ctx.ledger.track({ kind: "tensor", release: () => order.push("t2") });
    inner = { a, b };
    return { result: b };
  });
  assert.deepEqual(order, ["t2", "t1"]);
  assert.throws(() => ctx.gpuPointerToBuffer(inner!.a), isCode("STALE_POINTER"));
  assert.ok(ctx.gpuPointerToBuffer(returned.result), "returned pointer lives");
  assert.ok(ctx.gpuPointerToBuffer(kept), "kept pointer lives");
  assert.equal(outer.released, false, "made outside the scope");
  // A throwing scope still releases.
  let leaked = 0;
  assert.throws(
    () =>
      ctx.scope(() => {
        leaked = ctx.allocWebGPU(16);
        throw new Error("inside");
      }),
    /inside/,
  );
  assert.throws(() => ctx.gpuPointerToBuffer(leaked), isCode("STALE_POINTER"));
});

test("scope: nested returns move to the enclosing scope; a tensor on a pointer takes the buffer's place", async () => {
  const ctx = await ready();
  let innerPtr = 0;
  let tensorReleased = 0;
  const outerResult = ctx.scope(() => {
    innerPtr = ctx.scope(() => ctx.allocWebGPU(32));
    assert.ok(ctx.gpuPointerToBuffer(innerPtr), "survives the inner scope");
    const p = ctx.allocWebGPU(32);
    const holder = {};
    const t = ctx.ledger.track({
      kind: "tensor",
      pointer: p,
      release: () => {
        tensorReleased += 1;
        ctx.freeWebGPU(p);
      },
    });
    ctx.ledger.watch(holder, t);
    return holder;
  });
  assert.throws(() => ctx.gpuPointerToBuffer(innerPtr), isCode("STALE_POINTER"), "released by the outer scope");
  assert.equal(tensorReleased, 0, "the returned tensor (a watched object) is kept");
  assert.equal(ctx.dispose(outerResult), true);
  assert.equal(tensorReleased, 1);
  assert.equal(ctx.stats().livePointers, 0);
});

test("scope (async): releases after the promise settles, also on rejection", async () => {
  const ctx = await ready();
  let made = 0;
  const kept = await ctx.scope(async () => {
    made = await ctx.allocWebGPUChecked(64);
    await new Promise((r) => setTimeout(r, 1));
    return ctx.allocWebGPU(64);
  });
  assert.throws(() => ctx.gpuPointerToBuffer(made), isCode("STALE_POINTER"));
  assert.ok(ctx.gpuPointerToBuffer(kept));
  let inside = 0;
  await assert.rejects(
    ctx.scope(async () => {
      inside = await ctx.allocWebGPUChecked(64);
      throw new Error("async failure");
    }),
    /async failure/,
  );
  assert.throws(() => ctx.gpuPointerToBuffer(inside), isCode("STALE_POINTER"));
});

test("a dropped watched object is released by the finalizer and reported as a leak, with one warning", async () => {
  const ctx = await ready();
  ctx.debug.captureStacks = true;
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (msg: string) => warnings.push(msg);
  let ptr = 0;
  try {
    (() => {
      ptr = ctx.allocWebGPU(1000, { owner: "leaky-framework" });
      const wrapper = { name: "tensor wrapper" };
      ctx.ledger.watch(wrapper, ledgerOf(ctx).entryForPointer(ptr)!);
    })();
    for (let i = 0; i < 20 && ctx.leaks().length === 0; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    console.warn = warn;
  }
  const leaks = ctx.leaks();
  assert.equal(leaks.length, 1);
  assert.deepEqual(
    [leaks[0]!.kind, leaks[0]!.owner, leaks[0]!.bytes, leaks[0]!.pointer],
    ["gpu-buffer", "leaky-framework", 1024, ptr],
  );
  assert.match(leaks[0]!.where, /context-ledger\.test/);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /leaked gpu-buffer \(1024 bytes, owner leaky-framework/);
  assert.throws(() => ctx.gpuPointerToBuffer(ptr), isCode("STALE_POINTER"), "the finalizer freed it");
  assert.equal(ctx.stats().leaks, 1);
});

test("device loss releases the device's tracked tensors once; its pointers stay DEVICE_LOST until freed", async () => {
  const ctx = await ready();
  const p = await ctx.allocWebGPUChecked(64);
  const buffer = ctx.gpuPointerToBuffer(p) as unknown as FakeBuffer;
  let tensor = 0;
  let cpu = 0;
  const t = ctx.ledger.track({
    kind: "tensor",
    deviceId: 0,
    release: () => {
      tensor += 1;
    },
  });
  ctx.ledger.track({
    kind: "tensor",
    deviceId: null,
    release: () => {
      cpu += 1;
    },
  });
  const released: number[] = [];
  const foreign = new FakeBuffer(64, 0x84, "ort");
  const r = ctx.registerGPUBuffer(asGPU<GPUBuffer>(foreign), { onRelease: (_b, ptr) => released.push(ptr) });
  (ctx.getWebGPUDevice(0) as unknown as { destroy(): void }).destroy();
  await new Promise((res) => setTimeout(res, 0));
  assert.deepEqual([tensor, cpu, t.releasedBy], [1, 0, "device-lost"]);
  assert.deepEqual(released, [r], "onRelease ran at device loss");
  assert.equal(buffer.destroyed, 1);
  assert.throws(() => ctx.gpuPointerToBuffer(p), isCode("DEVICE_LOST"));
  ctx.freeWebGPU(p);
  ctx.freeWebGPU(r);
  assert.deepEqual(released, [r], "not again at free");
  assert.equal(t.release(), false);
});
