// Benchmark (not a test): ORT-web output → TF.js input at 1 KiB and 16 MiB,
// through webdlpack (zero-copy, same GPUBuffer) vs read back + re-upload (what users do today).
// Writes bench/out/adapters.json; bench/run.mjs folds it into bench/results.json.
import { chromium } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { startServer } from "../scripts/serve.mjs";
import { browserSettings } from "../playwright.config.mjs";

const server = await startServer({ port: 0, quiet: true });
const browser = await chromium.launch(browserSettings.launchOptions());
const page = await browser.newPage();
await page.goto(`${server.url}/tests/browser/adapters.html`);
await page.evaluate(() => window.adaptersReady);
const result = {};
for (const nbytes of [1024, 16 * 1024 * 1024]) result[nbytes] = await page.evaluate(async (nbytes) => {
  const { webdlpack, adapters, ort, tf, WebGPUBackend } = window;
  const ctx = webdlpack.getContext();
  await ctx.setup();
  const device = ctx.getWebGPUDevice(0);
  if (!window.__tfReady) { await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx); window.__tfReady = true; }
  const binding = adapters.bindOrtToContext(ort, ctx);
  const model = new Uint8Array(await (await fetch("/tests/data/relu_dynamic.onnx")).arrayBuffer());
  const session = await ort.InferenceSession.create(model, binding.sessionOptions());
  const n = nbytes / 4;
  const x = new Float32Array(n).map((_, i) => (i % 7) - 3);
  const X = new ort.Tensor("float32", x, [n]);
  const runs = { webdlpack: [], readback: [], webdlpackHandoffOnly: [], readbackHandoffOnly: [] };
  for (let i = 0; i < 9; i++) {
    // via webdlpack
    let { Y } = await session.run({ X });
    await device.queue.onSubmittedWorkDone();
    let t0 = performance.now();
    const t = binding.tensorFromOrt(Y);
    const tt = await adapters.tensorToTfjs(tf, t);
    let t1 = performance.now();
    let s = tf.sum(tt);
    await s.data();
    let t2 = performance.now();
    runs.webdlpackHandoffOnly.push(t1 - t0);
    runs.webdlpack.push(t2 - t0);
    s.dispose(); tt.dispose(); t.dispose();
    // via read back + upload
    ({ Y } = await session.run({ X }));
    await device.queue.onSubmittedWorkDone();
    t0 = performance.now();
    const data = await Y.getData(true);
    const tc = tf.tensor(data, [n], "float32");
    t1 = performance.now();
    s = tf.sum(tc);
    await s.data();
    t2 = performance.now();
    runs.readbackHandoffOnly.push(t1 - t0);
    runs.readback.push(t2 - t0);
    s.dispose(); tc.dispose(); Y.dispose();
  }
  const median = (a) => [...a].sort((p, q) => p - q)[Math.floor(a.length / 2)];
  return Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, { medianMs: +median(v.slice(1)).toFixed(2), runsMs: v.map((z) => +z.toFixed(2)) }]));
}, nbytes);
mkdirSync("bench/out", { recursive: true });
writeFileSync("bench/out/adapters.json", JSON.stringify(result, null, 1) + "\n");
for (const [n, r] of Object.entries(result)) console.log(`ORT → TF.js ${n} B: hand-off webdlpack ${r.webdlpackHandoffOnly.medianMs} ms vs readback+upload ${r.readbackHandoffOnly.medianMs} ms; with tf.sum ${r.webdlpack.medianMs} vs ${r.readback.medianMs} ms`);
await browser.close();
await server.close();
