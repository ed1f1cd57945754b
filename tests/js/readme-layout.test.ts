/**
 * README.md's Layout table names every folder of js/src and py/webdlpack: each tracked folder (git ls-files, so
 * build outputs are not required) appears in the row of its root as `name/` (its last segment) or as its path
 * from the root. A folder added without a word in the Layout fails here, naming it.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./helpers.js";

const root = repoRoot();

/** The cells of README's "## Layout" table, by its first cell (e.g. "`js/src/`" → the row's text). */
export function layoutRows(readme: string): Map<string, string> {
  const section = readme.split(/^## /m).find((s) => s.startsWith("Layout")) ?? "";
  const rows = new Map<string, string>();
  for (const line of section.split("\n")) {
    const m = /^\| `([^`]+)` \|(.*)\|\s*$/.exec(line);
    if (m) rows.set(m[1]!, m[2]!);
  }
  return rows;
}

/** The folders under `base` (e.g. "js/src/") that `files` (repo paths) live in, as paths relative to `base`. */
export function foldersUnder(files: readonly string[], base: string): string[] {
  const out = new Set<string>();
  for (const file of files) {
    if (!file.startsWith(base)) continue;
    for (let d = posix.dirname(file.slice(base.length)); d !== "."; d = posix.dirname(d)) out.add(d);
  }
  return [...out].sort();
}

/** The folders of `folders` that `row` does not name as `` `path/` `` or `` `last-segment/` ``. */
export function unnamed(row: string, folders: readonly string[]): string[] {
  return folders.filter((f) => !row.includes(`\`${f}/\``) && !row.includes(`\`${posix.basename(f)}/\``));
}

test("README's Layout names every folder of js/src and py/webdlpack", () => {
  const rows = layoutRows(readFileSync(join(root, "README.md"), "utf8"));
  const files = execFileSync("git", ["ls-files", "js/src", "py/webdlpack"], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
  for (const base of ["js/src/", "py/webdlpack/"]) {
    const row = rows.get(base);
    assert.ok(row !== undefined, `README's Layout has a row for \`${base}\``);
    const folders = foldersUnder(files, base);
    assert.ok(folders.length >= 7, `${base} has ${folders.length} tracked folders`);
    assert.deepEqual(unnamed(row, folders), [], `README's Layout row \`${base}\` must name these folders`);
  }
});

test("the Layout reader finds rows, nested folders and the ones a row leaves out", () => {
  const readme =
    "# x\n\n## Layout\n\n| folder | what |\n|---|---|\n| `a/` | has `b/` and `c/d/` |\n\n## Next\n| `z/` | no |";
  const rows = layoutRows(readme);
  assert.deepEqual([...rows.keys()], ["a/"]);
  const folders = foldersUnder(["a/b/x.ts", "a/c/d/y.ts", "a/e/f/z.ts", "other/q.ts", "a/top.ts"], "a/");
  assert.deepEqual(folders, ["b", "c", "c/d", "e", "e/f"]);
  assert.deepEqual(unnamed(rows.get("a/")!, folders), ["c", "e", "e/f"]);
});
