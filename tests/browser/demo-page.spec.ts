/**
 * The demo page a person opens (web/index.html), clicked through in real
 * Chromium: every step's device, pointer, bytes, copy flag and values as
 * shown, the live allocation panel (ledger, cache stats, a leak caught by the
 * safety net), a screenshot as artifact, and the message without WebGPU.
 */
import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { cachedTest as test, expect } from "./fixtures.js";

interface Step {
  index: number;
  name: string;
  device: string;
  pointer: string;
  bytes: number;
  copy: boolean;
  values: string;
  liveEntries: number;
}
interface PanelEntry {
  kind: string;
  owner: string;
  pointer: number | null;
  deviceId: number | null;
  bytes: number;
  ageMs: number;
}
interface Panel {
  cacheMode: string;
  device: { livePointers: number; cachedBuffers: number; hits: number; misses: number };
  owners: { owner: string; hits: number; misses: number; livePointers: number }[];
  entries: PanelEntry[];
  leaks: PanelEntry[];
  memory: {
    totalBytes: number;
    budget: number | null;
    owners: { owner: string; bytes: number; cachedBytes: number | null }[];
  } | null;
}
interface DemoResult {
  ok: boolean;
  steps: Step[];
  checks: Record<string, unknown>;
  panel: Panel;
  error?: string;
  advice?: string | null;
}

const reference = JSON.parse(readFileSync("web/model/demo_reference.json", "utf8")) as {
  tfjs_sigmoid: number[];
  input: number[];
};
const shown = (values: number[]): string =>
  `[${values
    .slice(0, 6)
    .map((v) => Math.round(v * 1e4) / 1e4)
    .map((v) => (Number.isInteger(v) ? v.toFixed(1) : String(v)))
    .join(", ")}]`;

async function demoResult(page: Page): Promise<DemoResult> {
  const handle = await page.waitForFunction(() => (window as unknown as { demoResult?: unknown }).demoResult, null, {
    timeout: 100_000,
  });
  return (await handle.jsonValue()) as DemoResult;
}

/** The exchange's checks and steps, the same on the page and in the worker. */
function expectRightExchange(r: DemoResult): void {
  expect(r.error).toBeUndefined();
  expect(r.checks).toMatchObject({
    inputMatchesReference: true,
    ortInputShared: true,
    ortOutputShared: true,
    tfjsInputShared: true,
    tfjsOutputShared: true,
    valuesOk: true,
    pythonLiveExports: 0,
    leftoverPointers: 0,
    leftoverTfjsTensors: 0,
  });
  expect(r.checks["maxAbsError"] as number).toBeLessThan(1e-4);
  expect(r.ok).toBe(true);

  const s = r.steps;
  expect(s.map((x) => x.copy)).toEqual([false, false, true, false, false, false, true, false]);
  expect(s.map((x) => x.device)).toEqual(["cpu", "cpu", "webgpu:0", "webgpu:0", "webgpu:0", "webgpu:0", "cpu", "cpu"]);
  expect(s.map((x) => x.bytes)).toEqual(Array(8).fill(16 * 16 * 4));
  expect(s[0]!.name).toContain("Python");
  expect(s[4]!.name).toContain("ONNX Runtime Web");
  expect(s[5]!.name).toContain("TensorFlow.js");
  // Zero-copy shows as the same address: Python's bytes are what JS views; the shader runs on the uploaded pointer;
  // ORT's output, TF.js's result and the heap tensor each have their own pointer.
  expect(s[1]!.pointer).toBe(s[0]!.pointer);
  expect(s[3]!.pointer).toBe(s[2]!.pointer);
  expect(new Set([s[2]!.pointer, s[4]!.pointer, s[5]!.pointer]).size).toBe(3);
  expect(s[7]!.pointer).toBe(s[6]!.pointer);
  for (const x of s) expect(Number.parseInt(x.pointer, 16)).toBeGreaterThan(0);
  // GPU pointers carry their context's nonzero tag in the top 4 bits (≥ 2^28); heap addresses are plain addresses.
  for (const x of s.slice(2, 6)) expect(Number.parseInt(x.pointer, 16)).toBeGreaterThanOrEqual(2 ** 28);
  expect(s[0]!.values).toBe(shown(reference.input));
  expect(s[7]!.values).toBe(shown(reference.tfjs_sigmoid));
  // While ORT's output and TF.js's result are alive the ledger lists them; at the end nothing is left.
  expect(s[4]!.liveEntries).toBeGreaterThan(0);
  expect(s[5]!.liveEntries).toBeGreaterThan(0);
  expect(s[7]!.liveEntries).toBe(0);
}

