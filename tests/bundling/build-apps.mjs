// Build tests/bundling/app the way a user of the published package would: `npm pack` the
// repository (the real tarball, so its `files` list is exercised too), unpack it as
// build/bundle-test/app/node_modules/webdlpack, then bundle it with each recipe of docs/bundlers.md
// into build/bundle-test/{esbuild,esbuild-embedded,vite,webpack}/. The repo server then serves the
// apps (tests/browser/bundled-app.spec.ts). Usage: node tests/bundling/build-apps.mjs
// A package $WEBDLPACK_PACKAGES serves under another install (`make test-matrix`: "pyodide=pyodide-0-27") is
// installed into the app from that install, so the bundle holds the loader of the Pyodide the page is served.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { packageAliases } from "../../scripts/serve.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const out = join(repo, "build", "bundle-test");
const app = join(out, "app");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** npm pack the repo into `out`, unpack as app/node_modules/webdlpack. */
function installTarball() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(app, "node_modules"), { recursive: true });
  const stdout = execFileSync(npm, ["pack", "--json", "--pack-destination", out], {
    cwd: repo,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  // The prepack script (make pack-files) prints before npm's JSON: read from the JSON's first line.
  const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[/m)));
  execFileSync("tar", ["xzf", join(out, packed.filename), "-C", join(app, "node_modules")]);
  renameSync(join(app, "node_modules", "package"), join(app, "node_modules", "webdlpack"));
  for (const f of readdirSync(join(repo, "tests", "bundling", "app")))
    copyFileSync(join(repo, "tests", "bundling", "app", f), join(app, f));
  for (const [servedPath, installPath] of packageAliases(process.env.WEBDLPACK_PACKAGES))
    cpSync(join(repo, installPath), join(app, servedPath), { recursive: true });
  return packed;
}

/** The package's own files, for recipes that copy them next to the bundle. */
const shipped = join(app, "node_modules", "webdlpack", "js", "dist");

/** esbuild as docs/bundlers.md says: one ES module, pyodide's Node-only imports external. */
async function esbuildApp(entry, dir) {
  const esbuild = await import("esbuild");
  await esbuild.build({
    entryPoints: [join(app, entry)],
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    external: ["node:*"], // pyodide imports node:fs & co. only under Node
    outfile: join(dir, "main.js"),
    logLevel: "warning",
    absWorkingDir: app,
  });
  copyFileSync(join(app, "index.html"), join(dir, "index.html"));
}

/** docs/bundlers.md, esbuild: bundle, then copy python/ and wasm/ beside it. */
async function buildEsbuild() {
  const dir = join(out, "esbuild");
  await esbuildApp("main.js", dir);
  for (const folder of ["python", "wasm"]) cpSync(join(shipped, folder), join(dir, folder), { recursive: true });
}

/** docs/bundlers.md, esbuild with the files embedded: main-embedded.js calls useEmbeddedAssets(); nothing copied. */
function buildEsbuildEmbedded() {
  return esbuildApp("main-embedded.js", join(out, "esbuild-embedded"));
}

/** docs/bundlers.md, Vite: nothing to configure (it copies the files `new URL(..., import.meta.url)` names). */
async function buildVite() {
  const { build } = await import("vite");
  await build({
    root: app,
    base: "./",
    configFile: false,
    logLevel: "warn",
    build: { outDir: join(out, "vite"), emptyOutDir: true },
  });
}

/** docs/bundlers.md, webpack 5: ES module output; pyodide's import() calls left to the browser. */
async function buildWebpack() {
  const webpack = (await import("webpack")).default;
  const dir = join(out, "webpack");
  const config = {
    mode: "production",
    context: app,
    entry: "./main.js",
    target: "web",
    experiments: { outputModule: true },
    output: {
      path: dir,
      filename: "main.js",
      module: true,
      assetModuleFilename: "assets/[name]-[hash][ext]",
      clean: true,
    },
    // pyodide loads its own files (and, under Node only, node:*) with import(): leave those to the browser.
    module: { rules: [{ test: /[\\/]pyodide[\\/]pyodide\.mjs$/, parser: { import: false } }] },
    performance: { hints: false },
    infrastructureLogging: { level: "error" },
  };
  const stats = await new Promise((resolve, reject) =>
    webpack(config, (err, result) => (err ? reject(err) : resolve(result))),
  );
  if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
  copyFileSync(join(app, "index.html"), join(dir, "index.html"));
}

const packed = installTarball();
await buildEsbuild();
await buildEsbuildEmbedded();
await buildVite();
await buildWebpack();
console.log(JSON.stringify({ tarball: packed.filename, size: packed.size, unpackedSize: packed.unpackedSize }));
