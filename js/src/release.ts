/**
 * The one release mechanism (docs/ownership.md): every holder of memory — a
 * Tensor, a `retain()` or export hold, a lease holder, a ledger entry —
 * releases through a {@link Release}, which acts exactly once however often
 * and by whichever path (dispose, scope end, finalizer, device loss) it is
 * called. Two implementations: {@link Once}, one holder; and `Holders`
 * (tensor/ownership.ts), a count of holders whose last release is a Once.
 */

/** A holder's release: acts once; later calls are no-ops that return false. */
export interface Release {
  /** True once released (by any path). */
  readonly released: boolean;
  /** Release now. True if this call released, false if it already was. */
  release(): boolean;
}

/**
 * One holder's release: runs its function exactly once, on the first
 * {@link Once.release} (or never, after {@link Once.cancel}), and remembers
 * which path (`R`, e.g. the ledger's "scope") got there first.
 */
export class Once<R extends string = string> implements Release {
  #fn: (() => void) | null;
  #by: R | null = null;

  /** A release that will run `fn` once. */
  constructor(fn: () => void) {
    this.#fn = fn;
  }

  /** True once released or cancelled. */
  get released(): boolean {
    return this.#by !== null;
  }

  /** The path that released it, or null while held. */
  get releasedBy(): R | null {
    return this.#by;
  }

  /**
   * Run the release for `by` (default "dispose"). True if this call ran it, false if it was already released.
   * Rethrows the function's error; the holder still counts as released.
   */
  release(by: R = "dispose" as R): boolean {
    const fn = this.#fn;
    if (this.#by !== null) return false;
    this.#by = by;
    this.#fn = null;
    fn?.();
    return true;
  }

  /** Count as released for `by` without running the function (the memory was freed another way). */
  cancel(by: R): boolean {
    if (this.#by !== null) return false;
    this.#by = by;
    this.#fn = null;
    return true;
  }
}

/** {@link Once} as a plain function, for APIs that hand a holder its release as `() => void` (`retain()`). */
export function once(fn: () => void): () => void {
  const r = new Once(fn);
  return () => {
    r.release();
  };
}
