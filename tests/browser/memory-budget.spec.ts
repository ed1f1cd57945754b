/**
 * One GPU memory budget for the page, with the real frameworks on webdlpack's one device (headless
 * Chromium, SwiftShader): TF.js works on 4 MiB tensors and disposes them (its buffer manager keeps the
 * buffers), Python makes the input on the GPU and frees a scratch tensor (webdlpack's cache keeps it),
 * then ORT-web runs Relu on Python's tensor and TF.js takes the sigmoid of ORT's output (zero-copy).
 * The device holds CAPACITY bytes (tests/browser/device-capacity.js: WebGPU's out-of-memory past it),
 * less than the run's peak when every cache keeps what it has:
 *
 * - without a budget an allocation is refused (ORT's output), and the run fails;
 * - with `setup({memoryBudget: CAPACITY})` webdlpack's cache and TF.js's free buffers are given back
 *   first, nothing is refused, the values are right, and at every step `ctx.memory()`'s bytes by owner
 *   add up to what the device holds (tallied independently by the capacity wrapper).
 */
import type { Page } from "@playwright/test";
import { cachedTest as test, expect, openAdaptersPage } from "./fixtures.js";

const MiB = 2 ** 20;
/** The device's capacity: above what the run needs live, below its peak with every cache full. */
const CAPACITY = 40 * MiB;

/** What one run reports. */
interface RunReport {
  error: string | null;
  maxErr: number | null;
  tally: { held: number; peak: number; refused: number; refusedBytes: number };
  steps: {
    step: string;
    total: number;
    held: number;
    owners: Record<string, number>;
    tfAllocated: number;
    tfCached: number | null;
    wdlCached: number | null;
    pointerBytes: number;
  }[];
  pressureEvents: number;
  trimmedBytes: number;
  peakBytes: number;
  budget: number | null;
}

/** Run the ORT + TF.js + Python workload on a device of `capacity` bytes, with `budget` (or none). */
async function run(page: Page, capacity: number, budget: number | null): Promise<RunReport> {
  await openAdaptersPage(page, "?pyodide=1");
  return page.evaluate(
    async ({ capacity, budget }) => {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const { webdlpack, adapters, ort, tf, WebGPUBackend, pyodide } = window as any;
      const { limitDeviceCapacity } = await import("/tests/browser/device-capacity.js" as string);
      const tally = limitDeviceCapacity(capacity);
      const ctx = webdlpack.getContext();
      await ctx.setup(budget === null ? {} : { memoryBudget: budget });
      await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
      const binding = adapters.bindOrtToContext(ort, ctx);
      const model = new Uint8Array(await (await fetch("/tests/data/relu_dynamic.onnx")).arrayBuffer());
      const session = await ort.InferenceSession.create(model, binding.sessionOptions());
      const steps: RunReport["steps"] = [];
      const step = (name: string): void => {
        const m = ctx.memory();
        const owners = Object.fromEntries(m.owners.map((o: { owner: string; bytes: number }) => [o.owner, o.bytes]));
        const tfRow = m.owners.find((o: { owner: string }) => o.owner === "tfjs");
        const wdl = m.owners.find((o: { owner: string }) => o.owner === "webdlpack");
        steps.push({
          step: name,
          total: m.totalBytes,
          held: tally.held,
          owners,
          tfAllocated: tf.memory().numBytesAllocatedInGPU,
          tfCached: tfRow?.cachedBytes ?? null,
          wdlCached: wdl?.cachedBytes ?? null,
          pointerBytes: ctx.stats().liveBytes,
        });
      };
      const N = 2 ** 20; // float32: 4 MiB per tensor
      let error: string | null = null;
      let maxErr: number | null = null;
      step("ready");
      try {
        // 1. TF.js: a chain of 4 MiB ops, read, disposed: its buffer manager keeps the buffers for reuse.
        const r = tf.tidy(() => {
          let a = tf.fill([N], 0.5);
          for (let i = 0; i < 3; i++) a = tf.add(tf.mul(a, 1.5), 0.25);
          return a;
        });
        await r.data();
        r.dispose();
        step("TF.js done");
        // 2. Python: an 8 MiB scratch GPU tensor freed (webdlpack's cache keeps it), then the input on the GPU.
        pyodide.globals.set("N", N);
        pyodide.runPython(`
import array, webdlpack
scratch = webdlpack.zeros((2 * N,), "float32", device="webgpu:0")
scratch.dispose()
src = array.array("f", [((i % 7) - 3) * 0.5 for i in range(N)])
x = webdlpack.asarray(src, device="webgpu:0")
jx = webdlpack.to_js(x)
`);
        const xt = pyodide.globals.get("jx");
        step("Python input");
        // 3. ORT: Relu on Python's tensor (its output is a new 4 MiB buffer); 4. TF.js: sigmoid of ORT's output.
        const ox = await binding.tensorToOrt(xt);
        const { Y } = await session.run({ X: ox });
        const yt = binding.tensorFromOrt(Y);
        const tt = await adapters.tensorToTfjs(tf, yt);
        const s = tf.sigmoid(tt);
        const values = (await s.data()) as Float32Array;
        step("ORT + TF.js");
        maxErr = 0;
        for (let i = 0; i < N; i++) {
          const v = Math.max(0, ((i % 7) - 3) * 0.5);
          maxErr = Math.max(maxErr, Math.abs(values[i]! - 1 / (1 + Math.exp(-v))));
        }
        s.dispose();
        tt.dispose();
        yt.dispose();
        ox.dispose();
        xt.dispose();
        pyodide.runPython("jx.dispose(); x.dispose(); del jx, x, src, scratch");
        step("released");
      } catch (e) {
        error = String((e as Error)?.message ?? e);
      }
      const m = ctx.memory();
      return {
        error,
        maxErr,
        tally: { ...tally },
        steps,
        pressureEvents: m.pressureEvents,
        trimmedBytes: m.trimmedBytes,
        peakBytes: m.peakBytes,
        budget: m.budget,
      };
    },
    { capacity, budget },
  );
}