/** What the page shows is what the result says: one row per step. */
async function expectDrawn(page: Page, steps: Step[]): Promise<void> {
  const rows = page.locator("#steps tbody tr");
  await expect(rows).toHaveCount(8);
  for (const x of steps) {
    const row = page.locator(`#steps tr[data-step="${x.index}"]`);
    await expect(row.locator(".device")).toHaveText(x.device);
    await expect(row.locator(".pointer")).toHaveText(x.pointer);
    await expect(row.locator(".bytes")).toHaveText(String(x.bytes));
    await expect(row.locator(".copy")).toHaveText(x.copy ? "copy" : "zero-copy");
    await expect(row.locator(".values")).toHaveText(x.values);
    await expect(row.locator(".time")).toHaveText(/^\d+\.\d\d ms$/);
  }
}

const panel = (page: Page): Promise<Panel> =>
  page.evaluate(() => (window as unknown as { demoPanel(): Panel }).demoPanel());

test("the demo page walks Python → JS → WebGPU → ORT-web → TF.js → Python and shows each step and the allocations", async ({
  page,
}, testInfo) => {
  const problems: string[] = [];
  page.on("pageerror", (err) => problems.push(err.message));
  await page.goto("/web/index.html");
  await expect(page.locator("#run")).toBeEnabled({ timeout: 100_000 });
  for (const stage of ["device", "runtime", "package", "frameworks"]) {
    await expect(page.locator(`[data-stage="${stage}"] .state`)).toHaveClass(/done/);
  }
  await page.locator("#run").click();
  const r = await demoResult(page);
  expectRightExchange(r);
  const s = r.steps;

  await expectDrawn(page, s);
  await expect(page.locator("#verdict")).toHaveClass("ok");
  await expect(page.locator("#verdict")).toContainText("ORT and TF.js shared GPU buffers zero-copy");

  // The allocation panel after the run: bucket cache holding the freed buffers, the demo's own row, nothing alive.
  expect(r.panel.cacheMode).toBe("bucket");
  expect(r.panel.device.livePointers).toBe(0);
  expect(r.panel.device.cachedBuffers).toBeGreaterThan(0);
  const demoOwner = r.panel.owners.find((o) => o.owner === "demo");
  expect(demoOwner && demoOwner.hits + demoOwner.misses).toBe(1);
  expect(r.panel.entries).toEqual([]);
  await expect(page.locator("#cache-mode")).toHaveText("bucket");
  await expect(page.locator('#cache-stats [data-stat="live pointers"] b')).toHaveText("0");
  await expect(page.locator("#owners tbody")).toContainText("demo");
  await expect(page.locator("#ledger tbody")).toHaveText("nothing alive");
  await expect(page.locator("#leaks tbody")).toHaveText("no leaks reported");
  // GPU memory by owner (ctx.memory()): webdlpack's and each framework's buffers on the one device, adding up.
  const mem = r.panel.memory!;
  expect(mem.owners.map((o) => o.owner)).toEqual(expect.arrayContaining(["webdlpack", "onnxruntime-web", "tfjs"]));
  expect(mem.owners.reduce((n, o) => n + o.bytes, 0)).toBe(mem.totalBytes);
  expect(mem.owners.find((o) => o.owner === "webdlpack")!.cachedBytes).toBeGreaterThan(0);
  expect(mem.budget).toBeNull();
  await expect(page.locator("#memory tbody")).toContainText("onnxruntime-web");
  await expect(page.locator("#memory-total")).toContainText("budget none");

  // A GPU tensor dropped without dispose: live in the ledger, then caught by the safety net after GC.
  await page.locator("#leak").click();
  await expect(page.locator("#ledger tbody")).toContainText("demo (leaked on purpose)");
  const live = await panel(page);
  // The buffer and the holder that frees it (ctx.ledger.track), watched for the page's dropped object.
  expect(live.entries).toHaveLength(2);
  for (const kind of ["gpu-buffer", "tensor"]) {
    expect(live.entries.find((e) => e.kind === kind)).toMatchObject({
      owner: "demo (leaked on purpose)",
      deviceId: 0,
      bytes: 4096,
    });
  }
  const leaked = live.entries[0]!.pointer!;
  expect(live.entries[1]!.pointer).toBe(leaked);
  await expect(page.locator("#ledger tbody")).toContainText(`0x${leaked.toString(16)}`);
  await expect(async () => {
    await page.evaluate(() => (window as unknown as { gc(): void }).gc());
    const p = await panel(page);
    expect(p.leaks.map((l) => l.pointer)).toContain(leaked);
  }).toPass({ timeout: 20_000 });
  await expect(page.locator("#leaks tbody")).toContainText(`0x${leaked.toString(16)}`);
  await expect(page.locator("#leaks tbody")).toContainText("demo (leaked on purpose)");
  await expect(page.locator("#ledger tbody")).toHaveText("nothing alive");
  expect((await panel(page)).device.livePointers).toBe(0);

  expect(problems).toEqual([]);
  await page.screenshot({ path: testInfo.outputPath("demo.png"), fullPage: true });
  await page.screenshot({ path: "build/screenshots/demo.png", fullPage: true });
});

