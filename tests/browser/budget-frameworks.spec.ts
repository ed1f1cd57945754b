/**
 * Every framework pushed past the page's GPU memory budget on webdlpack's one device, then continuing
 * (headless Chromium, SwiftShader, the real packages; tests/browser/frameworks.html). WebGPU's `createBuffer`
 * never throws, and frameworks are written against that: a framework's creation past the budget goes ahead
 * (counted in `ctx.memory().budgetOverruns`, after the pressure handlers made what room they could), while
 * webdlpack's own allocations are refused with OUT_OF_MEMORY. For each framework: its results past the budget
 * are right, its next calls complete and are right, the device reports no error, nothing is orphaned, and
 * once its memory is given back webdlpack allocates again. Before (docs/memory.md's history): ORT-web's run
 * failed and its next run spun the page forever; TF.js's next op returned 0.
 */
import { frameworksTest as test, expect } from "./fixtures.js";

/** What every framework's run reports about the budget and the device. */
interface PastBudget {
  state: {
    budget: number;
    totalBytes: number;
    overruns: number;
    outOfMemoryErrors: number;
    refused: { code: string; field: string };
  };
  errors: string[];
  after: { code: string; overruns: number };
}

/** The budget was crossed by the framework (not refused), webdlpack's own allocation was, and no error was seen. */
function expectPastBudget(r: PastBudget): void {
  expect(r.state.overruns, "the framework's creations went ahead past the budget").toBeGreaterThan(0);
  expect(r.state.totalBytes).toBeGreaterThan(r.state.budget);
  expect(r.state.refused).toEqual({ code: "OUT_OF_MEMORY", field: "memoryBudget" });
  expect(r.errors, "no WebGPU error, no uncaught exception").toEqual([]);
  expect(r.after.code, "webdlpack allocates again once memory is given back").toBe("no error");
}

test("ORT-web past the budget: its runs complete with the right values, the next session too; webdlpack's own allocation is refused meanwhile", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort } = window as any;
    const kit = await import("/tests/browser/budget-kit.js" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const watch = kit.watchErrors(ctx.getWebGPUDevice(0));
    const binding = adapters.bindOrtToContext(ort, ctx);
    const model = new Uint8Array(await (await fetch("/tests/data/relu_dynamic.onnx")).arrayBuffer());
    await kit.budgetAboveHeld(ctx, 64 * 1024);
    /** Relu of `n` values made from `k` in ORT; the largest error against Relu computed here. */
    const relu = async (session: { run: (f: object) => Promise<Record<string, unknown>> }, n: number, k: number) => {
      const x = Float32Array.from({ length: n }, (_, i) => ((i % 7) - 3) * k);
      const { Y } = (await session.run({ X: new ort.Tensor("float32", x, [n]) })) as {
        Y: { getData: () => Promise<Float32Array>; dispose: () => void; location: string };
      };
      const location = Y.location; // (getData() moves it to the CPU)
      const y = await Y.getData();
      Y.dispose();
      return {
        err: kit.maxDiff(
          y,
          x.map((v) => Math.max(0, v)),
        ),
        location,
      };
    };
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    const runs = [await relu(session, 2 ** 18, 0.5), await relu(session, 2 ** 19, 0.25)]; // 1 MiB, then 2 MiB
    const state = await kit.pastBudgetState(ctx);
    runs.push(await relu(session, 2 ** 18, 1.5)); // and it goes on
    await session.release();
    const next = await ort.InferenceSession.create(model, binding.sessionOptions()); // a new session, still past
    runs.push(await relu(next, 2 ** 19, 2));
    await next.release();
    ctx.setMemoryBudget(null);
    const after = await kit.pastBudgetState(ctx);
    return { runs, state, errors: watch.stop(), after: { code: after.refused.code, overruns: after.overruns } };
  });
  console.log(JSON.stringify(r));
  for (const run of r.runs) {
    expect(run.location).toBe("gpu-buffer");
    expect(run.err).toBe(0); // Relu is exact
  }
  expectPastBudget(r);
});

