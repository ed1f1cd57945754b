/**
 * The one place that holds browser settings: how Chromium is found, its
 * flags, the port and base URL, and the per-test timeout. The browser tests
 * (playwright.config.mjs), the demo (scripts/demo.mjs) and the benchmarks
 * (bench/) all import `browserSettings` from here.
 *
 * Chromium comes from the system: $WEBDLPACK_CHROMIUM, else $CHROMIUM_PATH,
 * else the first of chromium / chromium-browser / google-chrome on PATH.
 * Playwright never downloads a browser here: downloads are not available.
 * The port is $WEBDLPACK_PORT (default 8765).
 */
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
