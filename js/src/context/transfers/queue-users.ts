/**
 * Other libraries on a device that record GPU work and submit it later: tvmjs keeps its dispatches in an encoder
 * it submits on its next read, write or sync. A buffer lent to such a library may have writes recorded and not yet
 * submitted; a read (or write, or copy) webdlpack queues before they are submitted runs before them and sees the
 * old bytes. So every transfer of the context, and every adapter hand-off, first has each such library on the device
 * submit what it recorded ({@link flushQueueUsers}), as the TF.js adapter does for TF.js's open compute pass.
 */

/** The flushes of each device's queue users (by the raw device, as the context registers it). */
const byDevice = new WeakMap<GPUDevice, Set<() => void>>();

/**
 * Flushes registered over all devices. A transfer asks {@link flushQueueUsers} only while this is above 0 (an
 * imported live binding: one variable load per transfer when no such library is bound, the common case).
 */
export let queueUsers = 0;

/**
 * Have `flush` run before each of webdlpack's transfers and hand-offs on `device` (the raw device). Returns the
 * function that removes it (idempotent). `flush` must not throw (a library's submit of its recorded work).
 */
export function addQueueUser(device: GPUDevice, flush: () => void): () => void {
  let set = byDevice.get(device);
  if (set === undefined) {
    set = new Set();
    byDevice.set(device, set);
  }
  const entry = (): void => flush();
  set.add(entry);
  queueUsers += 1;
  return () => {
    if (set.delete(entry)) queueUsers -= 1;
  };
}

/** Submit the work every queue user of `device` recorded (see the file comment). */
export function flushQueueUsers(device: GPUDevice): void {
  if (queueUsers === 0) return;
  const set = byDevice.get(device);
  if (set === undefined) return;
  for (const flush of set) flush();
}
