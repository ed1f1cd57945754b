/**
 * The published declarations accept what users write and refuse misuse:
 * tests/types/usage.ts imports `webdlpack`, `webdlpack/adapters` and `webdlpack/testing` through
 * package.json "exports" (so js/dist/*.d.ts, as an installed package would)
 * and is compiled with tsc --strict; its `@ts-expect-error` lines must fail.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";

const root = new URL("../../../../", import.meta.url); // build/tests-js/tests/js → repo root

test("tests/types/usage.ts type-checks against js/dist/*.d.ts (and its @ts-expect-error lines are errors)", () => {
  assert.ok(existsSync(new URL("js/dist/index.d.ts", root)), "run `make js` first: js/dist/index.d.ts is missing");
  const tsc = new URL("node_modules/typescript/bin/tsc", root);
  const run = spawnSync(process.execPath, [tsc.pathname, "-p", "tests/types/tsconfig.json", "--listFiles"], {
    cwd: root, encoding: "utf8",
  });
  assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
  const files = run.stdout.split("\n");
  assert.ok(files.some((f) => f.endsWith("js/dist/index.d.ts")), "webdlpack resolved to js/dist/index.d.ts");
  assert.ok(files.some((f) => f.endsWith("js/dist/adapters/index.d.ts")), "webdlpack/adapters resolved to js/dist/adapters/index.d.ts");
  assert.ok(files.some((f) => f.endsWith("js/dist/testing/index.d.ts")), "webdlpack/testing resolved to js/dist/testing/index.d.ts");
});
