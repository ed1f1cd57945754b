/** The shape of one conformance check. */
import type { WebDLPackContext } from "../context/types.js";
import type { ConformanceTarget } from "./types.js";

/** What a check's body receives: the target, with its context resolved (set up when the check needs a GPU). */
export interface CheckInput {
  target: ConformanceTarget;
  /** The context under test; accessing it when none was given skips the check. */
  readonly context: WebDLPackContext;
  /** The GPU for extra devices; accessing it when there is none skips the check. */
  readonly gpu: GPU;
  /** Whether WebGPU is there (the context can be set up). */
  readonly hasGPU: boolean;
}

/** One check: its name, the rules it tests, and its body (throws CheckFailure / CheckSkipped). */
export interface Check {
  name: string;
  rules: readonly string[];
  level: "MUST" | "SHOULD";
  /** Whether it needs the context set up (WebGPU). */
  gpu: boolean;
  run(input: CheckInput): Promise<void> | void;
}