test("without WebGPU the demo page says so and what to do, and loads nothing else", async ({ page }) => {
  await page.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined, configurable: true });
  });
  await page.goto("/web/index.html");
  const r = await demoResult(page);
  expect(r.error).toMatch(/^\[NO_WEBGPU\]/);
  expect(r.advice).toContain("http://127.0.0.1");
  await expect(page.locator("#error-panel")).toBeVisible();
  await expect(page.locator("#error-text")).toContainText("navigator.gpu");
  await expect(page.locator("#error-advice")).toContainText("--enable-unsafe-webgpu");
  await expect(page.locator('[data-stage="device"] .state')).toHaveClass(/failed/);
  await expect(page.locator('[data-stage="runtime"] .state')).toHaveText("waiting");
  await expect(page.locator("#run")).toBeDisabled();
});

test("?worker=1 runs the same loading stages and steps inside a dedicated Web Worker; the page only draws them", async ({
  page,
}) => {
  const problems: string[] = [];
  page.on("pageerror", (err) => problems.push(err.message));
  await page.goto("/web/index.html?worker=1");
  await expect(page.locator("#mode-text")).toContainText("inside a dedicated Web Worker");
  await expect(page.locator("#mode-switch")).toHaveAttribute("href", "?");
  await expect(page.locator("#run")).toBeEnabled({ timeout: 100_000 });
  for (const stage of ["device", "runtime", "package", "frameworks"]) {
    await expect(page.locator(`[data-stage="${stage}"] .state`)).toHaveClass(/done/);
  }
  await page.locator("#run").click();
  const r = await demoResult(page);
  expect((r as DemoResult & { mode: string }).mode).toBe("worker");
  expectRightExchange(r);
  await expectDrawn(page, r.steps);
  await expect(page.locator("#verdict")).toHaveClass("ok");
  // The worker's context did it all: its panel is drawn; the page never made a webdlpack context of its own.
  expect(r.panel.device.livePointers).toBe(0);
  expect(r.panel.entries).toEqual([]);
  await expect(page.locator("#ledger tbody")).toHaveText("nothing alive");
  expect(await page.evaluate(() => Object.getOwnPropertySymbols(globalThis).map(String))).not.toContain(
    "Symbol(webdlpack.context)",
  );
  // The leak button asks the worker: its ledger shows the dropped buffer and its holder.
  await page.locator("#leak").click();
  await expect(page.locator("#ledger tbody")).toContainText("demo (leaked on purpose)");
  expect((await panel(page)).entries.map((e) => e.kind)).toEqual(["gpu-buffer", "tensor"]);
  expect(problems).toEqual([]);
});
