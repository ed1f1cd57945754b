/**
 * scripts/matrix-doc.mjs: a `make test-matrix --only` rerun rewrites docs/test-matrix.md by replacing the rows it
 * ran (same package and version), keeping every other row and the earlier run notes, and adding rows the doc
 * lacked at the end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./helpers.js";

interface MatrixDoc {
  rowKey(line: string): string;
  mergeRerun(oldDoc: string, fresh: string[], note: string): { rows: string[]; notes: string[] };
}

const load = async (): Promise<MatrixDoc> =>
  (await import(pathToFileURL(join(repoRoot(), "scripts/matrix-doc.mjs")).href)) as MatrixDoc;

const OLD = [
  "# Version matrix",
  "",
  "Full run 2026-11-25 22:02 UTC, 28.2 min in all, on a machine.",
  "",
  "| package | version (installed as) | page loaded | demo | browser specs passed | also | result | time | run (UTC) |",
  "|---|---|---|---|---|---|---|---|---|",
  "| Pyodide | 0.27.8 (pyodide-0-27) | 0.27.8 | pass | 76/77 | ok | FAIL | 268 s | 2026-11-25 22:02 |",
  "| Pyodide | 0.28.3 (pyodide-0-28) | 0.28.3 | pass | 77/77 | ok | pass | 286 s | 2026-11-25 22:02 |",
  "| onnxruntime-web | 1.23.0 (onnxruntime-web-1-23) |  |  | 18/18 | floor | pass | 67 s | 2026-11-25 22:02 |",
  "",
].join("\n");

test("a rerun replaces its rows in place, keeps the others and the notes, and appends new rows", async () => {
  const { mergeRerun, rowKey } = await load();
  const rerun = "| Pyodide | 0.27.8 (pyodide-0-27) | 0.27.8 | pass | 77/77 | ok | pass | 270 s | 2026-11-25 23:00 |";
  const added = "| LiteRT.js | 2.5.3 (@litertjs/core) |  |  | 18/18 | newest | pass | 52 s | 2026-11-25 23:00 |";
  const { rows, notes } = mergeRerun(OLD, [rerun, added], "Rerun 2026-11-25 23:00 UTC (--only 0.27), 5 min.");
  assert.equal(rowKey(rerun), "| Pyodide | 0.27.8 (pyodide-0-27)");
  assert.deepEqual(rows, [rerun, OLD.split("\n")[7], OLD.split("\n")[8], added]);
  assert.deepEqual(notes, [
    "Full run 2026-11-25 22:02 UTC, 28.2 min in all, on a machine.",
    "Rerun 2026-11-25 23:00 UTC (--only 0.27), 5 min.",
  ]);
});

test("the header and separator lines are never taken for rows", async () => {
  const { mergeRerun } = await load();
  const { rows } = mergeRerun(OLD, [], "Rerun.");
  assert.equal(rows.length, 3);
  assert.ok(rows.every((r) => !r.startsWith("| package |") && !r.startsWith("|---")));
});
