/**
 * Reference counts for GPU buffers the adapters lend out.
 *
 * When a buffer produced by one framework (an ORT output) is used by others (a
 * webdlpack Tensor, then a TF.js tensor made from it), the producer must keep it
 * until the last of them lets go: ORT reuses a disposed output's buffer on its
 * next run, and a consumer still reading it would silently see new data. A
 * lease counts the holders; the producer's release runs once, when the count
 * drops to zero.
 */
import { WebDLPackError } from "../errors.js";
import { Holders } from "../tensor/ownership.js";

/** One holder's claim on a lease. Releasing twice is a no-op. */
export type LeaseRelease = () => void;

/**
 * The {@link Holders} of a buffer lent out, starting with none; `finalize` runs when the last holder releases.
 * It adds a label for messages, and refuses a new holder once the last one let go.
 */
export class BufferLease extends Holders {
  #label: string | (() => string);

  /**
   * Make a lease with no holders yet. `label` may be a function, called only when a message needs it (hand-offs
   * make a lease each; most never show it).
   */
  constructor(label: string | (() => string), finalize: () => void) {
    super(finalize, 0);
    this.#label = label;
  }

  /** What the lease is for, for messages (e.g. "ORT output Y"). */
  get label(): string {
    if (typeof this.#label === "function") this.#label = this.#label();
    return this.#label;
  }

  /** Add a holder; returns its release function (idempotent). Throws DISPOSED after the last holder released. */
  override hold(): LeaseRelease {
    if (this.released) {
      throw new WebDLPackError("DISPOSED", `the buffer of ${this.label} was already released by every holder`, {
        field: "lease",
        value: this.label,
        expected: "a lease that still has holders",
      });
    }
    return super.hold();
  }
}
