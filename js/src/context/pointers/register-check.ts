/**
 * registerGPUBuffer's check that a caller's GPUBuffer can be used on the device it is registered under.
 *
 * WebGPU gives a buffer no `device` property and has no synchronous way to ask whether it was destroyed.
 * So the buffer is named in zero-byte uses on that device, each in its own validation error scope:
 * - a zero-byte `copyBufferToBuffer` to or from a small scratch buffer of the device, in a command
 *   encoder that is finished but never submitted (nothing runs on the GPU). Encoding validates only that
 *   the buffer belongs to the device (and has the copy usage the probe picked from `buffer.usage`), so an
 *   error here means another GPUDevice made it: BAD_DEVICE, with WebGPU's words, which name both devices.
 *   Any buffer with COPY_SRC or COPY_DST usage can be probed so, mapped or not; one with only STORAGE usage
 *   (of at least 4 bytes) is named in a bind group instead (created, never used), which validates the same;
 * - for an unmapped COPY_DST buffer, a zero-byte `queue.writeBuffer`, which also fails for a destroyed
 *   buffer: DISPOSED.
 * A buffer with none of these usages cannot be read, written or copied by webdlpack, and is not checked.
 *
 * The pointer is returned at once; when the verdict is an error, the context poisons it and every later
 * use throws the refusal. Readers that can wait — every readback, the adapters' hand-offs — first wait for
 * a pending verdict ({@link pendingBufferCheck}), so nothing reads a refused buffer. (A readback also runs
 * in its own validation scope, so it can never return bytes that are not the buffer's: transfers/read.ts.)
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
import { createBufferAs, WEBDLPACK_OWNER } from "../ground/meter.js";
import { formatPointer, type GPUPointer } from "./pointer-format.js";

const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const STORAGE = 0x80;
const COMPUTE = 0x4;
const NOTHING = new Uint8Array(0);

/** The outcome of a finished check on a device: null (usable), or why not (WebGPU's message). */
type Verdict = { kind: "foreign" | "destroyed" | "refused"; message: string } | null;

interface Checked {
  device: GPUDevice;
  verdict: Verdict | Promise<Verdict>;
}

/** Buffers checked (or being checked) on a device: the device and the verdict, or its promise while pending. */
const checked = new WeakMap<GPUBuffer, Checked>();

/** A 4-byte COPY_SRC | COPY_DST buffer per device, the other end of the probe's zero-byte copy. */
const scratch = new WeakMap<GPUDevice, GPUBuffer>();

/** A bind group layout per device with one read-only storage buffer: the probe of STORAGE-only buffers. */
const storageLayouts = new WeakMap<GPUDevice, GPUBindGroupLayout>();

/**
 * Checks whose verdict has not come back yet, over all buffers and devices. A readback asks
 * {@link pendingBufferCheck} only while this is above 0 (an imported live binding: one variable load per
 * readback, instead of a WeakMap lookup on the buffer, when nothing is being checked — the common case).
 */
export let checksInFlight = 0;

/** Forget `buffer`'s verdict (webdlpack destroyed it; a later registration must be checked again). */
export function forgetVerifiedBuffer(buffer: GPUBuffer): void {
  checked.delete(buffer);
}

/**
 * While `buffer`'s check runs: a promise of the refusal `ptr` (on `deviceId`) gets, or null once it is found
 * usable (never rejects). Null at once when no check is pending: then the pointer already reports a refusal.
 */
export function pendingBufferCheck(
  buffer: GPUBuffer,
  ptr: GPUPointer,
  deviceId: number,
): Promise<WebDLPackError | null> | null {
  if (checksInFlight === 0) return null;
  const known = checked.get(buffer);
  if (known === undefined || !(known.verdict instanceof Promise)) return null;
  const { device } = known;
  return known.verdict.then((v) => (v === null ? null : refusal(device, buffer, ptr, deviceId, v)));
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
    return Promise.resolve(known.verdict).then((v) => (v === null ? null : refusal(device, buffer, ptr, deviceId, v)));
  }
  const pending = probe(device, buffer);
  if (pending === null) return null;
  const entry: Checked = { device, verdict: null };
  checksInFlight += 1;
  entry.verdict = pending.then((v) => {
    checksInFlight -= 1;
    // Keep the verdict unless the buffer was forgotten (destroyed by webdlpack) or re-checked meanwhile.
    if (checked.get(buffer) === entry) entry.verdict = v;
    return v;
  });
  checked.set(buffer, entry);
  return entry.verdict.then((v) => (v === null ? null : refusal(device, buffer, ptr, deviceId, v)));
}

