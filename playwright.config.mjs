/**
 * The one place that holds browser settings: how Chromium is found, its
 * flags, timeouts and the base URL. The browser tests, the demo
 * (scripts/demo.mjs) and the benchmarks all import `browserSettings` from here.
 *
 * Chromium comes from the system: $WEBDLPACK_CHROMIUM, else $CHROMIUM_PATH,
 * else the first of chromium / chromium-browser / google-chrome on PATH.
 * Playwright never downloads a browser here: downloads are not available.
 */
import { defineConfig } from "@playwright/test";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** Find the system Chromium or explain how to get one. */
export function findChromium() {
  for (const name of ["WEBDLPACK_CHROMIUM", "CHROMIUM_PATH"]) {
    const value = process.env[name];
    if (value) return value;
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const exe of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]) {
      const candidate = join(dir, exe);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        /* keep looking */
      }
    }
  }
  throw new Error(
    "webdlpack: no Chromium found. Install Debian's `chromium` package (./run does it) " +
      "or set WEBDLPACK_CHROMIUM=/path/to/chromium.",
  );
}

const port = Number(process.env.WEBDLPACK_PORT ?? 8765);

export const browserSettings = {
  /** Headless Chromium with WebGPU on SwiftShader (software Vulkan), no network chatter. */
  args: [
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-angle=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--js-flags=--expose-gc",
  ],
  headless: true,
  port,
  baseURL: `http://127.0.0.1:${port}`,
  /** Per-test timeout; Pyodide + WebGPU start takes a few seconds on 2 cores. */
  testTimeout: 120_000,
  launchOptions() {
    return { executablePath: findChromium(), headless: true, args: this.args };
  },
};

export default defineConfig({
  testDir: "tests/browser",
  testMatch: "**/*.spec.ts",
  timeout: browserSettings.testTimeout,
  expect: { timeout: 20_000 },
  fullyParallel: false,
  workers: 1,
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
