/**
 * A user's app bundled with esbuild and with Vite (tests/bundling/build-apps.mjs: the real
 * `npm pack` tarball installed into a temp app, then bundled) loads Pyodide, webdlpack's Python
 * package and its C side module with NO options: loadWebDLPack(pyodide), loadWebDLPackC(pyodide).
 * Vite copies the wheel and the side module into its build (new URL(..., import.meta.url));
 * esbuild leaves the URL pointing next to the bundle, where nothing is, so webdlpack falls
 * back to its embedded copy.
 */
import { spawnSync } from "node:child_process";
import { test, expect } from "@playwright/test";

interface AppResult {
  adapter: string;
  pythonVersion: string;
  values: number[];
  clibVersion: { major: number; minor: number };
  wheelSource: string;
  clibSource: string;
}

test.beforeAll(() => {
  const run = spawnSync(process.execPath, ["tests/bundling/build-apps.mjs"], { encoding: "utf8" });
  expect(run.status, `build-apps.mjs failed:\n${run.stdout}${run.stderr}`).toBe(0);
});

for (const bundler of ["esbuild", "vite"] as const) {
  test(`app bundled with ${bundler} finds the wheel and the side module with no options`, async ({ page }) => {
    const failed: string[] = [];
    page.on("response", (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
    await page.goto(`/build/bundle-test/${bundler}/index.html`);
    await page.waitForFunction(() => typeof (globalThis as { runBundledApp?: unknown }).runBundledApp === "function");
    const result = (await page.evaluate(async () => {
      const { loadPyodide } = await import("/node_modules/pyodide/pyodide.mjs" as string);
      const run = (globalThis as unknown as { runBundledApp: (l: unknown, u: string) => Promise<unknown> })
        .runBundledApp;
      return run(loadPyodide, "/node_modules/pyodide/");
    })) as AppResult;
    expect(result.adapter).toBe("swiftshader");
    expect(result.values).toEqual([1, 2, 3]);
    expect(result.pythonVersion).toBe("0.1.0");
    expect(result.clibVersion.major).toBe(0);
    if (bundler === "vite") {
      // Vite copied both files into its build and rewrote the URLs: no request failed.
      expect(new URL(result.wheelSource).pathname).toMatch(
        /^\/build\/bundle-test\/vite\/assets\/webdlpack-0\.1\.0-cp312-abi3-pyodide_2024_0_wasm32\.[\w.-]+\.whl$/,
      );
      expect(new URL(result.clibSource).pathname).toMatch(
        /^\/build\/bundle-test\/vite\/assets\/libwebdlpack-[\w-]+\.so$/,
      );
      expect(failed).toEqual([]);
    } else {
      // esbuild keeps the URL next to the bundle (404): the embedded copies were used.
      expect(result.wheelSource).toBe("embedded");
      expect(result.clibSource).toBe("embedded");
      expect(failed.every((f) => f.startsWith("404 /build/bundle-test/esbuild/"))).toBe(true);
    }
  });
}
