/**
 * The published declarations accept the frameworks' OWN types (issue 21, item 2): tests/types/frameworks/app.ts
 * is a user's app written against pyodide, onnxruntime-web/webgpu, @tensorflow/tfjs-core + tfjs-backend-webgpu,
 * @huggingface/transformers and @litertjs/core as npm installs them, and webdlpack through package.json
 * "exports" (js/dist/*.d.ts). It must compile with `tsc --strict`, with no cast, no `any` and no
 * `@ts-` directive, and call every function `webdlpack/adapters` exports.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

const root = new URL("../../../../", import.meta.url); // build/tests-js/tests/js → repo root
const app = readFileSync(new URL("tests/types/frameworks/app.ts", root), "utf8");
/** The app's code without comments (so a comment may say "as"). */
const code = app.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
/** ...and without its imports (where `as` renames). */
const body = code.replace(/^import[^;]*;/gm, "");

test("a strict app against the frameworks' own type packages compiles with webdlpack's published types", () => {
  assert.ok(existsSync(new URL("js/dist/adapters/index.d.ts", root)), "run `make js` first");
  const tsc = new URL("node_modules/typescript/bin/tsc", root);
  const run = spawnSync(process.execPath, [tsc.pathname, "-p", "tests/types/frameworks/tsconfig.json", "--listFiles"], {
    cwd: root,
    encoding: "utf8",
  });
  assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
  const files = run.stdout.split("\n");
  for (const types of [
    "node_modules/pyodide/pyodide.d.ts",
    "node_modules/onnxruntime-web/types.d.ts",
    "node_modules/@tensorflow/tfjs-core/dist/index.d.ts",
    "node_modules/@tensorflow/tfjs-backend-webgpu/dist/index.d.ts",
    "node_modules/@huggingface/transformers/types/transformers.d.ts",
    "node_modules/@litertjs/core/dist/index.d.ts",
    "js/dist/adapters/index.d.ts",
  ]) {
    assert.ok(
      files.some((f) => f.endsWith(types)),
      `compiled against ${types}`,
    );
  }
  const options = JSON.parse(
    readFileSync(new URL("tests/types/frameworks/tsconfig.json", root), "utf8"),
  ).compilerOptions;
  assert.equal(options.strict, true);
});

test("the app has no cast, no any and no @ts- directive", () => {
  assert.doesNotMatch(body, /\bas\s+\w/, "a cast (`x as T`)");
  assert.doesNotMatch(body, /[=(,]\s*<\w+>/, "an angle-bracket cast");
  assert.doesNotMatch(code, /\bany\b/, "an `any`");
  assert.doesNotMatch(app, /@ts-/, "a @ts- directive");
  assert.doesNotMatch(code, /!\./, "a non-null assertion");
});

test("the app calls every function webdlpack/adapters exports", async () => {
  const adapters: Record<string, unknown> = await import(new URL("js/dist/adapters/index.js", root).href);
  const functions = Object.keys(adapters).filter((name) => typeof adapters[name] === "function");
  assert.ok(functions.length >= 25, `found ${functions.length} functions`);
  const uncalled = functions.filter((name) => !new RegExp(`\\b${name}\\(`).test(code));
  assert.deepEqual(uncalled, [], "adapter functions the app never calls");
});
