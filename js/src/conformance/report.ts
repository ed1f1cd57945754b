/** The kit's report: counting results and formatting them, one line per check. */
import type { CheckResult, ConformanceReport } from "./types.js";

const LABEL = { pass: "PASS", fail: "FAIL", warn: "WARN", skip: "SKIP" } as const;

/** `PASS pointer.stale [P6]`, with the reason after a dash for the others. */
export function formatResult(r: CheckResult): string {
  const head = `${LABEL[r.status]} ${r.check} [${r.rules.join(", ")}${r.level === "SHOULD" ? ", SHOULD" : ""}]`;
  return r.detail ? `${head} — ${r.detail}` : head;
}

/** Count the results. */
export function summarize(results: CheckResult[]): ConformanceReport {
  const count = (s: CheckResult["status"]): number => results.filter((r) => r.status === s).length;
  return { results, passed: count("pass"), failed: count("fail"), warned: count("warn"), skipped: count("skip") };
}

/** The summary line: `webdlpack conformance: N passed, N failed, N warned, N skipped`. */
export function summaryLine(report: ConformanceReport): string {
  return `webdlpack conformance: ${report.passed} passed, ${report.failed} failed, ${report.warned} warned, ${report.skipped} skipped`;
}

/** The whole report as text: one line per check and the summary line. */
export function formatReport(report: ConformanceReport): string {
  return [...report.results.map(formatResult), summaryLine(report)].join("\n");
}
