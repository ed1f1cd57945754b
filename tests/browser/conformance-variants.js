// Page-side code of tests/browser/conformance.spec.ts: runs webdlpack/conformance against
// webdlpack itself (with its producer and consumer), then against deliberately broken
// contexts, getContext functions, producers and consumers — at least one per check, in
// conformance-variants-context.js and conformance-variants-exchange.js — each run with `only`
// that check, so the spec can assert that every check can fail.
import * as W from "/js/dist/index.js";
import { CHECK_NAMES, runConformance } from "/js/dist/conformance/index.js";
import { PageContext } from "/js/dist/context/context.js";
import { consumer, KEY, producer } from "./conformance-subjects.js";
import { contextVariants } from "./conformance-variants-context.js";
import { exchangeVariants } from "./conformance-variants-exchange.js";

/** Runs with the global record put back afterwards, whatever the variant did to it. */
async function withSavedRecord(fn) {
  const saved = Object.getOwnPropertyDescriptor(globalThis, KEY);
  try {
    return await fn();
  } finally {
    if (saved) Object.defineProperty(globalThis, KEY, saved);
    else delete globalThis[KEY];
  }
}

/** Each variant breaks one rule; `check` is the check that must catch it. */
export function variants() {
  return [...contextVariants(), ...exchangeVariants()];
}

/** webdlpack's own report, then one result per broken variant (status of its check). */
export async function runAll() {
  const lines = [];
  // A second, independent context of this realm (as a Worker's would be): its pointers carry another tag.
  const otherContext = new PageContext(W.CONTEXT_PROTOCOL);
  const own = await runConformance({
    getContext: W.getContext,
    otherContext,
    producer,
    consumer,
    print: (l) => lines.push(l),
  });
  const broken = [];
  for (const v of variants()) {
    const report = await withSavedRecord(async () => runConformance({ ...v.target(), only: [v.check], print: false }));
    const r = report.results.find((x) => x.check === v.check);
    broken.push({ check: v.check, name: v.name, status: r?.status ?? "missing", detail: r?.detail ?? "" });
  }
  return {
    own: own.results.map((r) => ({ check: r.check, status: r.status, detail: r.detail })),
    lines,
    broken,
    checkNames: [...CHECK_NAMES],
  };
}