test("without a budget, the run's peak crosses the device's capacity: an allocation is refused and the run fails", async ({
  page,
}) => {
  const r = await run(page, CAPACITY, null);
  console.log(JSON.stringify(r, null, 1));
  expect(r.tally.refused).toBeGreaterThan(0);
  const failed = r.error !== null || r.maxErr === null || r.maxErr > 1e-5;
  expect(failed).toBe(true);
});

test("with setup({memoryBudget}) the caches give memory back first: nothing refused, values right, bytes by owner = what the device holds", async ({
  page,
}) => {
  const r = await run(page, CAPACITY, CAPACITY);
  console.log(JSON.stringify(r, null, 1));
  expect(r.error).toBeNull();
  expect(r.tally.refused).toBe(0);
  expect(r.maxErr).not.toBeNull();
  expect(r.maxErr!).toBeLessThan(1e-5);
  expect(r.budget).toBe(CAPACITY);
  expect(r.pressureEvents).toBeGreaterThan(0);
  expect(r.trimmedBytes).toBeGreaterThan(0);
  expect(r.tally.peak).toBeLessThanOrEqual(CAPACITY);
  expect(r.peakBytes).toBeLessThanOrEqual(CAPACITY);
  // Staging made ready at setup takes at most 1/8 of the budget (transfers/calibrate.ts), not 32 MiB.
  expect(r.steps[0]!.owners["webdlpack"] ?? 0).toBeLessThanOrEqual(CAPACITY / 8);
  for (const s of r.steps) {
    expect(s.total, s.step).toBe(s.held);
    expect(
      Object.values(s.owners).reduce((a, b) => a + b, 0),
      s.step,
    ).toBe(s.total);
    expect(s.owners["tfjs"] ?? 0, s.step).toBe(s.tfAllocated); // what TF.js itself reports (tf.memory())
  }
});
