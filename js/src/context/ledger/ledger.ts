/**
 * The lifetime ledger: one list of every live GPU allocation and every live
 * tensor on the page, whoever made it, with the one release function each has.
 *
 * A release runs exactly once, whichever path gets there first:
 * - explicit: `entry.release()` / `entry[Symbol.dispose]()` / `ctx.dispose(x)`;
 * - scope end: `ctx.scope(fn)` releases what was tracked while it ran, except
 *   what was kept (`ctx.keep(x)`) or returned (moved to the enclosing scope);
 * - finalizer: `ledger.watch(obj, entry)` releases the entry when `obj` is
 *   garbage collected unreleased, and records it as a leak (`ctx.leaks()`,
 *   one `console.warn` per leak);
 * - device loss: the context releases every entry of a lost device.
 *
 * Async scopes: JS has no async context yet, so an entry tracked while several
 * scopes are open goes to the innermost open one, even from unrelated code
 * running during an `await`. Run one async scope at a time per task chain.
 */
import { describeValue } from "../../describe-value.js";
import { reportUncaught, WebDLPackError } from "../../errors.js";
import {
  ageSince,
  LedgerEntry,
  now,
  ownerLabel,
  RELEASE,
  TRACK_CHECKED,
  WATCHED,
  type LeakReport,
  type LedgerDebug,
  type LedgerEntryInfo,
  type TrackOptions,
} from "./entry.js";
import { captureStack, checkTrack } from "./track-check.js";
import "../../dispose-symbol.js"; // Symbol.dispose in the published .d.ts without lib esnext.disposable

const NO_STACK = "(stack not captured: set ctx.debug.captureStacks = true before allocating)";
const MAX_LEAKS = 1000;

type Scope = Set<LedgerEntry>;

/** The page's ledger (one per context). */
export class Ledger {
  /** Debug switches (`ctx.debug` is this object). */
  readonly debug: LedgerDebug = { captureStacks: false };
  readonly #live = new Map<number, LedgerEntry>();
  /** Live entries by GPU pointer (a buffer and the tensors made on it: a short array, cheaper to make than a Set per pointer). */
  readonly #byPointer = new Map<number, LedgerEntry[]>();
  readonly #byObject = new WeakMap<object, LedgerEntry>();
  readonly #scopeOf = new Map<LedgerEntry, Scope>();
  readonly #scopes: Scope[] = [];
  readonly #leaks: LeakReport[] = [];
  readonly #registry: FinalizationRegistry<LedgerEntry> | null;
  #nextId = 1;
  /** Every entry's on-released callback (one function for all, not a closure per entry). */
  readonly #forgetEntry = (entry: LedgerEntry): void => this.#forget(entry);

