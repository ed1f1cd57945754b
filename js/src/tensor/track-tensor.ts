/**
 * Owning WebGPU tensors in the page's lifetime ledger.
 *
 * A JS `Tensor.webgpu({..., onRelease})` (also every tensor the adapters make)
 * holds a GPU pointer until it and its exports are released. This puts the
 * tensor's own hold in the context's ledger as a `"tensor"` entry (owner,
 * device, bytes, pointer, age), so `ctx.ledger.entries()` lists it, scopes and
 * device loss release it, and a tensor dropped undisposed is released by the
 * ledger's finalizer and reported by `ctx.leaks()`.
 */
import { getContext } from "../context/get-context.js";
import { TRACK_CHECKED, type LedgerEntry, type TrackedEntry, type TrackOptions } from "../context/ledger/entry.js";

/** Owner label of a tensor made in JS without an `owner`. */
export const JS_TENSOR_OWNER = "js";

/** Owner label of a GPU tensor read from a managed struct whose producer did not name itself (Tensor.fromManaged). */
export const DLPACK_PRODUCER = "dlpack";

/** Holder label of a DLPack export whose consumer did not name itself. */
export const EXPORT_HOLDER = "dlpack-export";

/** What {@link trackGPUTensor} records. */
export interface TrackedGPUTensor {
  /** Owner label (a framework name); default {@link JS_TENSOR_OWNER}. */
  owner?: string | undefined;
  /** webdlpack device id. */
  deviceId: number;
  /** Bytes of the elements. */
  bytes: number;
  /** The GPU pointer the tensor names. */
  pointer: number;
  /** Drops the tensor's own hold; runs at most once. Must not reference `tensor`. */
  release: () => void;
}

/**
 * Track `tensor`'s hold in the page context's ledger and watch `tensor` for
 * garbage collection. Returns the entry (release it to drop the hold), or
 * null when the page's context has no ledger (a context made by an older copy
 * of webdlpack): the caller then keeps its own finalizer.
 */
export function trackGPUTensor(tensor: object, input: TrackedGPUTensor): TrackedEntry | null {
  const entry = trackHold("tensor", input.owner ?? JS_TENSOR_OWNER, input, true);
  if (entry !== null) getContext().ledger.watch(tensor, entry);
  return entry;
}

/**
 * Track a DLPack export's hold on a tensor's GPU bytes (kind `"export"`, under
 * the consumer's label): the consumer (Python, C) is a holder until it calls
 * the struct's deleter, which marks the entry released. Not scoped (JS scopes
 * do not end a consumer's hold), not watched (no JS object to watch). Device
 * loss runs `release`. Null when the page's context has no ledger.
 */
export function trackExport(input: TrackedGPUTensor): TrackedEntry | null {
  return trackHold("export", input.owner ?? EXPORT_HOLDER, input, false);
}

function trackHold(
  kind: "tensor" | "export",
  owner: string,
  input: TrackedGPUTensor,
  scoped: boolean,
): TrackedEntry | null {
  const ledger = getContext().ledger as ReturnType<typeof getContext>["ledger"] | undefined;
  if (ledger === undefined || typeof ledger.track !== "function") return null;
  const options: TrackOptions = {
    kind,
    owner,
    deviceId: input.deviceId,
    bytes: input.bytes,
    pointer: input.pointer >>> 0,
    release: input.release,
    ...(scoped ? {} : { scoped: false }),
  };
  // A tensor's own description was checked when it was made: this copy's ledger skips checking it again
  // (a ledger of another copy of webdlpack has no such entry point and checks).
  const checked = (ledger as { [TRACK_CHECKED]?: (o: TrackOptions) => LedgerEntry })[TRACK_CHECKED];
  if (kind === "export" && typeof checked !== "function") return null; // an older copy's ledger may not know exports
  return typeof checked === "function" ? checked.call(ledger, options) : ledger.track(options);
}