test("TF.js past the budget: ops and reductions right, trims mid-op and with its pass open lose nothing, no orphan tensors", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, tf, WebGPUBackend } = window as any;
    const kit = await import("/tests/browser/budget-kit.js" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const watch = kit.watchErrors(ctx.getWebGPUDevice(0));
    const backend = await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    const N = 2 ** 20; // 4 MiB of float32
    const tensorsBefore = tf.memory().numTensors;
    const budget = await kit.budgetAboveHeld(ctx, 8 * 2 ** 20);
    // Free buffers in TF.js's pool (1 MiB each), so its pressure handler has something to give back mid-op.
    const scratch = Array.from({ length: 3 }, (_, i) => tf.fill([N / 4], i));
    for (const t of scratch) await t.data();
    for (const t of scratch) t.dispose();
    const freeBefore = backend.bufferManager.numFreeBuffers;
    const trimmedBefore = ctx.memory().trimmedBytes;
    // Six 4 MiB tensors kept alive: 24 MiB on an 8 MiB headroom, each op records into TF.js's open pass; the
    // pressure comes from inside TF.js's createBuffer, mid-op: its handler trims without submitting.
    const kept = Array.from({ length: 6 }, (_, i) => tf.tidy(() => tf.add(tf.fill([N], i), 1)));
    const sum = tf.tidy(() => tf.sum(tf.mul(tf.range(0, 1024), 2))); // 1047552, exact in float32
    const trimmedMidOp = ctx.memory().trimmedBytes - trimmedBefore;
    const freeAfterOps = backend.bufferManager.numFreeBuffers;
    const sumValue = (await sum.data())[0];
    // A trim asked by the page while TF.js has work recorded in an open compute pass: flushed, then trimmed.
    const open = tf.mul(kept[5], 2); // recorded, not submitted
    const passOpen = backend.computePassEncoder != null;
    const trimmed = await ctx.trimMemory();
    const openValues = await open.data();
    const keptOk = [];
    for (let i = 0; i < kept.length; i++) {
      const v = await kept[i].data();
      keptOk.push(v[0] === i + 1 && v[N - 1] === i + 1);
    }
    const state = await kit.pastBudgetState(ctx);
    // It goes on: another reduction past the budget.
    const again = tf.tidy(() => tf.sum(tf.mul(tf.range(0, 2048), 3)));
    const againValue = (await again.data())[0];
    for (const t of [...kept, sum, open, again]) t.dispose();
    const tensorsAfter = tf.memory().numTensors;
    await ctx.trimMemory();
    const after = await kit.pastBudgetState(ctx);
    return {
      budget,
      freeBefore,
      freeAfterOps,
      trimmedMidOp,
      passOpen,
      sumValue,
      againValue,
      trimmed,
      open: { first: openValues[0], last: openValues[N - 1] },
      keptOk,
      tensorsBefore,
      tensorsAfter,
      state,
      errors: watch.stop(),
      after: { code: after.refused.code, overruns: after.overruns },
    };
  });
  console.log(JSON.stringify(r));
  expect(r.freeBefore).toBeGreaterThanOrEqual(3);
  expect(r.trimmedMidOp, "TF.js's free buffers given back inside its own createBuffer").toBeGreaterThan(0);
  expect(r.freeAfterOps).toBeLessThan(r.freeBefore);
  expect(r.passOpen, "TF.js had its compute pass open when the page trimmed").toBe(true);
  expect(r.sumValue).toBe(1047552);
  expect(r.againValue).toBe(6288384); // 3 * 2047 * 2048 / 2
  expect(r.open).toEqual({ first: 12, last: 12 });
  expect(r.keptOk).toEqual([true, true, true, true, true, true]);
  expect(r.tensorsAfter).toBe(r.tensorsBefore); // no orphan tensors
  expectPastBudget(r);
});

test("Transformers.js past the budget: a pipeline made and run past it gives the reference output, and runs again", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, transformers } = window as any;
    const kit = await import("/tests/browser/budget-kit.js" as string);
    const ref = await (await fetch("/tests/data/transformers/tiny-bert/reference.json")).json();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const watch = kit.watchErrors(ctx.getWebGPUDevice(0));
    await kit.budgetAboveHeld(ctx, 4096); // the model's weights alone cross it
    const extractor = await transformers.pipeline("feature-extraction", "tiny-bert", adapters.transformersOptions(ctx));
    const first = await extractor(ref.text, { pooling: "none" });
    const firstErr = kit.maxDiff(first.data, ref.last_hidden_state.flat(2));
    const other = await extractor(`${ref.text} ${ref.text}`, { pooling: "none" }); // longer: new buffers
    const otherDims = [...other.dims];
    const state = await kit.pastBudgetState(ctx);
    const again = await extractor(ref.text, { pooling: "none" });
    const againDiff = kit.maxDiff(again.data, first.data);
    await extractor.dispose();
    ctx.setMemoryBudget(null);
    const after = await kit.pastBudgetState(ctx);
    return {
      firstErr,
      otherDims,
      againDiff,
      state,
      errors: watch.stop(),
      after: { code: after.refused.code, overruns: after.overruns },
    };
  });
  console.log(JSON.stringify(r));
  // Against the reference NumPy-side run (tests/data/transformers/tiny-bert/reference.json): float32 GPU
  // kernels sum in another order, so a tolerance; the same run twice on the same device: the same order.
  expect(r.firstErr).toBeLessThan(1e-5);
  expect(r.againDiff).toBeLessThan(1e-6);
  expect(r.otherDims[0]).toBe(1);
  expect(r.otherDims[1]).toBeGreaterThan(10);
  expectPastBudget(r);
});

