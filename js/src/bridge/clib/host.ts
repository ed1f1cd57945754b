/**
 * The JS side of `wdl_host_table`: functions C calls to reach the page-wide
 * WebDLPackContext and the tensor handle table. GPU memory C asks for comes
 * from the context's allocator (`allocWebGPU`, synchronous), so it is cached, counted
 * per owner and listed in the ledger like every other allocation, and
 * `gpu_free` gives it back through `freeWebGPU`. None of them throws into C:
 * each catches, keeps the error for `last_error`, and returns the failure value.
 */
import type { WebDLPackContext } from "../../context/index.js";
import type { WebDLPackError } from "../../errors.js";
import { GPU_BUFFER_INFO_LAYOUT as INFO, type HostFunctions } from "./abi.js";
import { hostErrorOf, type HostError } from "./errors.js";
import type { TensorHandleTable } from "./handles.js";
import { heapView, writeCString, type HeapSource } from "./memory.js";

/** Default owner recorded in the pointer table, the stats and the ledger for buffers the C library allocates. */
export const CLIB_OWNER = "c";

/** What the host functions need. */
export interface HostDeps {
  /** The context C's GPU calls go to (read on every call). */
  context: () => WebDLPackContext;
  /** The heap C's out-pointers point into. */
  heap: HeapSource;
  /** Handles for tensors in flight between C and JS. */
  handles: TensorHandleTable;
  /** Owner name of C's allocations in the context (default {@link CLIB_OWNER}). */
  owner?: string;
  /**
   * Called when WebGPU reports, after gpu_alloc already returned, that the
   * buffer could not be made (the error scopes resolve asynchronously).
   */
  onAsyncGpuError: (error: WebDLPackError, ptr: number) => void;
}

/** The host functions plus access to the last error they caught. */
export interface HostImpl extends HostFunctions {
  /** The most recent error a host function caught (undefined if none yet). */
  lastHostError(): HostError | undefined;
}

/** Build the functions a `wdl_host_table` points to. */
export function makeHostFunctions(deps: HostDeps): HostImpl {
  let last: HostError | undefined;
  const guard = <T>(failure: T, body: () => T): T => {
    try {
      return body();
    } catch (err) {
      last = hostErrorOf(err);
      return failure;
    }
  };

  const allocate = (deviceId: number, nbytes: number, usage: number): number => {
    const owner = deps.owner ?? CLIB_OWNER;
    // Through the context's allocator: the caching modes, the stats per owner and
    // the ledger see C's buffers like any other; the context checks size, usage and device.
    return (
      deps.context().allocWebGPU(nbytes, {
        deviceId,
        ...(usage === 0 ? {} : { usage }),
        owner,
        label: `${owner} ${nbytes} B`,
        scoped: false, // C frees it (wdl_webgpu_free): a JS ctx.scope() open right now must not
        onAsyncError: (error, p) => deps.onAsyncGpuError(error, p >>> 0),
      }) >>> 0
    );
  };

  return {
    gpu_alloc: (deviceId, lo, hi, usage) =>
      guard(0, () => allocate(deviceId, (hi >>> 0) * 2 ** 32 + (lo >>> 0), usage >>> 0)),

    gpu_free: (ptr) =>
      guard(-1, () => {
        deps.context().freeWebGPU(ptr >>> 0);
        return 0;
      }),

    gpu_query: (ptr, out) =>
      guard(-1, () => {
        const info = deps.context().gpuPointerInfo(ptr >>> 0);
        const view = heapView(deps.heap);
        const at = out >>> 0;
        view.setBigUint64(at + INFO.nbytes, BigInt(info.requestedSize), true);
        view.setBigUint64(at + INFO.allocated_nbytes, BigInt(info.size), true);
        view.setInt32(at + INFO.device_id, info.deviceId, true);
        view.setUint32(at + INFO.usage, info.usage >>> 0, true);
        view.setUint32(at + INFO.owned, info.owned ? 1 : 0, true);
        view.setUint32(at + INFO.reserved, 0, true);
        return 0;
      }),

    tensor_to_js: (managed) => guard(0, () => deps.handles.put(managed >>> 0)),

    tensor_from_js: (handle) => guard(0, () => deps.handles.take(handle)),

    last_error: (buf, cap) => {
      const err = last ?? { code: 25, message: "[GPU_ERROR] the host reported no error" };
      try {
        writeCString(deps.heap, buf, cap, err.message);
      } catch {
        /* a bad buffer from C must not throw into C */
      }
      return err.code;
    },

    lastHostError: () => last,
  };
}
