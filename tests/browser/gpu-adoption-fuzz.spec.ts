/**
 * Short mode of the GPU adoption fuzzer (tests/browser/gpu-adoption-fuzz.js): 120 random cases of own, foreign
 * and destroyed GPUBuffers adopted and read every way, in Chromium (SwiftShader). Long mode: `make fuzz` runs it
 * for FUZZ_MINUTES (WEBDLPACK_FUZZ_SECONDS and WEBDLPACK_FUZZ_SEED here) and reads the JSON line it prints.
 */
import { cachedTest as test, expect, openAdaptersPage } from "./fixtures.js";

const seconds = Number(process.env["WEBDLPACK_FUZZ_SECONDS"] ?? 0);
const seed = Number(process.env["WEBDLPACK_FUZZ_SEED"] ?? 21);

test("GPU adoption fuzz: another device's buffer is always BAD_DEVICE, a destroyed one DISPOSED, the page's own reads exactly", async ({
  page,
}) => {
  test.setTimeout(seconds > 0 ? (seconds + 120) * 1000 : 120_000);
  await openAdaptersPage(page);
  const stats = await page.evaluate(
    async ({ seed, seconds }) => {
      const m = await import("/tests/browser/gpu-adoption-fuzz.js" as string);
      return m.fuzzAdoption(seconds > 0 ? { seed, seconds } : { seed, cases: 120 });
    },
    { seed, seconds },
  );
  console.log(JSON.stringify({ gpuAdoptionFuzz: { seed, ...stats } }));
  expect(stats.failures).toEqual([]);
  expect(stats.wrong).toBe(0);
  expect(stats.accepted).toBeGreaterThan(0);
  expect(stats.refused).toBeGreaterThan(0);
});
