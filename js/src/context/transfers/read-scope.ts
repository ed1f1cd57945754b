/**
 * The error scopes of a readback's new buffers and copies (read.ts, read-rotate.ts): WebGPU's answers, the typed
 * errors when it ran out of memory or refused the copies — the staging bytes are then not the source's and must never
 * reach the caller — and the staging handed back after such a failure without losing any that is sound.
 */
import { WebDLPackError } from "../../errors.js";
import { bufferUseError } from "../pointers/register-check.js";
import type { ReadRing } from "./staging.js";

/** Pop the readback's innermost error scope: its error, or null (also when the device is gone: that rejects elsewhere). */
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

/**
 * Throw OUT_OF_MEMORY when the out-of-memory scope around the buffers a readback of `length` bytes made (staging
 * pieces, a snapshot: `what`) caught an error. Checked before {@link checkCopied}: a copy into a buffer that could not
 * be made is refused too, and the cause is the memory, not the source.
 */
export async function checkAllocated(
  oom: Promise<GPUError | null> | undefined,
  length: number,
  what: string,
): Promise<void> {
  const error = await oom;
  if (error === null || error === undefined) return;
  throw new WebDLPackError("OUT_OF_MEMORY", `out of GPU memory making ${what} for a readback: ${error.message}`, {
    field: "byteLength",
    value: length,
    expected: "a readback whose staging the device has memory for now (free GPU memory, or read in smaller ranges)",
    cause: error,
  });
}

/**
 * Hand back the staging of a readback that failed before any byte reached the caller (a refused copy, memory the
 * device lacked): each buffer whose map was asked for (`maps[i]`) waits for it, then is unmapped and kept (its
 * contents do not matter: the next readback overwrites them); one whose map failed (a buffer that could not be made,
 * a lost device) is destroyed; one never mapped is kept as it is. Never rejects.
 */
export async function giveBackUnread(
  ring: ReadRing,
  buffers: readonly GPUBuffer[],
  maps: readonly (Promise<unknown> | undefined)[],
): Promise<void> {
  await Promise.all(
    buffers.map(async (buffer, i) => {
      const map = maps[i];
      if (map === undefined) return ring.give(buffer);
      try {
        await map;
        buffer.unmap();
      } catch {
        return ring.discard(buffer);
      }
      return ring.give(buffer, true);
    }),
  );
}
