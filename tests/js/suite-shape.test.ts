/**
 * Every node:test in tests/js is a top-level test. Node's JUnit reporter
 * writes a test with subtests (`t.test`, `describe`/`suite`) as a <testsuite>,
 * not a <testcase>, so scripts/test_summary.py would count one test fewer than
 * Node ran; sharing setup goes in a `before` hook instead (see clib-glue.test.ts).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./helpers.js";

test("no test in tests/js nests subtests (each passing test is one JUnit testcase)", () => {
  const dir = join(repoRoot(), "tests", "js");
  const files = readdirSync(dir).filter((f) => f.endsWith(".test.ts"));
  assert.ok(files.length > 10, `found ${files.length} test files`);
  const nesting = /\b(?:t\.test|describe|suite|it)\s*\(/;
  const offenders = files.filter((f) =>
    nesting.test(readFileSync(join(dir, f), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")),
  );
  assert.deepEqual(offenders, [], "use top-level test() calls and a before() hook for shared setup");
});
