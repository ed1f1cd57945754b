/**
 * `runConformance(target)`: every check of docs/spec.md against what the target
 * gives, one result per check, printed as it completes (see types.ts).
 */
import type { WebDLPackContext } from "../context/types.js";
import type { Check, CheckInput } from "./check.js";
import { globalChecks } from "./checks-global.js";
import { contextChecks } from "./checks-context.js";
import { tensorChecks } from "./checks-tensor.js";
import { CheckFailure, CheckSkipped, show } from "./probe.js";
import { formatResult, summarize, summaryLine } from "./report.js";
import type { CheckResult, ConformanceReport, ConformanceTarget } from "./types.js";

/** Every check, in report order. */
export const CHECKS: readonly Check[] = Object.freeze([...globalChecks, ...contextChecks, ...tensorChecks]);

/** Names of every check, in report order. */
export const CHECK_NAMES: readonly string[] = Object.freeze(CHECKS.map((c) => c.name));

function gpuOf(target: ConformanceTarget): GPU | undefined {
  return target.gpu ?? (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
}

function inputFor(target: ConformanceTarget): CheckInput {
  let context: WebDLPackContext | undefined;
  const gpu = gpuOf(target);
  return {
    target,
    get context(): WebDLPackContext {
      context ??= target.context ?? target.getContext?.();
      if (!context) throw new CheckSkipped("no context or getContext given");
      return context;
    },
    get gpu(): GPU {
      if (!gpu) throw new CheckSkipped("no WebGPU (navigator.gpu) and no gpu given");
      return gpu;
    },
    hasGPU: gpu !== undefined,
  };
}

async function runOne(check: Check, input: CheckInput): Promise<CheckResult> {
  const t0 = performance.now();
  const result = (status: CheckResult["status"], detail: string): CheckResult => ({
    check: check.name,
    rules: check.rules,
    level: check.level,
    status,
    detail,
    ms: performance.now() - t0,
  });
  try {
    if (check.gpu) {
      if (!input.hasGPU) throw new CheckSkipped("no WebGPU (navigator.gpu) and no gpu given");
      await input.context.setup(input.target.gpu ? { gpu: input.target.gpu } : undefined);
    }
    await check.run(input);
    return result("pass", "");
  } catch (err) {
    if (err instanceof CheckSkipped) return result("skip", err.message);
    const detail = err instanceof CheckFailure ? err.message : `threw ${show(err)}`;
    return result(check.level === "SHOULD" ? "warn" : "fail", detail);
  }
}

/**
 * Run the checks (all, or those `target.only` names) one after another and
 * return the report; each result line is printed as it completes unless
 * `target.print` is false. Never throws for a failing check.
 */
export async function runConformance(target: ConformanceTarget): Promise<ConformanceReport> {
  const print =
    target.print === false
      ? undefined
      : typeof target.print === "function"
        ? target.print
        : (line: string) => console.log(line);
  const input = inputFor(target);
  const results: CheckResult[] = [];
  for (const check of CHECKS) {
    if (target.only && !target.only.some((prefix) => check.name.startsWith(prefix))) continue;
    const r = await runOne(check, input);
    results.push(r);
    print?.(formatResult(r));
  }
  const report = summarize(results);
  print?.(summaryLine(report));
  return report;
}
