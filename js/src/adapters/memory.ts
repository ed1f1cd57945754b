/**
 * What each framework can give back when the page's GPU memory is short: the
 * adapters register one memory-pressure handler per framework with the
 * context (`ctx.onMemoryPressure`), using the framework's public surface only.
 * docs/memory.md has the table; in short:
 *
 * - TF.js (tfjs-backend-webgpu 4.x): its buffer manager keeps released buffers
 *   in `backend.bufferManager.freeBuffers` for reuse. The handler destroys those
 *   free buffers and corrects the manager's counts (`numFreeBuffers`,
 *   `numBytesAllocated`), so `tf.memory().numBytesAllocatedInGPU` stays right.
 *   Free buffers are never used by TF.js's recorded, unsubmitted work (a tensor
 *   disposed while its buffer is in that work waits in `tensorDataPendingDisposal`
 *   until the submit), so destroying them is safe at any moment. The handler first
 *   has the libraries on the device submit what they recorded, as a transfer does
 *   (context/transfers/queue-users.ts: TF.js's open compute pass ended, then
 *   submitted), so the buffers TF.js's submit releases can go too — never when the
 *   pressure comes from TF.js's own `createBuffer` (mid-op, a pass open and a
 *   program half recorded): queue-users.ts skips it then. Cached bytes:
 *   `numBytesAllocated - numBytesUsed`. Live tensors are never touched.
 * - ONNX Runtime Web 1.30 (native WebGPU EP) and Transformers.js (its ORT):
 *   no public call trims the buffer cache of a live session; the session option
 *   `storageBufferCacheMode: "disabled"` (or "lazyRelease") keeps ORT from
 *   caching, and `session.release()` gives a session's buffers back. Their
 *   buffers are counted (through their device guards) and they are asked nothing.
 * - LiteRT.js 2.5: no public API for its buffer pool; `tensor.delete()` and
 *   `model.delete()` free what the page holds. Counted, asked nothing.
 * - tvmjs (@mlc-ai/web-runtime 0.27): its VM's pooled allocator keeps freed
 *   buffers for reuse; TVM's global function `vm.builtin.memory_manager.clear`
 *   frees every pooled buffer no tensor uses (through tvmjs's device API, which
 *   submits its recorded work first). The handler calls it, then, if more is
 *   needed, destroys the idle MAP_READ staging buffers tvmjs keeps for its
 *   readbacks (`webGPUContext.readStagingBufferPool`, up to 4). tvmjs does not
 *   say how many bytes its VM pool holds (cached bytes: null).
 */
import { type MemoryPressure, unwrapDevice, type WebDLPackContext } from "../context/index.js";
import { flushQueueUsers } from "../context/transfers/queue-users.js";
import type { TfjsWebGPUBackendInternals } from "./framework-types.js";
import { TFJS_OWNER } from "./producer.js";

/** The free-buffer pool of TF.js's WebGPU buffer manager (tfjs-backend-webgpu 4.x). */
interface TfjsBufferManagerLike {
  freeBuffers: Map<string, GPUBuffer[]>;
  numFreeBuffers: number;
  numBytesAllocated: number;
  numBytesUsed: number;
}

/** Per context: the unregister function of each framework owner's current registration. */
const registered = new WeakMap<object, Map<string, () => void>>();

/** Register `owner`'s pressure handler and cached-bytes report with `ctx`, replacing an earlier one (a re-bound framework). */
function registerFramework(
  ctx: WebDLPackContext,
  owner: string,
  handler: ((pressure: MemoryPressure) => void) | null,
  cachedBytes: () => number | null,
): void {
  if (typeof ctx.onMemoryPressure !== "function") return; // a context of protocol < 1.3: no memory room
  let byOwner = registered.get(ctx);
  if (byOwner === undefined) {
    byOwner = new Map();
    registered.set(ctx, byOwner);
  }
  byOwner.get(owner)?.();
  byOwner.set(owner, ctx.onMemoryPressure(handler, { owner, cachedBytes }));
}

/** Remove `owner`'s registration with `ctx` (its framework is gone). */
function unregisterFramework(ctx: WebDLPackContext, owner: string): void {
  const byOwner = registered.get(ctx);
  byOwner?.get(owner)?.();
  byOwner?.delete(owner);
}

/** The buffer manager of `backend` if it has the 4.x shape, else undefined. */
function bufferManagerOf(backend: TfjsWebGPUBackendInternals): TfjsBufferManagerLike | undefined {
  const m = (backend as { bufferManager?: Partial<TfjsBufferManagerLike> }).bufferManager;
  if (m === undefined || !(m.freeBuffers instanceof Map)) return undefined;
  if (typeof m.numBytesAllocated !== "number" || typeof m.numBytesUsed !== "number") return undefined;
  return m as TfjsBufferManagerLike;
}

