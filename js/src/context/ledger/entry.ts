/**
 * One entry of the lifetime ledger (see ledger.ts): a tracked GPU allocation
 * or tensor with its one release function, run exactly once whichever path
 * gets there first; and the shapes the ledger's reports are made of.
 */
import { describeValue } from "../../describe-value.js";
import "../../dispose-symbol.js"; // Symbol.dispose in the published .d.ts without lib esnext.disposable
import { Once, type Release } from "../../release.js";

/** What an entry stands for. */
/**
 * What an entry holds: `"gpu-buffer"` a GPU pointer of the context, `"tensor"` a
 * Tensor's hold on its bytes, `"export"` a DLPack struct handed to a consumer
 * (Python, C) holding a tensor's GPU bytes until the consumer calls its deleter.
 */
export type LedgerKind = "tensor" | "gpu-buffer" | "export";

/** Which path released an entry. */
export type ReleaseReason = "dispose" | "scope" | "finalizer" | "device-lost";

/** What {@link Ledger.track} takes. */
export interface TrackOptions {
  /** "tensor", "gpu-buffer" or "export". */
  kind: LedgerKind;
  /** Who made it: a framework name such as "onnxruntime". */
  owner?: string;
  /** webdlpack device id, or null for memory that is not on a GPU device (default null). */
  deviceId?: number | null;
  /** Bytes it holds (default 0). */
  bytes?: number;
  /** The GPU pointer it holds, if any. Tracking a tensor with the pointer of a tracked gpu-buffer hands that buffer to the tensor: scopes then release the tensor, not the buffer. */
  pointer?: number;
  /** Frees it. Called at most once. */
  release: () => void;
  /** Where it was made; default: captured when `debug.captureStacks` is on. */
  stack?: string;
  /**
   * false: never joins an open {@link Ledger.scope} (for memory another runtime frees — C, Python — which a JS
   * scope must not free behind its back). Default true.
   */
  scoped?: boolean;
}

/** What {@link LedgerEntryInfo} and {@link LeakReport} say about one entry. */
export interface LedgerEntrySummary {
  /** Entry id (increasing). */
  id: number;
  /** "tensor" or "gpu-buffer". */
  kind: LedgerKind;
  /** Owner label. */
  owner: string;
  /** Device id, or null. */
  deviceId: number | null;
  /** Bytes held. */
  bytes: number;
  /** GPU pointer, or null. */
  pointer: number | null;
  /** Milliseconds since it was tracked (for a leak: how long it lived). */
  ageMs: number;
}

/** A row of {@link Ledger.entries}: a snapshot of one live entry. */
export interface LedgerEntryInfo extends LedgerEntrySummary {
  /** Where it was made, or null when stacks were not captured. */
  stack: string | null;
  /** Whether a scope will release it. */
  scoped: boolean;
}

/** One leak: an entry whose watched object was collected before it was released. */
export interface LeakReport extends LedgerEntrySummary {
  /** Where it was made (a short stack), or a hint to turn stack capture on. */
  where: string;
}

/** Debug switches read at track time. */
export interface LedgerDebug {
  /** Capture a short stack for every tracked entry (costs ~µs per entry). Default false. */
  captureStacks: boolean;
}

/**
 * What `ctx.ledger` offers: its live entries and leak reports, and a way in for memory made outside webdlpack
 * (`track`, `watch`). Releasing goes through `ctx.dispose`, scopes, or the entry `track` returned.
 */
export interface LedgerView {
  /** Every live entry (pointer, device, owner, bytes, age), oldest first. */
  entries(): LedgerEntryInfo[];
  /** Entries released by the garbage-collection safety net instead of their owner (also `ctx.leaks()`). */
  leaks(): LeakReport[];
  /** A new holder of memory made outside webdlpack; release the entry it returns when done. */
  track(options: TrackOptions): TrackedEntry;
  /** Report `object` in `leaks()` (and release `entry`, one `track` returned) if it is collected before `entry` is released. */
  watch(object: object, entry: TrackedEntry): void;
}

/** A holder `ctx.ledger.track` made: one {@link Release}, by its owner, a scope, `ctx.dispose`, device loss or the finalizer. */
export interface TrackedEntry extends Release {
  /** The entry's id (as `entries()` lists it). */
  readonly id: number;
  /** Which path released it, or null while it holds. */
  readonly releasedBy: ReleaseReason | null;
  /** Same as `release()`, for `using`. */
  [Symbol.dispose](): void;
}

