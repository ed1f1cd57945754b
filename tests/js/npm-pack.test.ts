/**
 * `npm pack` works on a fresh clone and the tarball installs into an empty project, offline, and runs there.
 *
 * The clone is the tracked files (plus untracked ones git does not ignore) copied under build/pack-test/, with
 * no build outputs: `npm pack` runs "prepack" (`make pack-files`), which builds what the tarball holds. The
 * clone's npm install is stood in for by the repo's own node_modules (found through the parent folders, and
 * its .bin on PATH), so nothing is downloaded and the repo's node_modules is never touched. The tarball then
 * goes into an empty project with `npm install --offline` (webdlpack has no dependencies; its peers are
 * optional), which imports both entry points and installs the shipped wheel into Pyodide.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./helpers.js";

const root = repoRoot();
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const env = { ...process.env, PATH: `${join(root, "node_modules/.bin")}:${process.env.PATH ?? ""}` };

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The files of a fresh clone, copied into `dest` (no node_modules, no build outputs). */
function cleanClone(dest: string): void {
  const files = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root).split("\0");
  for (const file of files.filter(Boolean)) {
    if (!existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    copyFileSync(join(root, file), join(dest, file));
  }
  // The clone's `npm ci` stands done: the repo's node_modules serves it through the parent folders.
  mkdirSync(join(dest, ".stamps"), { recursive: true });
  writeFileSync(join(dest, ".stamps/npm"), "");
}

test("npm pack on a fresh clone, installed offline into an empty project, imports and runs", {
  timeout: 600_000,
}, () => {
  const work = join(root, "build/pack-test");
  rmSync(work, { recursive: true, force: true });
  const clone = join(work, "clone");
  cleanClone(clone);
  assert.ok(!existsSync(join(clone, "js/dist")), "the clone has no build outputs");
  const tarball = run(npm, ["pack", "--pack-destination", work, "--silent"], clone).trim().split("\n").pop() ?? "";
  assert.equal(tarball, "webdlpack-0.1.0.tgz");

  const app = mkdtempSync(join(tmpdir(), "webdlpack-app-"));
  try {
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", type: "module" }));
    run(npm, ["install", "--offline", "--no-audit", "--no-fund", join(work, tarball)], app);
    const installed = join(app, "node_modules/webdlpack");
    for (const file of ["LICENSE", "README.md", "js/dist/index.js", "js/dist/wasm/libwebdlpack.so"])
      assert.ok(existsSync(join(installed, file)), `${file} is not in the installed package`);
    const program = `
      import * as w from "webdlpack";
      import * as adapters from "webdlpack/adapters";
      import { loadPyodide } from ${JSON.stringify(join(root, "node_modules/pyodide/pyodide.mjs"))};
      const pyodide = await loadPyodide({ indexURL: ${JSON.stringify(`${join(root, "node_modules/pyodide")}/`)} });
      const bridge = await w.loadWebDLPack(pyodide);
      console.log(JSON.stringify({
        dtype: w.parseDType("float32"),
        adapters: typeof adapters.tensorToTfjs,
        wheelSource: bridge.wheelSource,
        exchange: bridge.info.exchange,
      }));`;
    const out = JSON.parse(
      run(process.execPath, ["--input-type=module", "-e", program], app).trim().split("\n").pop()!,
    );
    assert.deepEqual(out.dtype, { code: 2, bits: 32, lanes: 1 });
    assert.equal(out.adapters, "function");
    assert.ok(String(out.wheelSource).startsWith(`file://${installed}/js/dist/python/`), out.wheelSource);
    assert.equal(out.exchange, "native");
  } finally {
    rmSync(app, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
});
