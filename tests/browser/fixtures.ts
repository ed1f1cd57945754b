/**
 * Browser test fixtures.
 *
 * `shared`: one page per worker with webdlpack and Pyodide loaded from local
 * files; tests reuse it so Pyodide starts once (about 2 s), not per test.
 * `jsPage`: a fresh page with webdlpack only, for tests that must not disturb
 * the shared page (device destroy, two library copies).
 */
import { test as base, expect, type Page } from "@playwright/test";

async function openHarness(page: Page, query: string): Promise<Page> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  await page.goto(`/tests/browser/harness.html${query}`);
  await page.waitForFunction(() => (window as unknown as { harnessReady?: Promise<boolean> }).harnessReady !== undefined);
  await page.evaluate(() => (window as unknown as { harnessReady: Promise<boolean> }).harnessReady);
  return page;
}

export const test = base.extend<{ jsPage: Page }, { shared: Page }>({
  shared: [
    async ({ browser }, use) => {
      const page = await browser.newPage();
      await use(await openHarness(page, ""));
      await page.close();
    },
    { scope: "worker", timeout: 120_000 },
  ],
  jsPage: async ({ page }, use) => {
    await use(await openHarness(page, "?pyodide=0"));
  },
});

export { expect };