  /** An empty ledger. */
  constructor() {
    this.#registry =
      typeof FinalizationRegistry === "function"
        ? new FinalizationRegistry<LedgerEntry>((entry) => this.#collected(entry))
        : null;
  }

  /**
   * Register a live allocation or tensor. Throws INVALID_ARGUMENT naming a bad field.
   * The entry joins the innermost open scope, if any.
   */
  track(options: TrackOptions): LedgerEntry {
    return this[TRACK_CHECKED](checkTrack(options));
  }

  /** Internal: {@link track} for options webdlpack built and checked itself (a tensor's own hold, track-tensor.ts). */
  [TRACK_CHECKED](o: TrackOptions): LedgerEntry {
    const stack = o.stack ?? (this.debug.captureStacks ? captureStack() : null);
    const entry = new LedgerEntry(
      this.#nextId++,
      {
        kind: o.kind,
        owner: ownerLabel(o.owner),
        deviceId: o.deviceId ?? null,
        bytes: o.bytes ?? 0,
        pointer: o.pointer ?? null,
        release: o.release,
        stack,
      },
      this.#forgetEntry,
    );
    this.#live.set(entry.id, entry);
    if (entry.pointer !== null) {
      let held = this.#byPointer.get(entry.pointer);
      if (held === undefined) {
        held = [];
        this.#byPointer.set(entry.pointer, held);
      } else if (entry.kind === "tensor") {
        for (const other of held) if (other.kind === "gpu-buffer") this.#unscope(other); // the tensor now owns the buffer
      }
      held.push(entry); // new entries only: an entry is never in the list twice
    }
    const scope = o.scoped === false ? undefined : this.#scopes[this.#scopes.length - 1];
    if (scope !== undefined) {
      scope.add(entry);
      this.#scopeOf.set(entry, scope);
    }
    return entry;
  }

  /**
   * Release `entry` when `object` is garbage collected before `entry` is
   * released, and record that as a leak. `entry`'s release function must not
   * reference `object` (else it is never collected). Also lets `keep(object)`
   * and `dispose(object)` find the entry.
   */
  watch(object: object, entry: LedgerEntry): void {
    if (object === null || (typeof object !== "object" && typeof object !== "function")) {
      throw new WebDLPackError("INVALID_ARGUMENT", "ledger.watch needs an object", {
        field: "object",
        value: describeValue(object),
        expected: "an object or function to watch",
      });
    }
    if (!(entry instanceof LedgerEntry)) {
      throw new WebDLPackError("INVALID_ARGUMENT", "ledger.watch needs a LedgerEntry", {
        field: "entry",
        value: describeValue(entry),
        expected: "an entry returned by ledger.track",
      });
    }
    this.#byObject.set(object, entry);
    if (!entry.released && this.#registry !== null) {
      this.#registry.register(object, entry, entry);
      entry[WATCHED] = true;
    }
  }

  /** Snapshots of every live entry, oldest first. */
  entries(): LedgerEntryInfo[] {
    const t = now();
    return [...this.#live.values()].map((e) => ({
      id: e.id,
      kind: e.kind,
      owner: e.owner,
      deviceId: e.deviceId,
      bytes: e.bytes,
      pointer: e.pointer,
      ageMs: ageSince(e.createdAt, t),
      stack: e.stack,
      scoped: this.#scopeOf.has(e),
    }));
  }

  /** The live gpu-buffer (else tensor) entry holding `pointer`, if any. */
  entryForPointer(pointer: number): LedgerEntry | undefined {
    const held = this.#byPointer.get(pointer >>> 0);
    if (held === undefined) return undefined;
    let first: LedgerEntry | undefined;
    for (const e of held) {
      if (e.kind === "gpu-buffer") return e;
      first ??= e;
    }
    return first;
  }

  /** Leaks found so far (oldest first, at most 1000 kept). */
  leaks(): LeakReport[] {
    return this.#leaks.map((l) => ({ ...l }));
  }

  /** Forget the leak reports. */
  clearLeaks(): void {
    this.#leaks.length = 0;
  }

  /**
   * Run `fn`; when it returns (or its promise settles) release every entry
   * tracked meanwhile, newest first, except kept ones and those in the result
   * (an entry, a pointer, a watched object, or arrays / plain objects of them),
   * which move to the enclosing scope. Errors of releases are reported; the first
   * is thrown after all ran when `fn` itself succeeded.
   */
  scope<T>(fn: () => T): T {
    if (typeof fn !== "function") {
      throw new WebDLPackError("INVALID_ARGUMENT", "scope needs a function", {
        field: "fn",
        value: describeValue(fn),
        expected: "a function (sync or async)",
      });
    }
    const scope: Scope = new Set();
    this.#scopes.push(scope);
    let result: T;
    try {
      result = fn();
    } catch (err) {
      this.#endScope(scope, undefined, false);
      throw err;
    }
    if (isThenable(result)) {
      return (result as unknown as Promise<unknown>).then(
        (value) => {
          this.#endScope(scope, value, true);
          return value;
        },
        (err: unknown) => {
          this.#endScope(scope, undefined, false);
          throw err;
        },
      ) as unknown as T;
    }
    this.#endScope(scope, result, true);
    return result;
  }

  /**
   * Take `x` (an entry, a GPU pointer, or a watched object) out of every scope,
   * so no scope releases it. Returns `x`. Throws INVALID_ARGUMENT if `x` names no live entry.
   */
  keep<T>(x: T): T {
    const entries = this.#resolve(x);
    if (entries.length === 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "keep: the value names nothing live in the ledger", {
        field: "x",
        value: describeValue(x),
        expected: "a LedgerEntry, a live GPU pointer, or an object passed to ledger.watch",
      });
    }
    for (const e of entries) this.#unscope(e);
    return x;
  }

  /** Release what `x` names (entry, pointer, watched object) now. Returns false if it was already released. */
  dispose(x: unknown): boolean {
    const entries = this.#resolve(x, true);
    if (entries.length === 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "dispose: the value names nothing in the ledger", {
        field: "x",
        value: describeValue(x),
        expected: "a LedgerEntry, a live GPU pointer, or an object passed to ledger.watch",
      });
    }
    let any = false;
    for (const e of entries) any = e[RELEASE]("dispose") || any;
    return any;
  }

  /** Release every live entry of `deviceId` (newest first) for device loss, except those `skip` accepts. Errors are reported. */
  releaseDevice(deviceId: number, skip: (entry: LedgerEntry) => boolean): void {
    const victims = [...this.#live.values()].filter((e) => e.deviceId === deviceId && !skip(e)).reverse();
    for (const e of victims) {
      try {
        e[RELEASE]("device-lost");
      } catch (err) {
        reportUncaught(err, "a release function");
      }
    }
  }

  /** Live entries and bytes. */
  get size(): number {
    return this.#live.size;
  }

  #resolve(x: unknown, includeReleased = false): LedgerEntry[] {
    if (x instanceof LedgerEntry) return includeReleased || !x.released ? [x] : [];
    if (typeof x === "number") {
      return x >>> 0 === x ? [...(this.#byPointer.get(x) ?? [])] : [];
    }
    if (x !== null && (typeof x === "object" || typeof x === "function")) {
      const e = this.#byObject.get(x);
      return e !== undefined && (includeReleased || !e.released) ? [e] : [];
    }
    return [];
  }

  #unscope(entry: LedgerEntry): void {
    const scope = this.#scopeOf.get(entry);
    if (scope === undefined) return;
    scope.delete(entry);
    this.#scopeOf.delete(entry);
  }

  #endScope(scope: Scope, result: unknown, rethrow: boolean): void {
    const at = this.#scopes.lastIndexOf(scope);
    if (at >= 0) this.#scopes.splice(at, 1);
    const parent = this.#scopes[this.#scopes.length - 1];
    for (const e of this.#returned(result)) {
      if (scope.has(e)) {
        scope.delete(e);
        this.#scopeOf.delete(e);
        if (parent !== undefined) {
          parent.add(e);
          this.#scopeOf.set(e, parent);
        }
      }
    }
    let first: unknown;
    let failed = false;
    for (const e of [...scope].reverse()) {
      this.#scopeOf.delete(e);
      try {
        e[RELEASE]("scope");
      } catch (err) {
        if (!failed) first = err;
        failed = true;
        if (!rethrow) reportUncaught(err, "a release function");
      }
    }
    scope.clear();
    if (failed && rethrow) throw first;
  }

  /** Entries named by a scope's result: itself, or inside arrays / plain objects (4 levels). */
  #returned(result: unknown, depth = 0, out: LedgerEntry[] = []): LedgerEntry[] {
    if (depth > 4 || result === undefined || result === null) return out;
    out.push(...this.#resolve(result));
    if (Array.isArray(result)) {
      for (const item of result) this.#returned(item, depth + 1, out);
    } else if (typeof result === "object" && Object.getPrototypeOf(result) === Object.prototype) {
      for (const item of Object.values(result as object)) this.#returned(item, depth + 1, out);
    }
    return out;
  }

  #forget(entry: LedgerEntry): void {
    this.#live.delete(entry.id);
    if (entry.pointer !== null) {
      const held = this.#byPointer.get(entry.pointer);
      const at = held === undefined ? -1 : held.indexOf(entry);
      if (at >= 0) held!.splice(at, 1);
      if (held?.length === 0) this.#byPointer.delete(entry.pointer);
    }
    this.#unscope(entry);
    // Only a watched entry has a registry cell: unregistering one that has none cost as much as the rest of a
    // bucket alloc + free (bench/release-cost.mjs).
    if (entry[WATCHED]) this.#registry?.unregister(entry);
  }

  #collected(entry: LedgerEntry): void {
    if (entry.released) return;
    const leak: LeakReport = {
      id: entry.id,
      kind: entry.kind,
      owner: entry.owner,
      deviceId: entry.deviceId,
      bytes: entry.bytes,
      pointer: entry.pointer,
      where: entry.stack ?? NO_STACK,
      ageMs: ageSince(entry.createdAt),
    };
    if (this.#leaks.length >= MAX_LEAKS) this.#leaks.shift();
    this.#leaks.push(leak);
    console.warn(
      `webdlpack: leaked ${leak.kind} (${leak.bytes} bytes, owner ${leak.owner}` +
        `${leak.pointer === null ? "" : `, GPU pointer 0x${leak.pointer.toString(16).padStart(8, "0")}`}) was garbage collected ` +
        `without being released; released it now. Dispose it, or make it inside ctx.scope(). Made at: ${leak.where}`,
    );
    try {
      entry[RELEASE]("finalizer");
    } catch (err) {
      reportUncaught(err, "a release function");
    }
  }
}

function isThenable(value: unknown): boolean {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
