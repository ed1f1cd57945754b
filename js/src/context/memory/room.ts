/**
 * The memory room's two hooks into the context: webdlpack's own caches of a
 * device as one trimmable unit ({@link ownCachesOf}), and the checked
 * allocation's creation with room made first and one retry after a device
 * out-of-memory error ({@link createWithRoom}).
 */
import { WebDLPackError } from "../../errors.js";
import type { Allocators } from "../allocation/allocators.js";
import type { DeviceRecord } from "../devices/registry.js";
import { existingTransfers } from "../transfers/index.js";
import type { ContextMemory, OwnCaches } from "./context-memory.js";
import { WEBDLPACK_OWNER } from "./meter.js";

/** webdlpack's caches on `record`'s device: the bucket cache, lazy releases and kept staging buffers. */
export function ownCachesOf(allocators: Allocators, record: DeviceRecord): OwnCaches {
  return {
    trim(): void {
      allocators.existing(record)?.drain();
      existingTransfers(record.device)?.trim();
    },
    cachedBytes(): number {
      const a = allocators.existing(record);
      return (
        (a?.cache.bytes ?? 0) +
        (a?.throttle.stats().lazyBytes ?? 0) +
        (existingTransfers(record.device)?.keptBytes ?? 0)
      );
    },
  };
}

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
