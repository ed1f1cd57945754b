/**
 * Other libraries on a device that record GPU work and submit it later: TF.js keeps its dispatches in an open
 * compute pass it submits on a data read or every few ops, tvmjs keeps them in an encoder it submits on its next
 * read, write or sync. A buffer such a library writes (its op's output, a buffer lent to it) may have writes
 * recorded and not yet submitted, and one it reads may have reads recorded: a read webdlpack queues before they are
 * submitted sees the old bytes, a write changes what the recorded read will see. So every transfer of the context
 * (readback, upload, GPU copy, clear) and every adapter hand-off first has each such library on the device submit
 * what it recorded ({@link flushQueueUsers}) — the one home of that rule; the TF.js and tvmjs adapters register
 * their library here ({@link addQueueUser}).
 *
 * Never in the middle of the library's own work: a library allocates while it records (TF.js acquires an op's
 * output and uniform buffers with its pass open and the op half recorded; submitting then drops or splits that
 * op), and webdlpack code can run inside that allocation (memory pressure handlers, and whatever they call). A
 * queue user registered with its device-guard owner is skipped while that owner's guarded `createBuffer` runs
 * (devices/guard.ts `inOwnCall`); its work is submitted by the next transfer after the op.
 */
import { inOwnCall } from "../devices/guard.js";

/** One registered library: its flush and its device-guard owner (undefined: no guard, always flushed). */
interface QueueUser {
  readonly flush: () => void;
  readonly owner: string | undefined;
}

/** The queue users of each device (by the raw device, as the context registers it). */
const byDevice = new WeakMap<GPUDevice, Set<QueueUser>>();

/**
 * Flushes registered over all devices. A transfer asks {@link flushQueueUsers} only while this is above 0 (an
 * imported live binding: one variable load per transfer when no such library is bound, the common case).
 */
export let queueUsers = 0;

/**
 * Have `flush` run before each of webdlpack's transfers and hand-offs on `device` (the raw device), except while
 * `owner` (the library's device-guard owner, e.g. "tfjs") is inside its own guarded `createBuffer`. Returns the
 * function that removes it (idempotent). `flush` must not throw (a library's submit of its recorded work).
 */
export function addQueueUser(device: GPUDevice, flush: () => void, owner?: string): () => void {
  let set = byDevice.get(device);
  if (set === undefined) {
    set = new Set();
    byDevice.set(device, set);
  }
  const entry: QueueUser = { flush, owner };
  set.add(entry);
  queueUsers += 1;
  return () => {
    if (set.delete(entry)) queueUsers -= 1;
  };
}

/** Submit the work every queue user of `device` recorded, but none inside its own work (see the file comment). */
export function flushQueueUsers(device: GPUDevice): void {
  if (queueUsers === 0) return;
  const set = byDevice.get(device);
  if (set === undefined) return;
  for (const user of set) if (user.owner === undefined || !inOwnCall(device, user.owner)) user.flush();
}