/** Internal: release with a reason. Not exported from the package. */
export const RELEASE = Symbol("webdlpack.ledger.release");
/** Internal: track options that need no checking (made by webdlpack). Not exported from the package. */
export const TRACK_CHECKED = Symbol("webdlpack.ledger.trackChecked");
/** Internal: whether the ledger watches an object for this entry (only then has the registry a cell to unregister). */
export const WATCHED = Symbol("webdlpack.ledger.watched");
/** Internal: mark released without calling the release function (the resource was freed another way). */
export const MARK_RELEASED = Symbol("webdlpack.ledger.markReleased");

/** Owner as a short string for reports and stats. */
export function ownerLabel(owner: unknown): string {
  if (owner === undefined || owner === null) return "(none)";
  if (typeof owner === "string") return owner;
  if (typeof owner === "object" || typeof owner === "function") {
    const name = (owner as { name?: unknown }).name;
    if (typeof name === "string" && name !== "") return name;
  }
  return String(describeValue(owner));
}

/** One tracked allocation or tensor (a {@link Release} over a {@link Once}). Release it with {@link LedgerEntry.release}. */
export class LedgerEntry implements Release {
  /** Entry id (increasing). */
  readonly id: number;
  /** "tensor" or "gpu-buffer". */
  readonly kind: LedgerKind;
  /** Owner label. */
  readonly owner: string;
  /** Device id, or null. */
  readonly deviceId: number | null;
  /** Bytes held. */
  readonly bytes: number;
  /** GPU pointer, or null. */
  readonly pointer: number | null;
  /** {@link now} when tracked. */
  readonly createdAt: number;
  /** Where it was made, or null. */
  readonly stack: string | null;
  /** The one release: leaves the ledger's live list, then runs the release function. */
  readonly #once: Once<ReleaseReason>;
  readonly #onReleased: (entry: LedgerEntry) => void;
  /** Internal ({@link WATCHED}): set by `Ledger.watch`. */
  [WATCHED] = false;

  /** Made by {@link Ledger.track}; do not construct directly. */
  constructor(
    id: number,
    options: Required<Omit<TrackOptions, "owner" | "stack" | "pointer" | "scoped">> & {
      owner: string;
      stack: string | null;
      pointer: number | null;
    },
    onReleased: (entry: LedgerEntry) => void,
  ) {
    this.id = id;
    this.kind = options.kind;
    this.owner = options.owner;
    this.deviceId = options.deviceId;
    this.bytes = options.bytes;
    this.pointer = options.pointer;
    this.stack = options.stack;
    this.createdAt = now();
    const fn = options.release;
    this.#once = new Once(() => {
      onReleased(this);
      fn();
    });
    this.#onReleased = onReleased;
  }

  /** Whether it was released (by any path). */
  get released(): boolean {
    return this.#once.released;
  }

  /** The path that released it, or null while live. */
  get releasedBy(): ReleaseReason | null {
    return this.#once.releasedBy;
  }

  /** Release now. Returns true if this call released it, false if it already was. Rethrows the release function's error (the entry still counts as released). */
  release(): boolean {
    return this[RELEASE]("dispose");
  }

  /** `using` support: same as {@link release}. */
  [Symbol.dispose](): void {
    this.release();
  }

  /** Internal: release for `reason`; exactly once. */
  [RELEASE](reason: ReleaseReason): boolean {
    return this.#once.release(reason);
  }

  /** Internal: the resource was freed by its owner's own path; never call the release function. */
  [MARK_RELEASED](reason: ReleaseReason): boolean {
    if (!this.#once.cancel(reason)) return false;
    this.#onReleased(this);
    return true;
  }
}

/**
 * Milliseconds for entry ages: `Date.now()`. Ages are reported in whole milliseconds, and every tracked
 * entry reads the clock, so the cheaper clock (`performance.now()` costs about 4× as much in Chromium, where
 * it is coarsened) is the right one; an age is never negative ({@link ageSince}).
 */
export function now(): number {
  return Date.now();
}

/** Milliseconds since `createdAt` (a {@link now} reading), never negative (the wall clock may be set back). */
export function ageSince(createdAt: number, at: number = now()): number {
  return Math.max(0, at - createdAt);
}
