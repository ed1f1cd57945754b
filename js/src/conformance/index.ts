/**
 * webdlpack/conformance — the Web DLPack v1 conformance kit (docs/spec.md §8).
 *
 * Given a context (or an implementation's getContext), a second context, or a
 * framework's producer and consumer functions, it runs each rule's check and
 * returns a per-rule report (printed as it runs). Usable from a page, a
 * Playwright test or node:test (checks that need WebGPU are skipped without it).
 *
 *   types.ts           what the kit is given and returns
 *   probe.ts           failures, typed-error expectations, a T1-offset struct reader/writer
 *   checks-global.ts   G1–G5   checks-context.ts  C, S2, E1   checks-pointers.ts  P   checks-tensor.ts  T, O, S1
 *   context-probes.ts  the allocation helper and flags the context and pointer checks share
 *   run.ts             runConformance, CHECKS      report.ts  formatReport
 */
export { runConformance, CHECK_NAMES } from "./run.js";
export { formatReport } from "./report.js";
export type {
  CheckResult,
  CheckStatus,
  ConformanceReport,
  ConformanceTarget,
  ConsumedTensor,
  TensorConsumer,
  TensorProducer,
  TensorRequest,
} from "./types.js";
