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
import { getContext } from "../get-context.js";
import { TRACK_CHECKED, type LedgerEntry, type TrackOptions } from "./entry.js";

/** Owner label of a tensor made in JS without an `owner`. */
export const JS_TENSOR_OWNER = "js";

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
export function trackGPUTensor(tensor: object, input: TrackedGPUTensor): LedgerEntry | null {
  const ledger = getContext().ledger as ReturnType<typeof getContext>["ledger"] | undefined;
  if (ledger === undefined || typeof ledger.track !== "function") return null;
  const options: TrackOptions = {
    kind: "tensor",
    owner: input.owner ?? JS_TENSOR_OWNER,
    deviceId: input.deviceId,
    bytes: input.bytes,
    pointer: input.pointer >>> 0,
    release: input.release,
  };
  // A tensor's own description was checked when it was made: this copy's ledger skips checking it again
  // (a ledger of another copy of webdlpack has no such entry point and checks).
  const checked = (ledger as { [TRACK_CHECKED]?: (o: TrackOptions) => LedgerEntry })[TRACK_CHECKED];
  const entry = typeof checked === "function" ? checked.call(ledger, options) : ledger.track(options);
  ledger.watch(tensor, entry);
  return entry;
}
