/**
 * `npm install @huggingface/transformers` runs onnxruntime-node's postinstall, which downloads native
 * binaries from api.nuget.org (not the npm registry) and so fails offline or where only npm is reachable.
 * docs/integration.md tells web users to skip it with ONNXRUNTIME_NODE_INSTALL=skip (the web never loads
 * onnxruntime-node): this runs the very script that `npm install` runs, with every request sent to a dead
 * proxy, and checks that the documented setting makes it succeed without one.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./helpers.js";

const pkg = join(repoRoot(), "node_modules", "onnxruntime-node");
const DEAD_PROXY = "http://127.0.0.1:9"; // the discard port: any download would fail

function runInstallScript(env: Record<string, string>): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ["script/install.js"], {
    cwd: pkg,
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env["PATH"] ?? "", HTTPS_PROXY: DEAD_PROXY, HTTP_PROXY: DEAD_PROXY, ...env },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

test("docs/integration.md names the setting that skips onnxruntime-node's download", () => {
  const docs = readFileSync(join(repoRoot(), "docs", "integration.md"), "utf8");
  assert.match(docs, /ONNXRUNTIME_NODE_INSTALL=skip npm install @huggingface\/transformers/);
});

test("onnxruntime-node's postinstall (what npm install runs) exits 0 with ONNXRUNTIME_NODE_INSTALL=skip and no network", () => {
  assert.ok(
    existsSync(join(pkg, "script", "install.js")),
    "onnxruntime-node (a dependency of Transformers.js) is installed",
  );
  const scripts = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).scripts;
  assert.equal(scripts.postinstall, "node ./script/install", "the script npm install runs");
  const skipped = runInstallScript({ ONNXRUNTIME_NODE_INSTALL: "skip" });
  assert.equal(skipped.status, 0, skipped.output);
});
