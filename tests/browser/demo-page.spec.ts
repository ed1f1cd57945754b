/** The demo page a person opens: it runs the exchange and shows the right values. */
import { test, expect } from "./fixtures.js";

test("the demo page runs Python → JS → WebGPU → JS → Python and shows each step", async ({ page }, testInfo) => {
  await page.goto("/web/index.html?auto=1");
  const handle = await page.waitForFunction(() => (window as unknown as { demoResult?: unknown }).demoResult, null, { timeout: 90_000 });
  const result = (await handle.jsonValue()) as { ok: boolean; steps: { name: string; copy: boolean; values: string }[]; error?: string };
  expect(result.error).toBeUndefined();
  expect(result.ok).toBe(true);
  expect(result.steps.map((s) => s.copy)).toEqual([false, false, true, false, true, false]);
  expect(result.steps[5]!.values).toBe("[1.0, 1.5, 2.0, 2.5, 3.0, 3.5]");
  await expect(page.locator("#verdict")).toHaveClass("ok");
  await expect(page.locator('[data-stage="device"] .state')).toHaveClass(/done/);
  await expect(page.locator("#steps tbody tr")).toHaveCount(6);
  await page.screenshot({ path: testInfo.outputPath("demo.png"), fullPage: true });
  await page.screenshot({ path: "build/screenshots/demo.png", fullPage: true });
});
