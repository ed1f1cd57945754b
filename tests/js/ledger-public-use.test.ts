/**
 * Pages, examples, benchmarks and browser specs use `ctx.ledger` as applications can: only the members of its
 * public type, `LedgerView` (js/src/context/ledger/entry.ts). The Ledger class has more (scopes, size, leak
 * clearing, lookups by pointer), which the published type hides; a page calling one would compile against nothing
 * and break silently when it changes. Checked on the source text (git ls-files), naming file and member.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./helpers.js";

const root = repoRoot();

/** The member names of `interface LedgerView { … }` in `source`. */
export function ledgerViewMembers(source: string): Set<string> {
  const body = /export interface LedgerView \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? "";
  const code = body.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  return new Set([...code.matchAll(/^\s*(?:readonly\s+)?([A-Za-z_$][\w$]*)\s*[(:<?]/gm)].map((m) => m[1]!));
}

/** `ctx.ledger.NAME` uses in `text` (across line breaks, as in `ctx.ledger\n  .entries()`), with their lines. */
export function ledgerUses(text: string): { name: string; line: number }[] {
  return [...text.matchAll(/\bctx\s*\.\s*ledger\s*\.\s*([A-Za-z_$][\w$]*)/g)].map((m) => ({
    name: m[1]!,
    line: text.slice(0, m.index).split("\n").length,
  }));
}

test("the checks find members and uses (so they can fail)", () => {
  const view = ledgerViewMembers(
    "export interface LedgerView {\n  /** x */\n  entries(): X[];\n  track(o: T): E;\n  readonly n: number;\n}",
  );
  assert.deepEqual([...view].sort(), ["entries", "n", "track"]);
  assert.deepEqual(ledgerUses("a;\nctx.ledger.size;\nctx.ledger\n  .entries()"), [
    { name: "size", line: 2 },
    { name: "entries", line: 3 },
  ]);
});

test("web/, examples/, bench/, scripts/ and the browser specs call only LedgerView's members on ctx.ledger", () => {
  const view = ledgerViewMembers(readFileSync(join(root, "js/src/context/ledger/entry.ts"), "utf8"));
  assert.ok(view.has("entries") && view.has("watch"), `LedgerView parsed: ${[...view].join(", ")}`);
  const files = execFileSync("git", ["ls-files", "web", "examples", "bench", "scripts", "tests/browser"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\n")
    .filter((f) => /\.(m?js|ts|html)$/.test(f));
  assert.ok(files.length > 20, "the folders were listed");
  const hidden: string[] = [];
  for (const file of files) {
    for (const use of ledgerUses(readFileSync(join(root, file), "utf8")))
      if (!view.has(use.name)) hidden.push(`${file}:${use.line} ctx.ledger.${use.name}`);
  }
  assert.deepEqual(hidden, [], "members the public LedgerView type does not have");
});