/** Run the zero-byte uses (see the file comment); null when `buffer` has no usage that can be probed. */
function probe(device: GPUDevice, buffer: GPUBuffer): Promise<Verdict> | null {
  const usage = buffer.usage;
  const copies = (usage & (COPY_SRC | COPY_DST)) !== 0;
  if (!copies && ((usage & STORAGE) === 0 || buffer.size < 4)) return null;
  const unmapped = buffer.mapState === undefined || buffer.mapState === "unmapped";
  let other = scratch.get(device);
  try {
    if (other === undefined) {
      const descriptor = { size: 4, usage: COPY_SRC | COPY_DST, label: "webdlpack register check" };
      other = createBufferAs(device, descriptor, WEBDLPACK_OWNER); // webdlpack's own, in ctx.memory()
      scratch.set(device, other);
    }
    device.pushErrorScope("validation"); // outer: the write (destroyed or foreign)
    device.pushErrorScope("validation"); // inner: the copy (foreign)
  } catch {
    return null; // a lost device: every use of the pointer reports that instead
  }
  try {
    if (copies) {
      const encoder = device.createCommandEncoder();
      if ((usage & COPY_SRC) !== 0) encoder.copyBufferToBuffer(buffer, 0, other, 0, 0);
      else encoder.copyBufferToBuffer(other, 0, buffer, 0, 0);
      encoder.finish(); // validated, never submitted
    } else {
      device.createBindGroup({
        layout: storageLayout(device),
        entries: [{ binding: 0, resource: { buffer, size: 4 } }],
      });
    }
  } catch {
    // A synchronous refusal is reported by the scope as well: the scope decides.
  }
  const copy = device.popErrorScope();
  try {
    if ((usage & COPY_DST) !== 0 && unmapped) device.queue.writeBuffer(buffer, 0, NOTHING);
  } catch {
    // As above.
  }
  const write = device.popErrorScope();
  return Promise.all([copy, write]).then(
    ([copyError, writeError]): Verdict => {
      if (copyError !== null) return { kind: "foreign", message: copyError.message };
      return writeError === null ? null : { kind: "destroyed", message: writeError.message };
    },
    () => null,
  );
}

function storageLayout(device: GPUDevice): GPUBindGroupLayout {
  let layout = storageLayouts.get(device);
  if (layout === undefined) {
    layout = device.createBindGroupLayout({
      label: "webdlpack register check",
      entries: [{ binding: 0, visibility: COMPUTE, buffer: { type: "read-only-storage" } }],
    });
    storageLayouts.set(device, layout);
  }
  return layout;
}

/** The error a refused registration's pointer throws on every use. */
function refusal(
  device: GPUDevice,
  buffer: GPUBuffer,
  ptr: GPUPointer,
  deviceId: number,
  v: NonNullable<Verdict>,
): WebDLPackError {
  return bufferError(
    `GPU pointer ${formatPointer(ptr)}`,
    `webgpu:${deviceId}'s GPUDevice`,
    device,
    buffer,
    v,
    deviceId,
  );
}

/**
 * Why WebGPU refused a use of `buffer` on `device` (it said `message`), for `subject` (e.g. "readback"):
 * BAD_DEVICE when another GPUDevice made the buffer (a zero-byte probe decides), DISPOSED when it is destroyed (when
 * the probe can tell), else INVALID_ARGUMENT.
 */
export async function bufferUseError(
  subject: string,
  device: GPUDevice,
  buffer: GPUBuffer,
  message: string,
): Promise<WebDLPackError> {
  const kind = (await probe(device, buffer))?.kind ?? "refused";
  return bufferError(subject, "the GPUDevice", device, buffer, { kind, message }, undefined);
}

/**
 * The refusal of a use (`subject`) of pointer `ptr`, whose registered buffer its owner (`owner`) destroyed: DISPOSED,
 * the buffer's lifetime ended. Known without a GPU call when the device's meter saw the destroy (pointers/buffer-table).
 */
export function destroyedBufferError(
  subject: string,
  buffer: GPUBuffer,
  size: number,
  ptr: GPUPointer,
  owner: string,
): WebDLPackError {
  const name = buffer.label ? `GPUBuffer "${buffer.label}"` : `${size}-byte GPUBuffer`;
  return new WebDLPackError(
    "DISPOSED",
    `${subject}: the ${name} of GPU pointer ${formatPointer(ptr)} was destroyed by its owner (${owner}); its data ` +
      "is gone: free the pointer (dispose the tensor)",
    { field: "buffer", value: name, expected: "a live GPUBuffer (not destroyed while registered)" },
  );
}

function bufferError(
  subject: string,
  oursName: string,
  device: GPUDevice,
  buffer: GPUBuffer,
  v: NonNullable<Verdict>,
  deviceId: number | undefined,
): WebDLPackError {
  const name = buffer.label ? `GPUBuffer "${buffer.label}"` : `${buffer.size}-byte GPUBuffer`;
  const ours = `${oursName}${device.label ? ` "${device.label}"` : ""}`;
  // What happened comes first; WebGPU's own words follow, their first line only (the "While encoding …"
  // trail names webdlpack's probe, not the caller's code), and whole as the error's cause.
  const webgpu = `WebGPU said: ${firstLine(v.message)}`;
  const cause = webgpuCause(v.message);
  if (v.kind === "foreign") {
    const getter = `ctx.getWebGPUDevice(${deviceId ?? ""})`;
    return new WebDLPackError(
      "BAD_DEVICE",
      `${subject}: the ${name} was made by another GPUDevice than ${ours}, which can not use it. ` +
        `Make the buffer on ${getter} (give the framework that made it this device), ` +
        `or copy its data over through the CPU. ${webgpu}`,
      { field: "buffer", value: name, expected: `a GPUBuffer made by ${ours}`, cause },
    );
  }
  // A destroyed buffer's lifetime ended (DISPOSED, as for any use of a released buffer); anything else WebGPU refused.
  const destroyed = v.kind === "destroyed";
  const what = destroyed ? "is destroyed" : "was refused by WebGPU";
  return new WebDLPackError(destroyed ? "DISPOSED" : "INVALID_ARGUMENT", `${subject}: the ${name} ${what}. ${webgpu}`, {
    field: "buffer",
    value: name,
    expected: `a live GPUBuffer made by ${ours}`,
    cause,
  });
}

/** The first line of a WebGPU message (what was wrong; the lines after it say where). */
function firstLine(message: string): string {
  return message.split("\n", 1)[0]!.trim();
}

/** WebGPU's whole validation message as an error (an `Error`'s cause, as consoles show it). */
function webgpuCause(message: string): Error {
  const err = new Error(message);
  err.name = "GPUValidationError";
  return err;
}
