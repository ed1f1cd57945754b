/**
 * package.json lists no module with import side effects (`"sideEffects"` names only dispose-symbol, a
 * type-only module the .d.ts files import for `Symbol.dispose`: listed so bundlers keep its empty import
 * instead of warning about it), so a bundler keeps only the modules a page uses: importing one
 * small function from "webdlpack" bundles a few kB, not the whole package (before the flag esbuild kept
 * 14.9 kB minified for `WebDLPackError` and 16.4 kB for `parseDType`; with it 1.1 kB and 4.8 kB). The flag is
 * only true if importing a module does nothing a page could miss when the bundler drops it: no module of
 * js/dist changes the global object when imported.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { repoRoot } from "./helpers.js";

const root = repoRoot();

/** Minified esbuild bundle size of a page that runs `code` (importing from the package by its own name). */
async function bundledBytes(code: string): Promise<number> {
  const out = await esbuild.build({
    stdin: { contents: code, resolveDir: root, loader: "js" },
    bundle: true,
    format: "esm",
    minify: true,
    write: false,
    logLevel: "silent",
  });
  assert.deepEqual(
    out.warnings.map((w) => w.text),
    [],
    "bundling webdlpack warns",
  );
  return out.outputFiles[0]!.contents.length;
}

test("package.json lists only the type-only module as having import side effects", () => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { sideEffects?: unknown };
  assert.deepEqual(pkg.sideEffects, ["./js/dist/dispose-symbol.js", "./js/src/dispose-symbol.ts"]);
  const source = readFileSync(join(root, "js/src/dispose-symbol.ts"), "utf8");
  assert.match(source, /^export \{\};$/m);
  assert.doesNotMatch(source.replace(/\/\*\*[\s\S]*?\*\//g, ""), /^(?!declare|\s|\}|export \{\};)\S/m);
});

test("a page importing one function bundles only what that function needs", async () => {
  const error = await bundledBytes('import { WebDLPackError } from "webdlpack"; console.log(WebDLPackError);');
  const dtype = await bundledBytes('import { parseDType } from "webdlpack"; console.log(parseDType("float32"));');
  const whole = await bundledBytes('import * as w from "webdlpack"; console.log(w);');
  assert.ok(error < 4_000, `WebDLPackError alone bundles ${error} B`);
  assert.ok(dtype < 8_000, `parseDType alone bundles ${dtype} B`);
  assert.ok(whole > 10 * dtype, `the whole package (${whole} B) is not much larger than one function (${dtype} B)`);
});

test("no module of js/dist changes the global object when imported", () => {
  const dist = join(root, "js/dist");
  const modules: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".js") && entry.name !== "webdlpack.bundle.js") modules.push(path);
    }
  };
  walk(dist);
  assert.ok(modules.length > 40, `only ${modules.length} modules in js/dist (run make build)`);
  // One fresh Node imports each module in turn and reports any global name it added or changed.
  const program = `
    const keys = () => new Map(Reflect.ownKeys(globalThis).map((k) => [k, globalThis[k]]));
    const changed = [];
    keys(); // reading every global once makes Node's lazy ones (fetch's dispatcher) exist before the first import
    for (const url of ${JSON.stringify(modules.map((m) => pathToFileURL(m).href))}) {
      const before = keys();
      await import(url);
      for (const [k, v] of keys()) if (!before.has(k) || !Object.is(before.get(k), v)) changed.push(url + ": " + String(k));
    }
    console.log(JSON.stringify(changed));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", program], { encoding: "utf8" });
  const changed = (JSON.parse(out.trim().split("\n").pop()!) as string[]).map((c) =>
    c.replace(pathToFileURL(dist).href, relative(root, dist)),
  );
  assert.deepEqual(changed, []);
});
