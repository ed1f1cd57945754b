/**
 * scripts/prune-dist.mjs (run by `make js` after tsc): compiler outputs whose js/src source is gone leave
 * js/dist, so a deleted module is neither packed nor importable; the bundle and copied assets stay.
 * Run on a made-up tree in a temporary folder (other tests read the real js/dist meanwhile).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./helpers.js";

test("outputs with no source are stale; outputs of live sources, the bundle and assets are not", async () => {
  const { staleOutputs } = (await import(pathToFileURL(join(repoRoot(), "scripts/prune-dist.mjs")).href)) as {
    staleOutputs(dist?: string, src?: string): string[];
  };
  const top = mkdtempSync(join(tmpdir(), "prune-dist-"));
  const put = (path: string): void => {
    mkdirSync(dirname(join(top, path)), { recursive: true });
    writeFileSync(join(top, path), "");
  };
  try {
    for (const f of ["src/index.ts", "src/dlpack/read.ts"]) put(f);
    const kept = ["index.js", "index.d.ts", "dlpack/read.js", "dlpack/read.js.map", "webdlpack.bundle.js"];
    const assets = ["python/webdlpack-0.1.0-x.whl", "wasm/libwebdlpack.so", "python/old.js"];
    const gone = ["dlpack/decode-cache.js", "dlpack/decode-cache.d.ts", "dlpack/decode-cache.d.ts.map", "old/x.js"];
    for (const f of [...kept, ...assets, ...gone]) put(`dist/${f}`);
    const stale = staleOutputs(join(top, "dist"), join(top, "src")).map((p) => relative(join(top, "dist"), p));
    assert.deepEqual(stale.sort(), [...gone].sort());
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});
