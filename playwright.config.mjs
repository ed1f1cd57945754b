/**
 * Playwright's configuration for the browser tests (tests/browser). The
 * browser settings it shares with the demo and the benchmarks (Chromium,
 * flags, port, timeouts) are in scripts/browser-settings.mjs.
 */
import { availableParallelism } from "node:os";
import { defineConfig } from "@playwright/test";
import { browserSettings } from "./scripts/browser-settings.mjs";

const port = browserSettings.port;

export default defineConfig({
  testDir: "tests/browser",
  testMatch: "**/*.spec.ts",
  timeout: browserSettings.testTimeout,
  expect: { timeout: 20_000 },
  fullyParallel: false,
  // Two spec files at a time, each in its own Chromium: one worker leaves a core idle while a page waits on
  // SwiftShader or a load (the whole suite passed at 2 under a load average of 8).
  workers: Number(process.env.WEBDLPACK_BROWSER_WORKERS ?? Math.min(2, availableParallelism())),
  retries: 0,
  forbidOnly: !!process.env.CI,
  outputDir: "build/test-artifacts",
  reporter: [["list"], ["junit", { outputFile: "build/test-results/browser.xml" }]],
  use: {
    baseURL: browserSettings.baseURL,
    launchOptions: browserSettings.launchOptions(),
    trace: "off",
  },
  webServer: {
    command: `node scripts/serve.mjs --port ${port}`,
    url: `${browserSettings.baseURL}/__health`,
    // Never test whatever already listens on the port (a `make serve` of another checkout): a busy port is an
    // error; run two suites at once with different WEBDLPACK_PORT values.
    reuseExistingServer: false,
    timeout: 20_000,
  },
});
