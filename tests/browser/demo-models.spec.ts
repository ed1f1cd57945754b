/**
 * The real-model demo page (web/models.html, `?auto=1`): it finds the text it drew, every hand-off is
 * zero-copy, what the page shows agrees with `window.modelsDemoResult`, and after the run webdlpack holds
 * nothing but what it held before (the panel's ledger lists no tensor or export of the pipeline).
 */
import { cachedTest as test, expect } from "./fixtures.js";

test.setTimeout(480_000);

test("models page: picture → Python → TF.js → ORT (PP-OCRv4) → Python on the shared device, zero-copy, boxes drawn", async ({
  page,
}) => {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/\[W:onnxruntime:/.test(msg.text())) errors.push(msg.text());
  });
  await page.goto("/web/models.html?auto=1");
  await page.waitForFunction(() => (window as unknown as { modelsDemoResult?: unknown }).modelsDemoResult, null, {
    timeout: 420_000,
  });
  const r = await page.evaluate(() => {
    type Step = { name: string; zeroCopy: boolean };
    const w = window as unknown as {
      modelsDemoResult: { ok: boolean; steps: Step[]; boxes: number[][]; handoffsZeroCopy: boolean; error?: string };
    };
    return {
      ...w.modelsDemoResult,
      rows: document.querySelectorAll("#steps tbody tr").length,
      verdict: document.querySelector("#verdict")?.textContent ?? "",
      panelShown: !(document.querySelector("#allocations") as HTMLElement | null)?.hidden,
      ledger: [...document.querySelectorAll("#ledger tbody tr")].map((tr) => tr.textContent ?? ""),
    };
  });
  expect(r.error).toBeUndefined();
  expect(r.ok).toBe(true);
  expect(r.handoffsZeroCopy).toBe(true);
  expect(r.steps.map((s) => s.name)).toContain("TF.js → ONNX Runtime");
  expect(r.rows).toBe(r.steps.length);
  expect(r.verdict).toMatch(/^OK: \d+ text boxes/);
  // The picture has three lines of text: at least one box per line, each inside the 384×128 picture.
  expect(r.boxes.length).toBeGreaterThanOrEqual(3);
  for (const [x, y, w, h] of r.boxes) {
    expect(x! + w!).toBeLessThanOrEqual(384);
    expect(y! + h!).toBeLessThanOrEqual(128);
  }
  expect(r.panelShown).toBe(true);
  expect(r.ledger.join("\n")).not.toMatch(/export|tensor/);
  expect(errors).toEqual([]);
});
