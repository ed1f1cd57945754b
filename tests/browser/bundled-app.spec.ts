/**
 * A user's app bundled with each recipe of docs/bundlers.md (tests/bundling/build-apps.mjs: the real
 * `npm pack` tarball installed into a temp app, then bundled, pyodide included) loads Pyodide,
 * webdlpack's Python package and its C side module with NO options: loadWebDLPack(pyodide),
 * loadWebDLPackC(pyodide). Each must make no failed request and ship the wheel once:
 * - esbuild: python/ and wasm/ copied next to the bundle (esbuild leaves `new URL(..., import.meta.url)` as is);
 * - esbuild-embedded: useEmbeddedAssets() from webdlpack/embedded, the files inside the JS, nothing fetched;
 * - Vite and webpack 5: they copy the files `new URL(..., import.meta.url)` names; no embedded copy in the JS.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
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
  test.setTimeout(180_000);
  const run = spawnSync(process.execPath, ["tests/bundling/build-apps.mjs"], { encoding: "utf8" });
  expect(run.status, `build-apps.mjs failed:\n${run.stdout}${run.stderr}`).toBe(0);
});

/** Every file of a build, relative to it. */
function filesOf(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => statSync(join(dir, f)).isFile());
}

/** "UEsDBBQ": the base64 start of a zip (the embedded wheel); "AGFzbQ": of a wasm module (the side module). */
const EMBEDDED = /UEsDBBQ|AGFzbQEAAAAA/;

const WHEEL = /webdlpack-0\.1\.0-cp312-abi3-pyodide_2024_0_wasm32\.[\w.-]+\.whl$/;

for (const bundler of ["esbuild", "esbuild-embedded", "vite", "webpack"] as const) {
  test(`app bundled with ${bundler} finds the wheel and the side module with no options, no failed request, each file once`, async ({
    page,
  }) => {
    const failed: string[] = [];
    page.on("response", (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
    await page.goto(`/build/bundle-test/${bundler}/index.html`);
    await page.waitForFunction(() => typeof (globalThis as { runBundledApp?: unknown }).runBundledApp === "function");
    const result = (await page.evaluate(async () => {
      const run = (globalThis as unknown as { runBundledApp: (u: string) => Promise<unknown> }).runBundledApp;
      return run("/node_modules/pyodide/");
    })) as AppResult;
    expect(result.adapter).toBe("swiftshader");
    expect(result.values).toEqual([1, 2, 3]);
    expect(result.pythonVersion).toBe("0.1.0");
    expect(result.clibVersion.major).toBe(0);
    expect(failed).toEqual([]);

    const dir = join("build", "bundle-test", bundler);
    const files = filesOf(dir);
    const wheels = files.filter((f) => WHEEL.test(f));
    const embeddedIn = files.filter((f) => f.endsWith(".js") && EMBEDDED.test(readFileSync(join(dir, f), "utf8")));
    if (bundler === "esbuild-embedded") {
      expect(result.wheelSource).toBe("embedded");
      expect(result.clibSource).toBe("embedded");
      expect(wheels).toEqual([]);
      expect(embeddedIn).toEqual(["main.js"]);
    } else {
      // The files, fetched where the recipe put them; no base64 copy in the JS.
      expect(new URL(result.wheelSource).pathname).toMatch(WHEEL);
      expect(new URL(result.clibSource).pathname).toMatch(/\.so$/);
      expect(wheels).toHaveLength(1);
      expect(embeddedIn).toEqual([]);
    }
  });
}
