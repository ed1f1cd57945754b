/**
 * registerGPUBuffer's check that a caller's GPUBuffer can be used on the device it is registered under.
 *
 * WebGPU has no synchronous way to ask whether a buffer was destroyed or which GPUDevice made it. So the
 * buffer is named in a zero-byte `queue.writeBuffer` on that device inside a validation error scope: for a
 * buffer with COPY_DST usage nothing else can fail, so any error means it is destroyed or another device's.
 * The pointer is returned at once; when the verdict is an error, the context poisons it and every later
 * use throws INVALID_ARGUMENT (field `buffer`) with WebGPU's own words. Buffers without COPY_DST, or mapped
 * ones, cannot be named without side effects or a false refusal and are not checked.
 *
 * The check runs once per GPUBuffer object and device, not once per registration: frameworks hand out the
 * same buffers run after run (ORT reuses its output buffers), and a round trip to the GPU process per
 * hand-off cost more than the hand-off itself. A buffer found usable on a device is remembered (weakly) as
 * verified there; one registered again while its first check is pending shares that check's verdict. Which
 * device made a buffer never changes, so the cache cannot accept a foreign buffer. What it can miss is a
 * buffer its maker destroyed after it was verified: webdlpack forgets the buffers it destroys itself
 * ({@link forgetVerifiedBuffer}), but WebGPU tells no one when another framework destroys one.
 */
import { WebDLPackError } from "../../errors.js";
import { formatPointer, type GPUPointer } from "./pointer-format.js";

const COPY_DST = 0x8;
const NOTHING = new Uint8Array(0);

/** The outcome of a finished check on a device: null (usable) or WebGPU's validation message. */
type Verdict = string | null;

/** Buffers checked (or being checked) on a device: the device and the verdict, or its promise while pending. */
const checked = new WeakMap<GPUBuffer, { device: GPUDevice; verdict: Verdict | Promise<Verdict> }>();

/** Forget `buffer`'s verdict (webdlpack destroyed it; a later registration must be checked again). */
export function forgetVerifiedBuffer(buffer: GPUBuffer): void {
  checked.delete(buffer);
}

/**
 * Check `buffer` on `device`: null when it is known usable (or cannot be checked) — no GPU call then —,
 * else a promise of the refusal for `ptr` (null: usable). The promise never rejects.
 */
export function checkRegisteredBuffer(
  device: GPUDevice,
  buffer: GPUBuffer,
  ptr: GPUPointer,
  deviceId: number,
): Promise<WebDLPackError | null> | null {
  const known = checked.get(buffer);
  if (known !== undefined && known.device === device) {
    if (known.verdict === null) return null;
    return Promise.resolve(known.verdict).then((message) =>
      message === null ? null : refusal(buffer, ptr, deviceId, message),
    );
  }
  // Without COPY_DST (or while mapped, when a write is refused for that alone) the check could only be wrong.
  if ((buffer.usage & COPY_DST) === 0 || (buffer.mapState !== undefined && buffer.mapState !== "unmapped")) return null;
  try {
    device.pushErrorScope("validation");
  } catch {
    return null;
  }
  try {
    device.queue.writeBuffer(buffer, 0, NOTHING);
  } catch {
    // A synchronous refusal is reported by the scope as well (or by nothing): the scope decides.
  }
  const entry: { device: GPUDevice; verdict: Verdict | Promise<Verdict> } = { device, verdict: null };
  const pending = device.popErrorScope().then(
    (error) => (error === null ? null : error.message),
    () => null,
  );
  entry.verdict = pending.then((message) => {
    // Keep the verdict unless the buffer was forgotten (destroyed by webdlpack) or re-checked meanwhile.
    if (checked.get(buffer) === entry) entry.verdict = message;
    return message;
  });
  checked.set(buffer, entry);
  return pending.then((message) => (message === null ? null : refusal(buffer, ptr, deviceId, message)));
}

/** The error a refused registration's pointer throws on every use. */
function refusal(buffer: GPUBuffer, ptr: GPUPointer, deviceId: number, message: string): WebDLPackError {
  return new WebDLPackError(
    "INVALID_ARGUMENT",
    `GPU pointer ${formatPointer(ptr)}: the registered GPUBuffer is destroyed or was made by another GPUDevice than ` +
      `webgpu:${deviceId}'s (WebGPU: ${message})`,
    {
      field: "buffer",
      value: buffer.label || `${buffer.size}-byte buffer`,
      expected: `a live GPUBuffer made by the GPUDevice registered as webgpu:${deviceId}`,
    },
  );
}
