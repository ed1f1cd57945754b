/**
 * The published declarations accept what users write and refuse misuse:
 * tests/types/usage.ts imports `webdlpack`, `webdlpack/adapters`, `webdlpack/testing` and
 * `webdlpack/conformance` through
 * package.json "exports" (so js/dist/*.d.ts, as an installed package would)
 * and is compiled with tsc --strict; its `@ts-expect-error` lines must fail.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

const root = new URL("../../../../", import.meta.url); // build/tests-js/tests/js → repo root

/**
 * The user projects the declarations must work in. tsconfig.json: the repo's own settings
 * (@webgpu/types, skipLibCheck). The others check every .d.ts (skipLibCheck false) and
 * rely on TypeScript's DOM lib for WebGPU: es2022-dom has no esnext.disposable (the
 * `[Symbol.dispose]()` methods must still type-check), bundler resolves as Vite/esbuild users do.
 */
const CONFIGS = [
  "tsconfig.json",
  "tsconfig.full-lib.json",
  "tsconfig.es2022-dom.json",
  "tsconfig.bundler.json",
] as const;

for (const config of CONFIGS) {
  test(`tests/types/usage.ts type-checks against js/dist/*.d.ts with tests/types/${config} (its @ts-expect-error lines are errors)`, () => {
    assert.ok(existsSync(new URL("js/dist/index.d.ts", root)), "run `make js` first: js/dist/index.d.ts is missing");
    const tsc = new URL("node_modules/typescript/bin/tsc", root);
    const run = spawnSync(process.execPath, [tsc.pathname, "-p", `tests/types/${config}`, "--listFiles"], {
      cwd: root,
      encoding: "utf8",
    });
    assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
    const files = run.stdout.split("\n");
    for (const entry of ["index", "adapters/index", "testing/index", "conformance/index"]) {
      assert.ok(
        files.some((f) => f.endsWith(`js/dist/${entry}.d.ts`)),
        `resolved to js/dist/${entry}.d.ts`,
      );
    }
  });
}

test("the es2022-dom variant really lacks esnext.disposable and checks library files", () => {
  const text = readFileSync(new URL("tests/types/tsconfig.es2022-dom.json", root), "utf8");
  const options = (JSON.parse(text) as { compilerOptions: { lib: string[]; skipLibCheck: boolean } }).compilerOptions;
  assert.deepEqual(
    options.lib.map((l) => l.toLowerCase()),
    ["es2022", "dom"],
  );
  assert.equal(options.skipLibCheck, false);
});
