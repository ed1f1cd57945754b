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

/** A counted claim on a GPU buffer; `finalize` runs once when the last holder releases. */
export class BufferLease {
  /** The one holder count of webdlpack (tensor/ownership.ts), starting with none. */
  readonly #holders: Holders;
  #label: string | (() => string);

  /**
   * Make a lease with no holders yet; `finalize` runs when the last holder releases. `label` may be a
   * function, called only when a message needs it (hand-offs make a lease each; most never show it).
   */
  constructor(label: string | (() => string), finalize: () => void) {
    this.#label = label;
    this.#holders = new Holders(finalize, 0);
  }

  /** What the lease is for, for messages (e.g. "ORT output Y"). */
  get label(): string {
    if (typeof this.#label === "function") this.#label = this.#label();
    return this.#label;
  }

  /** Holders right now. */
  get holders(): number {
    return this.#holders.count;
  }

  /** True once the last holder released and `finalize` ran. */
  get finalized(): boolean {
    return this.#holders.finalized;
  }

  /** Add a holder; returns its release function (idempotent). Throws DISPOSED after finalization. */
  retain(): LeaseRelease {
    if (this.#holders.finalized) {
      throw new WebDLPackError("DISPOSED", `the buffer of ${this.label} was already released by every holder`, {
        field: "lease",
        value: this.label,
        expected: "a lease that still has holders",
      });
    }
    return this.#holders.hold();
  }
}
