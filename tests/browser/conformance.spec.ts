/**
 * The conformance kit (webdlpack/conformance, docs/spec.md §8) in Chromium with WebGPU:
 * webdlpack passes every check (pointer.foreign against a second PageContext, whose pointers
 * carry another context tag), and every check FAILS (a SHOULD
 * check: warns) for at least one deliberately broken context, getContext, producer or consumer
 * (tests/browser/conformance-variants.js, with the variants in conformance-variants-{context,exchange}.js).
 */
import { cachedTest as test, expect } from "./fixtures.js";

interface Row {
  check: string;
  status: string;
  detail: string;
  name?: string;
}

test("webdlpack passes the kit, and each check catches its broken variants", async ({ page }) => {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  await page.goto("/tests/browser/harness.html?pyodide=0");
  await page.waitForFunction(() => document.getElementById("status")?.textContent === "ready");
  const out = (await page.evaluate(async () => {
    const m = await import("/tests/browser/conformance-variants.js" as string);
    return m.runAll();
  })) as { own: Row[]; lines: string[]; broken: Row[]; checkNames: string[] };
  console.log(out.lines.join("\n"));

  // webdlpack passes every check (pointer.foreign with a second PageContext: another pointer tag).
  expect(out.own.map((r) => r.check)).toEqual(out.checkNames);
  expect(out.own.filter((r) => r.status !== "pass")).toEqual([]);

  // Every check has a broken variant, and each variant is caught by its check.
  for (const b of out.broken) {
    const want = b.check === "producer.cpu-alignment" ? "warn" : "fail";
    expect(`${b.check} / ${b.name}: ${b.status}`).toBe(`${b.check} / ${b.name}: ${want}`);
    expect(b.detail.length).toBeGreaterThan(0);
  }
  expect(out.checkNames.filter((c) => !out.broken.some((b) => b.check === c))).toEqual([]);
  console.log(out.broken.map((b) => `${b.status.toUpperCase()} ${b.check} / ${b.name} — ${b.detail}`).join("\n"));
});
