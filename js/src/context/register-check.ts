/**
 * registerGPUBuffer's check that a caller's GPUBuffer can be used on the device it is registered under.
 *
 * WebGPU has no synchronous way to ask whether a buffer was destroyed or which GPUDevice made it. So the
 * buffer is named in a zero-byte `queue.writeBuffer` on that device inside a validation error scope: for a
 * buffer with COPY_DST usage nothing else can fail, so any error means it is destroyed or another device's.
 * The pointer is returned at once; when the verdict is an error, the context poisons it and every later
 * use throws INVALID_ARGUMENT (field `buffer`) with WebGPU's own words. Buffers without COPY_DST, or mapped
 * ones, cannot be named without side effects or a false refusal and are not checked.
 */
import { WebDLPackError } from "../errors.js";
import { formatPointer, type GPUPointer } from "./pointer-table.js";

const COPY_DST = 0x8;
const NOTHING = new Uint8Array(0);

/**
 * Start the check of `buffer` on `device`; resolves to the refusal for `ptr` (null: usable, or not checkable).
 * Never rejects.
 */
export function checkRegisteredBuffer(device: GPUDevice, buffer: GPUBuffer, ptr: GPUPointer, deviceId: number): Promise<WebDLPackError | null> {
  // Without COPY_DST (or while mapped, when a write is refused for that alone) the check could only be wrong.
  if ((buffer.usage & COPY_DST) === 0 || (buffer.mapState !== undefined && buffer.mapState !== "unmapped")) {
    return Promise.resolve(null);
  }
  try {
    device.pushErrorScope("validation");
  } catch {
    return Promise.resolve(null);
  }
  try {
    device.queue.writeBuffer(buffer, 0, NOTHING);
  } catch {
    // A synchronous refusal is reported by the scope as well (or by nothing): the scope decides.
  }
  return device.popErrorScope().then(
    (error) => error === null ? null : new WebDLPackError("INVALID_ARGUMENT",
      `GPU pointer ${formatPointer(ptr)}: the registered GPUBuffer is destroyed or was made by another GPUDevice than ` +
      `webgpu:${deviceId}'s (WebGPU: ${error.message})`,
      { field: "buffer", value: buffer.label || `${buffer.size}-byte buffer`,
        expected: `a live GPUBuffer made by the GPUDevice registered as webgpu:${deviceId}` }),
    () => null,
  );
}
