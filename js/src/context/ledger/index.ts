/**
 * Ledger room: the page's lifetime ledger — every live GPU allocation and
 * tensor, whoever made it, with the one release function each has.
 *
 *   entry.ts         one ledger entry (exactly-once release) and the report shapes
 *   ledger.ts        tracking, scopes, leak reports
 *   track-check.ts   ledger.track's options check; where an entry was made (debug)
 * (A tensor's own entry is made beside the tensor: tensor/track-tensor.ts.)
 */
export { LedgerEntry, ownerLabel, type LedgerView, type TrackedEntry } from "./entry.js";
export type { Ledger } from "./ledger.js";