/**
 * Destroy free buffers TF.js keeps for reuse, largest first, until `bytesToFree` are given back (default: all
 * of them); returns the bytes given back. What the libraries on the device recorded is submitted first (TF.js
 * not while inside one of its own ops: queue-users.ts), so the buffers TF.js's submit releases can go too.
 */
export function trimTfjsBuffers(backend: TfjsWebGPUBackendInternals, bytesToFree = Infinity): number {
  const manager = bufferManagerOf(backend);
  if (manager === undefined) return 0;
  if (backend.device !== undefined) flushQueueUsers(unwrapDevice(backend.device));
  let freed = 0;
  // Keys stay: TF.js's releaseBuffer pushes onto the list of the key its acquireBuffer made.
  const lists = [...manager.freeBuffers.values()].filter((l) => l.length > 0);
  lists.sort((a, b) => b[0]!.size - a[0]!.size);
  for (const list of lists) {
    while (list.length > 0 && freed < bytesToFree) {
      const buffer = list.pop()!;
      freed += buffer.size;
      manager.numBytesAllocated -= buffer.size;
      manager.numFreeBuffers -= 1;
      buffer.destroy();
    }
  }
  return freed;
}

/** Bytes TF.js keeps free for reuse (null when the backend's buffer manager has another shape). */
export function tfjsCachedBytes(backend: TfjsWebGPUBackendInternals): number | null {
  const manager = bufferManagerOf(backend);
  return manager === undefined ? null : Math.max(0, manager.numBytesAllocated - manager.numBytesUsed);
}

/** Let `ctx` count TF.js's cached bytes and trim them under memory pressure (registerTfjsWebGPUBackend calls this). */
export function watchTfjsMemory(ctx: WebDLPackContext, backend: TfjsWebGPUBackendInternals): void {
  const handler = (pressure: MemoryPressure): void => void trimTfjsBuffers(backend, pressure.bytesToFree);
  registerFramework(ctx, TFJS_OWNER, handler, () => tfjsCachedBytes(backend));
}

/** The part of a tvmjs Instance the memory handler uses (its public API, and its WebGPU context's pools). */
export interface TvmMemoryLike {
  withNewScope<T>(action: () => T): T;
  getGlobalFunc(name: string): (...args: unknown[]) => unknown;
  lib?: {
    webGPUContext?: {
      /** Bytes of the buffers tvmjs's device API allocated and has not freed. */
      currAllocatedBytes?: number;
      /** Idle MAP_READ staging buffers kept for readbacks (unmapped; taken out of the list while in use). */
      readStagingBufferPool?: { buffer: GPUBuffer; size: number }[];
    };
  };
}

/**
 * Free what tvmjs keeps for reuse: its VM's pooled buffers no tensor uses (`vm.builtin.memory_manager.clear`),
 * then, until `bytesToFree` are given back (default: all), its idle read staging buffers, largest first.
 * Returns the bytes given back as far as tvmjs counts them.
 */
export function trimTvmBuffers(tvm: TvmMemoryLike, bytesToFree = Infinity): number {
  const gpu = tvm.lib?.webGPUContext;
  const before = gpu?.currAllocatedBytes ?? 0;
  tvm.withNewScope(() => void tvm.getGlobalFunc("vm.builtin.memory_manager.clear")());
  let freed = Math.max(0, before - (gpu?.currAllocatedBytes ?? 0));
  const staging = gpu?.readStagingBufferPool;
  if (Array.isArray(staging)) {
    staging.sort((a, b) => a.size - b.size);
    while (staging.length > 0 && freed < bytesToFree) {
      const entry = staging.pop()!;
      freed += entry.buffer.size;
      entry.buffer.destroy();
    }
  }
  return freed;
}

/**
 * Let `ctx` ask tvmjs to free its VM's pooled buffers and idle staging under memory pressure (bindTvmToContext
 * calls this). Once `disposed()` says tvmjs's `dispose()` ran, the registration removes itself and calls nothing.
 */
export function watchTvmMemory(
  ctx: WebDLPackContext,
  tvm: TvmMemoryLike,
  owner: string,
  disposed: () => boolean = () => false,
): void {
  const handler = (pressure: MemoryPressure): void => {
    if (disposed()) {
      unregisterFramework(ctx, owner);
      return;
    }
    trimTvmBuffers(tvm, pressure.bytesToFree);
  };
  registerFramework(ctx, owner, handler, () => null);
}
