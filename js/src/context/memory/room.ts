/**
 * The checked allocation's creation with room made first and one retry after a
 * device out-of-memory error ({@link createWithRoom}). (webdlpack's own caches
 * of a device, which the budget trims as one unit, are wired in ../rooms.ts.)
 */
import { WebDLPackError } from "../../errors.js";
import type { ContextMemory } from "./context-memory.js";
import { WEBDLPACK_OWNER } from "../ground/meter.js";

/** Whether `err` is a device out-of-memory error (not the budget's own OUT_OF_MEMORY, which names `memoryBudget`). */
function isDeviceOutOfMemory(err: unknown): err is WebDLPackError {
  return err instanceof WebDLPackError && err.code === "OUT_OF_MEMORY" && err.field !== "memoryBudget";
}

/**
 * `create()` a buffer of `size` bytes for webdlpack on `device`: room is made first when it would cross
 * the budget (awaiting handlers that return promises); a device out-of-memory error makes room for
 * everything and retries once, then rejects with OUT_OF_MEMORY naming the bytes by owner.
 */
export async function createWithRoom(
  memory: ContextMemory,
  device: GPUDevice,
  size: number,
  create: () => Promise<GPUBuffer>,
): Promise<GPUBuffer> {
  if (!memory.fits(device, size)) {
    await memory.makeRoom(device, size, WEBDLPACK_OWNER, "budget");
    if (!memory.fits(device, size)) throw memory.outOfMemory(device, size, WEBDLPACK_OWNER, "budget");
  }
  try {
    return await create();
  } catch (err) {
    if (!isDeviceOutOfMemory(err)) throw err;
  }
  await memory.makeRoom(device, size, WEBDLPACK_OWNER, "out-of-memory");
  try {
    return await create();
  } catch (err) {
    if (!isDeviceOutOfMemory(err)) throw err;
    throw memory.outOfMemory(device, size, WEBDLPACK_OWNER, "out-of-memory", err);
  }
}
