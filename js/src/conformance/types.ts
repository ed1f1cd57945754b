/**
 * What the conformance kit is given and what it reports (docs/spec.md §8).
 */
import type { WebDLPackContext } from "../context/types.js";
import type { WasmHost } from "../dlpack/wasm-host.js";

/** A tensor the kit asks a producer for: float32, C-contiguous `values` in `shape`. */
export interface TensorRequest {
  /** Where the bytes must live: the wasm memory, or a GPU pointer of the context (device 0). */
  device: "cpu" | "webgpu";
  /** Always "float32" in this version of the kit. */
  dtype: "float32";
  /** Extents. */
  shape: readonly number[];
  /** Row-major values. */
  values: readonly number[];
}

/** A framework's export side. */
export interface TensorProducer {
  /** Devices it can produce on (default both). */
  devices?: readonly ("cpu" | "webgpu")[];
  /** Make a DLManagedTensorVersioned in `host`'s memory holding `request`; return its address. The caller owns it. */
  produce(host: WasmHost, request: TensorRequest): number | Promise<number>;
}

/** What a consumer gives back. */
export interface ConsumedTensor {
  /** The values it reads (row-major). */
  values: ArrayLike<number>;
  /** Let go of the tensor (the struct's deleter must have run exactly once after this). */
  release(): void;
}

/** A framework's import side. */
export interface TensorConsumer {
  /** Take ownership of the DLManagedTensorVersioned at `address` (CPU tensors), or throw the rule's typed error. */
  consume(host: WasmHost, address: number): ConsumedTensor | Promise<ConsumedTensor>;
}

/** What {@link runConformance} checks. Give what you have; checks without their inputs are skipped. */
export interface ConformanceTarget {
  /** The implementation's getContext (for the `global.*` checks; the record is restored after each). */
  getContext?: () => WebDLPackContext;
  /** The context (default: `getContext()`). */
  context?: WebDLPackContext;
  /** A second, independent context (for `pointer.foreign`). */
  otherContext?: WebDLPackContext;
  /** A framework's producer (for `producer.*`, `ordering.handoff`). */
  producer?: TensorProducer;
  /** A framework's consumer (for `consumer.*`). */
  consumer?: TensorConsumer;
  /** A fresh wasm memory host per check (default: webdlpack/testing's createTestHost()); must count allocations. */
  makeHost?: () => WasmHost & { readonly liveAllocations: number; readonly liveFunctions: number };
  /** The GPU to make extra devices from (default `navigator.gpu`); without one the GPU checks are skipped. */
  gpu?: GPU;
  /** Run only checks whose id starts with one of these. */
  only?: readonly string[];
  /** Print each result line as it completes: true (console.log, the default), false, or a function. */
  print?: boolean | ((line: string) => void);
}

/** The outcome of one check. */
export type CheckStatus = "pass" | "fail" | "warn" | "skip";

/** One line of the report. */
export interface CheckResult {
  /** The check's name, e.g. "pointer.stale". */
  check: string;
  /** The spec rules it tests, e.g. ["P6"]. */
  rules: readonly string[];
  /** MUST: a failure fails; SHOULD: a failure warns. */
  level: "MUST" | "SHOULD";
  status: CheckStatus;
  /** Why it failed or was skipped ("" when it passed). */
  detail: string;
  /** Milliseconds the check took. */
  ms: number;
}

/** What {@link runConformance} returns. */
export interface ConformanceReport {
  results: CheckResult[];
  passed: number;
  failed: number;
  warned: number;
  skipped: number;
}
