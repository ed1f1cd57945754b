/**
 * Two differently built copies of webdlpack on one page (tests/protocol/build-copies.mjs):
 * the current source (context protocol 1.3) and the same source built as a protocol-1.1 copy,
 * whose contexts lack what 1.2 added. docs/spec.md G4: a newer-minor copy finding an older
 * context refuses it with INCOMPATIBLE_CONTEXT naming every missing member; an older copy
 * finding a newer context uses it, and its calls (allocWebGPUSync, await allocWebGPU) still work.
 */
import { spawnSync } from "node:child_process";
import { cachedTest as test, expect } from "./fixtures.js";

test.beforeAll(() => {
  const run = spawnSync(process.execPath, ["tests/protocol/build-copies.mjs"], { encoding: "utf8" });
  expect(run.status, `build-copies.mjs failed:\n${run.stdout}${run.stderr}`).toBe(0);
});

test("a 1.2 copy refuses a context a 1.1 copy made, naming what is missing", async ({ page }) => {
  await page.goto("/tests/browser/harness.html?pyodide=0");
  const out = await page.evaluate(async () => {
    const older = await import("/build/protocol-test/older.js" as string);
    const current = await import("/build/protocol-test/current.js" as string);
    const made = older.getContext();
    const record = (globalThis as unknown as Record<symbol, { protocol: unknown }>)[Symbol.for("webdlpack.context")]!;
    try {
      current.getContext();
      return { threw: false, protocol: record.protocol, madeHasChecked: "allocWebGPUChecked" in made };
    } catch (e) {
      const err = e as {
        code: string;
        errno: number;
        field: string;
        value: unknown;
        message: string;
        constructor: unknown;
      };
      return {
        threw: true,
        code: err.code,
        errno: err.errno,
        field: err.field,
        value: err.value,
        message: err.message,
        sameErrorClass: e instanceof current.WebDLPackError && e instanceof older.WebDLPackError,
        protocol: record.protocol,
        madeHasChecked: "allocWebGPUChecked" in made,
      };
    }
  });
  expect(out.protocol).toEqual({ major: 1, minor: 1 });
  expect(out.madeHasChecked).toBe(false);
  expect(out.threw).toBe(true);
  expect(out.code).toBe("INCOMPATIBLE_CONTEXT");
  expect(out.errno).toBe(22);
  expect(out.field).toContain("allocWebGPUChecked");
  expect(out.value).toBe("1.1");
  expect(out.message).toContain("allocWebGPUChecked");
  expect(out.sameErrorClass).toBe(true);
});

test("a 1.1 copy uses a context a 1.2 copy made; its allocation calls keep working", async ({ page }) => {
  await page.goto("/tests/browser/harness.html?pyodide=0");
  const out = await page.evaluate(async () => {
    const current = await import("/build/protocol-test/current.js" as string);
    const older = await import("/build/protocol-test/older.js" as string);
    const ctx = current.getContext();
    const seen = older.getContext();
    await seen.setup();
    const a = seen.allocWebGPUSync(64); // 1.1's synchronous name
    const b = await seen.allocWebGPU(64); // 1.1 awaited allocWebGPU: a number awaits to itself
    const ok = [a, b].every((p: number) => seen.gpuPointerToBuffer(p).size >= 64);
    seen.freeWebGPU(a);
    seen.freeWebGPU(b);
    return { same: seen === ctx, protocol: seen.protocol, ok, types: [typeof a, typeof b] };
  });
  expect(out.same).toBe(true);
  expect(out.protocol).toEqual({ major: 1, minor: 3 });
  expect(out.types).toEqual(["number", "number"]);
  expect(out.ok).toBe(true);
});
