/**
 * What happened in a hand-off to a framework: shared bytes or a copy, and why.
 * A framework tensor (ORT, TF.js) has no DLPack flags, so the adapters record
 * the IS_COPIED fact here, keyed by the framework tensor object.
 */

/** How a framework tensor made by an adapter relates to its webdlpack source. */
export interface HandoffInfo {
  /** The framework tensor reads the very same GPUBuffer / ArrayBuffer (no copy). */
  readonly zeroCopy: boolean;
  /** A copy was made (the DLPack IS_COPIED fact). Always `!zeroCopy`. */
  readonly isCopied: boolean;
  /** Why a copy was needed (null when none was). */
  readonly reason: string | null;
}

const records = new WeakMap<object, HandoffInfo>();
/** Every zero-copy hand-off's record (frozen, so one object serves them all). */
const ZERO_COPY: HandoffInfo = Object.freeze({ zeroCopy: true, isCopied: false, reason: null });

/** Remember how `frameworkTensor` was made. */
export function recordHandoff(frameworkTensor: object, reason: string | null): void {
  records.set(
    frameworkTensor,
    reason === null ? ZERO_COPY : Object.freeze({ zeroCopy: false, isCopied: true, reason }),
  );
}

/**
 * How an adapter made `frameworkTensor` (from `tensorToOrt` / `tensorToTfjs`),
 * or undefined if no adapter made it.
 */
export function handoffInfo(frameworkTensor: object): HandoffInfo | undefined {
  return records.get(frameworkTensor);
}
