// Build tests/bundling/app the way a user of the published package would: `npm pack` the
// repository (the real tarball, so its `files` list is exercised too), unpack it as
// build/bundle-test/app/node_modules/webdlpack, then bundle app/main.js with esbuild and with
// Vite into build/bundle-test/{esbuild,vite}/. The repo server then serves both apps
// (tests/browser/bundled-app.spec.ts). Usage: node tests/bundling/build-apps.mjs
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const out = join(repo, "build", "bundle-test");
const app = join(out, "app");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** npm pack the repo into `out`, unpack as app/node_modules/webdlpack. */
function installTarball() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(app, "node_modules"), { recursive: true });
  const [packed] = JSON.parse(
    execFileSync(npm, ["pack", "--json", "--pack-destination", out], {
      cwd: repo,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }),
  );
  execFileSync("tar", ["xzf", join(out, packed.filename), "-C", join(app, "node_modules")]);
  renameSync(join(app, "node_modules", "package"), join(app, "node_modules", "webdlpack"));
  for (const f of readdirSync(join(repo, "tests", "bundling", "app")))
    copyFileSync(join(repo, "tests", "bundling", "app", f), join(app, f));
  return packed;
}

async function buildEsbuild() {
  const esbuild = await import("esbuild");
  const dir = join(out, "esbuild");
  await esbuild.build({
    entryPoints: [join(app, "main.js")],
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    outfile: join(dir, "main.js"),
    logLevel: "warning",
    absWorkingDir: app,
  });
  copyFileSync(join(app, "index.html"), join(dir, "index.html"));
}

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

const packed = installTarball();
await buildEsbuild();
await buildVite();
console.log(JSON.stringify({ tarball: packed.filename, size: packed.size, unpackedSize: packed.unpackedSize }));