test("LiteRT.js past the budget: a model compiled and run past it gives the reference output, and runs again", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, litert, loadLiteRtLocal } = window as any;
    const kit = await import("/tests/browser/budget-kit.js" as string);
    const ref = await (await fetch("/tests/data/litert_chain_reference.json")).json();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const watch = kit.watchErrors(ctx.getWebGPUDevice(0));
    await loadLiteRtLocal();
    await adapters.bindLiteRtToContext(litert, ctx);
    await kit.budgetAboveHeld(ctx, 256);
    const model = await litert.loadAndCompile("/tests/data/litert_fc.tflite", { accelerator: "webgpu" });
    const input = Float32Array.from(ref.input.flat());
    const errs: number[] = [];
    let state: unknown;
    for (let i = 0; i < 3; i++) {
      const x = new litert.Tensor(input, [4, 8]);
      const [y] = await model.run([x]);
      errs.push(kit.maxDiff(await y.data(), ref.litert.flat()));
      if (i === 0) state = await kit.pastBudgetState(ctx);
      x.delete();
      y.delete();
    }
    model.delete();
    await ctx.trimMemory();
    ctx.setMemoryBudget(null);
    const after = await kit.pastBudgetState(ctx);
    return { errs, state, errors: watch.stop(), after: { code: after.refused.code, overruns: after.overruns } };
  });
  console.log(JSON.stringify(r));
  for (const e of r.errs) expect(e).toBeLessThan(1e-5); // against NumPy (scripts/make_tflite_model.py)
  expectPastBudget(r as PastBudget);
});

test("tvmjs past the budget: its VM made and run past it gives right values, runs again; its handler runs mid-run", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels, createTvmVm } = window as any;
    const kit = await import("/tests/browser/budget-kit.js" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const watch = kit.watchErrors(ctx.getWebGPUDevice(0));
    const tvm = await loadTvmModels();
    adapters.bindTvmToContext(tvm, ctx);
    await kit.budgetAboveHeld(ctx, 256);
    const askedBy: string[] = []; // registered last: called for every creation past the budget
    const off = ctx.onMemoryPressure((p: { requestedBy: string }) => void askedBy.push(p.requestedBy));
    const vm = createTvmVm(tvm); // the model's constants: past the budget already
    const relu = tvm.withNewScope(() => tvm.detachFromCurrentScope(vm.getFunction("relu")));
    /** relu on `n` float32 values from `k` in tvmjs, read back through tvmjs; the largest error. */
    const run = async (n: number, k: number): Promise<number> => {
      const x = Float32Array.from({ length: n }, (_, i) => ((i % 5) - 2) * k);
      tvm.beginScope();
      const input = tvm.empty([n], "float32", tvm.webgpu());
      input.copyFrom(x);
      const out = relu(input);
      const host = tvm.detachFromCurrentScope(tvm.empty([n], "float32", tvm.cpu()));
      host.copyFrom(out);
      tvm.endScope();
      await tvm.webgpu().sync();
      const err = kit.maxDiff(
        host.toArray(),
        x.map((v) => Math.max(0, v)),
      );
      host.dispose();
      return err;
    };
    const errs = [await run(2 ** 18, 0.5), await run(2 ** 19, 1.5)];
    off();
    const state = await kit.pastBudgetState(ctx);
    errs.push(await run(2 ** 18, 3)); // and again
    relu.dispose();
    vm.dispose();
    tvm.lib.webGPUContext.flushCommands();
    await ctx.trimMemory(); // tvmjs's handler clears its VM pool
    ctx.setMemoryBudget(null);
    const after = await kit.pastBudgetState(ctx);
    return {
      errs,
      askedBy: [...new Set(askedBy)],
      state,
      errors: watch.stop(),
      after: { code: after.refused.code, overruns: after.overruns },
    };
  });
  console.log(JSON.stringify(r));
  for (const e of r.errs) expect(e).toBe(0); // relu is exact
  // Room was asked for inside tvmjs's own creations (mid-run: its handler, TVM's memory_manager.clear, ran there).
  expect(r.askedBy).toContain("tvmjs");
  expectPastBudget(r);
});
