#!/usr/bin/env node
/**
 * Remove compiler outputs in js/dist whose TypeScript source is gone (`make js` runs it after tsc). tsc only
 * writes files, so a module deleted or renamed in js/src would otherwise stay in js/dist, be packed by
 * `npm pack` and be importable, and break tests that walk js/dist (tree-shaking, package contents).
 * Left alone: the bundle (webdlpack.bundle.*) and the copied assets (python/, wasm/), which have no .ts source.
 *
 *   node scripts/prune-dist.mjs [--dry-run]
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(import.meta.url), "..", "..");
const DIST = join(ROOT, "js", "dist");
const SRC = join(ROOT, "js", "src");
const OUTPUT = /\.(d\.ts\.map|d\.ts|js\.map|js)$/;
const NOT_FROM_TSC = new Set(["python", "wasm", "webdlpack.bundle"]);

/** The files under `dist` (js/dist) with no `src`/<same path>.ts (js/src). */
export function staleOutputs(dist = DIST, src = SRC, dir = dist) {
  const stale = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(dist, path);
    if (entry.isDirectory()) {
      if (!NOT_FROM_TSC.has(rel)) stale.push(...staleOutputs(dist, src, path));
      continue;
    }
    if (!OUTPUT.test(entry.name)) continue;
    const stem = rel.replace(OUTPUT, "");
    if (NOT_FROM_TSC.has(stem)) continue;
    if (!existsSync(join(src, `${stem}.ts`))) stale.push(path);
  }
  return stale;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && existsSync(DIST)) {
  const dry = process.argv.includes("--dry-run");
  for (const path of staleOutputs()) {
    console.log(`${dry ? "would remove" : "removed"} ${relative(ROOT, path)} (no js/src source)`);
    if (!dry) rmSync(path);
  }
}
