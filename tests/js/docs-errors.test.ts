/**
 * docs/errors.md lists exactly the error codes webdlpack has, with their
 * numbers: the same set as ErrorCode in js/src/errors.ts (the running module),
 * the wdl_error_code enum in webdlpack.h and ErrorCode in py/webdlpack/core/errors.py.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ErrorCode } from "../../js/src/errors.js";
import { repoRoot } from "./helpers.js";

const ROOT = repoRoot();
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

/** `[name, number]` pairs found by `re` (named groups `name` and `number`) in `text`, by number. */
function pairs(text: string, re: RegExp): [string, number][] {
  return [...text.matchAll(re)]
    .map((m) => [m.groups!["name"]!, Number(m.groups!["number"])] as [string, number])
    .sort((a, b) => a[1] - b[1]);
}

/** The table rows of docs/errors.md: `| 3 | \`NULL_POINTER\` | … |`. */
function documented(): [string, number][] {
  return pairs(read("docs/errors.md"), /^\| (?<number>\d+) \| `(?<name>[A-Z_]+)` \|/gm);
}

test("docs/errors.md has one row per code of js/src/errors.ts, with its number", () => {
  const docs = documented();
  const js = Object.entries(ErrorCode).sort((a, b) => a[1] - b[1]);
  assert.ok(js.length >= 26, `ErrorCode has ${js.length} codes`);
  assert.deepEqual(docs, js);
  assert.equal(new Set(docs.map(([name]) => name)).size, docs.length, "a code is listed twice");
});

test("docs/errors.md matches the C enum wdl_error_code and the Python ErrorCode", () => {
  const header = /typedef enum wdl_error_code \{([\s\S]*?)\} wdl_error_code;/.exec(
    read("wasm/include/webdlpack/webdlpack.h"),
  );
  assert.ok(header, "wdl_error_code not found in webdlpack.h");
  const c = pairs(header[1]!, /\bWDL_(?<name>[A-Z_]+)\s*=\s*(?<number>\d+)\s*,/g);
  const pyClass = /class ErrorCode\(enum\.IntEnum\):([\s\S]*?)\n\n\n/.exec(read("py/webdlpack/core/errors.py"));
  assert.ok(pyClass, "ErrorCode not found in _errors.py");
  const py = pairs(pyClass[1]!, /^\s+(?<name>[A-Z_]+) = (?<number>\d+)$/gm);
  assert.deepEqual(documented(), c);
  assert.deepEqual(documented(), py);
});

test("every code's row says when it is raised and which Python class carries it", () => {
  const rows = read("docs/errors.md")
    .split("\n")
    .filter((l) => /^\| \d+ \| `[A-Z_]+` \|/.test(l));
  for (const row of rows) {
    const cells = row
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    assert.equal(cells.length, 5, `row has 5 cells: ${row}`);
    assert.ok(cells[2]!.length > 10, `"raised when" is filled in: ${row}`);
    if (cells[1] !== "`OK`") assert.match(cells[4]!, /WebDLPack\w*Error/, `Python class named: ${row}`);
  }
});
