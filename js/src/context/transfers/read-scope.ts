/**
 * The validation scope of a readback's copies (read.ts, read-rotate.ts): WebGPU's answer, and the typed error when
 * it refused them — the staging bytes are then not the source's and must never reach the caller.
 */
import { bufferUseError } from "../pointers/register-check.js";

/** Pop the readback's validation scope: its error, or null (also when the device is gone: that rejects elsewhere). */
export function popScope(device: GPUDevice): Promise<GPUError | null> {
  return device.popErrorScope().catch(() => null);
}

/** Throw when WebGPU refused the readback's copies: the staging bytes are then not the source's. */
export async function checkCopied(
  refused: Promise<GPUError | null> | undefined,
  device: GPUDevice,
  source: GPUBuffer,
): Promise<void> {
  const error = await refused;
  if (error !== null && error !== undefined) throw await bufferUseError("readback", device, source, error.message);
}
